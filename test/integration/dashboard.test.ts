import { beforeAll, expect, it } from 'vitest';
import { dashboardHelpers, PASSWORD, Visitor } from '../helpers/dashboard-visitor.js';
import { basicAuth, createHarness, describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { FILES, proprietorBody, uploadDocument } from '../helpers/onboarding.js';

/**
 * The dashboard's access rules: login, the session cookie, CSRF refusals, the login throttle, 404s
 * across tenants and modes, keys, a partner's merchants, session expiry, and no secret on any page.
 */
describeEachDatabase('dashboard', (harness) => {
  let merchant: TestAccount;
  let other: TestAccount;
  let partner: TestAccount;
  let email: string;
  const { userFor, signedIn, captured } = dashboardHelpers(harness, () => ({ merchant, email }));

  beforeAll(async () => {
    partner = await harness().partner('Dashboard Partner');
    merchant = await harness().merchant('Dashboard Shop');
    other = await harness().merchant('Other Shop');
    email = await userFor(merchant);
  });

  it('logs in with email and password: an HttpOnly, SameSite=Strict session cookie, the account and its mode on every page', async () => {
    const visitor = new Visitor(harness);
    const anonymous = await visitor.request('GET', '/dashboard/payments/');
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe('/dashboard/login/');

    const form = await visitor.request('GET', '/dashboard/login/');
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('name="email"');
    expect(form.body).toContain('name="password"');
    expect(form.headers['content-security-policy']).toContain("default-src 'none'");
    expect(form.headers['content-security-policy']).not.toMatch(/script-src|unsafe-inline/);

    const response = await visitor.login(email.toUpperCase());
    expect(response.statusCode, response.body).toBe(303);
    const cookie = [response.headers['set-cookie']].flat().find((line) => line?.startsWith('kosh_session='));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Path=\/dashboard\//);
    expect(cookie).not.toMatch(/Secure/); // http://localhost: Secure only behind https

    const home = await visitor.request('GET', '/dashboard/');
    expect(home.statusCode).toBe(200);
    expect(home.body).toContain(merchant.id);
    expect(home.body).toContain('data-mode="test"');
    // The session is stored hashed: the cookie's token is nowhere in the database.
    const token = visitor.cookies.get('kosh_session') as string;
    const [stored] = await harness().container.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM dashboard_sessions WHERE encode(token_hash, 'escape') LIKE '%' || $1 || '%'",
      [token],
    );
    expect(stored!.n).toBe('0');
  });

  it('refuses a wrong password or an unknown email with the same answer, and a login form without its CSRF token', async () => {
    const visitor = new Visitor(harness, '192.0.2.50');
    const wrong = await visitor.login(email, 'not the password at all');
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('The email or the password is wrong.');
    const unknown = await visitor.login('nobody@shop.example');
    expect(unknown.statusCode).toBe(401);
    expect(unknown.body).toContain('The email or the password is wrong.');
    expect(visitor.cookies.has('kosh_session')).toBe(false);

    const forged = new Visitor(harness, '192.0.2.51');
    await forged.request('GET', '/dashboard/login/');
    const response = await forged.request('POST', '/dashboard/login/', {
      csrf: 'x'.repeat(32),
      email,
      password: PASSWORD,
    });
    expect(response.statusCode).toBe(400);
    expect(forged.cookies.has('kosh_session')).toBe(false);
  });

  it('throttles an address after 20 wrong passwords: the right one is refused too, other addresses are not', async () => {
    const guesser = new Visitor(harness, '192.0.2.99');
    for (let i = 0; i < 20; i++)
      expect((await guesser.login(email, `guess number ${i}`)).statusCode).toBe(401);
    const blocked = await guesser.login(email);
    expect(blocked.statusCode).toBe(429);
    expect(guesser.cookies.has('kosh_session')).toBe(false);
    expect((await new Visitor(harness, '192.0.2.100').login(email)).statusCode).toBe(303);
    // The window passes: the address may try again.
    harness().clock.advance(16 * 60_000);
    expect((await guesser.login(email)).statusCode).toBe(303);
  });

  it('checks no more than 20 passwords from an address, however many are sent at once', async () => {
    const guesser = new Visitor(harness, '192.0.2.98');
    await guesser.request('GET', '/dashboard/login/');
    // One login page's token, many guesses in parallel (as a script would send them).
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        guesser.request('POST', '/dashboard/login/', {
          csrf: guesser.csrf,
          email,
          password: `parallel guess ${i}`,
        }),
      ),
    );
    const codes = answers.map((answer) => answer.statusCode);
    let checked = codes.filter((code) => code === 401).length;
    expect(checked).toBeLessThanOrEqual(20);
    expect(codes.filter((code) => code === 429).length).toBe(30 - checked);
    // One at a time, the guesses still checked make twenty in all; then the right password is
    // refused too.
    while ((await guesser.login(email, `one more guess ${checked}`)).statusCode === 401) checked += 1;
    expect(checked).toBe(20);
    expect((await guesser.login(email)).statusCode).toBe(429);
  });

  it('refuses every state-changing request without a valid CSRF token, and changes nothing', async () => {
    const visitor = await signedIn();
    const { paymentId } = await captured();
    await visitor.request('GET', '/dashboard/');
    const attempts: [string, Record<string, unknown>][] = [
      ['/dashboard/mode/', { mode: 'live' }],
      [`/dashboard/payments/${paymentId}/refunds/`, { amount: 100 }],
      [`/dashboard/keys/${merchant.credentials.api_key}/revoke/`, {}],
      ['/dashboard/keys/', {}],
      ['/dashboard/webhooks/', { url: 'https://hooks.example.com/k' }],
      ['/dashboard/logout/', {}],
    ];
    for (const [action, fields] of attempts) {
      for (const csrf of [undefined, '', 'forged-token', visitor.csrf.slice(0, -1)]) {
        const response = await visitor.request(
          'POST',
          action,
          csrf === undefined ? fields : { ...fields, csrf },
        );
        expect(response.statusCode, `${action} csrf=${csrf}`).toBe(400);
      }
    }
    const payment = await harness().request('GET', `/v1/payments/${paymentId}/`, { auth: merchant });
    expect(payment.json().data.amount_refunded).toBe(0);
    expect((await harness().request('GET', '/v1/payments/methods/', { auth: merchant })).statusCode).toBe(
      200,
    );
    const keys = await harness().request('GET', '/v1/keys/', { auth: merchant });
    expect(keys.json().data).toHaveLength(1);
    const hooks = await harness().request('GET', '/v1/webhooks/', { auth: merchant });
    expect(hooks.json().data).toHaveLength(0);
    expect((await visitor.request('GET', '/dashboard/')).body).toContain('data-mode="test"');
  });

  it('answers 404 for another tenant’s payment, order, refund and merchant, and for the other mode’s data', async () => {
    const visitor = await signedIn();
    const theirs = await captured(other, { email: 'their.customer@other.example', name: 'Their Customer' });
    const refund = await harness().request('POST', `/v1/payments/${theirs.paymentId}/refunds/`, {
      auth: other,
      json: {},
    });
    for (const path of [
      `/dashboard/payments/${theirs.paymentId}/`,
      `/dashboard/orders/${theirs.orderId}/`,
      `/dashboard/refunds/${refund.json().data.id}/`,
      `/dashboard/merchants/${other.id}/`,
    ]) {
      const response = await visitor.request('GET', path);
      expect(response.statusCode, path).toBe(404);
      expect(response.body).not.toContain('their.customer@other.example');
      expect(response.body).not.toContain('Their Customer');
    }
    await visitor.request('GET', '/dashboard/');
    const attempt = await visitor.request('POST', `/dashboard/payments/${theirs.paymentId}/refunds/`, {
      csrf: visitor.csrf,
      amount: 1,
    });
    expect(attempt.statusCode).toBe(404);
    const csv = await visitor.request('GET', `/dashboard/payments/export.csv?q=${theirs.paymentId}`);
    expect(csv.body).not.toContain(theirs.paymentId);

    // A test-mode payment is not there in live mode.
    const mine = await captured();
    const switched = await visitor.submit('/dashboard/', '/dashboard/mode/', { mode: 'live' });
    expect(switched.statusCode).toBe(303);
    const home = await visitor.request('GET', '/dashboard/');
    expect(home.body).toContain('data-mode="live"');
    expect((await visitor.request('GET', `/dashboard/payments/${mine.paymentId}/`)).statusCode).toBe(404);
    expect((await visitor.request('GET', '/dashboard/payments/')).body).not.toContain(mine.paymentId);
  });

  it('rolls a key with an overlap (the old one works until it ends) and revokes one at once; secrets appear only when issued', async () => {
    const shop = await harness().merchant('Key Shop');
    const visitor = await signedIn(shop);
    const status = async (auth: string) =>
      (await harness().request('GET', '/v1/payments/methods/', { auth })).statusCode;
    const keys = await visitor.request('GET', '/dashboard/keys/');
    expect(keys.body).toContain(shop.credentials.api_key);
    expect(keys.body).not.toContain(shop.credentials.secret_key);

    const rolled = await visitor.request('POST', `/dashboard/keys/${shop.credentials.api_key}/roll/`, {
      ...visitor.formFields(`/dashboard/keys/${shop.credentials.api_key}/roll/`),
      overlap_seconds: 600,
    });
    expect(rolled.statusCode, rolled.body).toBe(200);
    const secret = /data-secret>(sk_test_[^<]+)</.exec(rolled.body)?.[1] as string;
    const apiKey = /Key rolled: (key_test_\w+)/.exec(rolled.body)?.[1] as string;
    const fresh = basicAuth({ api_key: apiKey, secret_key: secret });
    expect(await status(fresh)).toBe(200);
    expect(await status(shop.auth)).toBe(200);
    // Shown once: the next page has no secret.
    const again = await visitor.request('GET', '/dashboard/keys/');
    expect(again.body).not.toContain(secret);
    expect(again.body).toContain('expiring');
    harness().clock.advance(601_000);
    expect(await status(shop.auth)).toBe(401);
    await visitor.request('GET', '/dashboard/keys/');

    const revoked = await visitor.request('POST', `/dashboard/keys/${apiKey}/revoke/`, {
      csrf: visitor.csrf,
    });
    expect(revoked.statusCode).toBe(303);
    expect(await status(fresh)).toBe(401);
  });

  it('makes one key, one endpoint and one rotation per rendering of their forms, and shows the one secret made to every post', async () => {
    const shop = await harness().merchant('Double Click Shop');
    const visitor = await signedIn(shop);
    const keys = async () =>
      (await harness().request('GET', '/v1/keys/', { auth: shop })).json().data as { api_key: string }[];
    const secretOf = (body: string) => /data-secret>((?:sk_test|whsec)_[^<]+)</.exec(body)?.[1];
    // Posted several times at once, and once more after the answers: each answer shows the same key.
    const posts = async (page: string, action: string, fields: Record<string, unknown> = {}) => {
      expect((await visitor.request('GET', page)).statusCode).toBe(200);
      const rendered = { ...visitor.formFields(action), ...fields };
      const answers = await Promise.all(
        Array.from({ length: 3 }, () => visitor.request('POST', action, rendered)),
      );
      answers.push(await visitor.request('POST', action, rendered));
      for (const answer of answers) expect(answer.statusCode, answer.body).toBe(200);
      const shown = new Set(answers.map((answer) => secretOf(answer.body)));
      expect(shown.size).toBe(1);
      return [...shown][0] as string;
    };

    const created = await posts('/dashboard/keys/', '/dashboard/keys/');
    expect(await keys()).toHaveLength(2);
    const made = (await keys()).find((key) => key.api_key !== shop.credentials.api_key) as {
      api_key: string;
    };
    const fresh = basicAuth({ api_key: made.api_key, secret_key: created });
    expect((await harness().request('GET', '/v1/payments/methods/', { auth: fresh })).statusCode).toBe(200);

    const roll = `/dashboard/keys/${made.api_key}/roll/`;
    const rolled = await posts('/dashboard/keys/', roll, { overlap_seconds: 0 });
    expect(await keys()).toHaveLength(3);
    const newest = (await keys()).find(
      (key) => ![shop.credentials.api_key, made.api_key].includes(key.api_key),
    );
    const rolledAuth = basicAuth({ api_key: newest?.api_key as string, secret_key: rolled });
    expect((await harness().request('GET', '/v1/payments/methods/', { auth: rolledAuth })).statusCode).toBe(
      200,
    );

    const hooks = async () =>
      (await harness().request('GET', '/v1/webhooks/', { auth: shop })).json().data as { id: string }[];
    const secret = await posts('/dashboard/webhooks/', '/dashboard/webhooks/', {
      url: 'http://127.0.0.1:9/double-click',
    });
    expect(secret).toMatch(/^whsec_/);
    expect(await hooks()).toHaveLength(1);
    const [endpoint] = await hooks();
    const rotated = await posts('/dashboard/webhooks/', `/dashboard/webhooks/${endpoint?.id}/rotate/`);
    // Every post showed the same new secret: each rotation would have shown its own.
    expect(rotated).not.toBe(secret);
    expect(rotated).toMatch(/^whsec_/);

    // A form rendered before forms had a key: refused, and nothing is made.
    const stale = await visitor.request('POST', '/dashboard/keys/', { csrf: visitor.csrf });
    expect(stale.statusCode).toBe(400);
    expect(stale.body).toContain('This form is out of date');
    expect(await keys()).toHaveLength(3);
  });

  it('shows a partner its own merchants and none of another partner’s', async () => {
    const mine = await harness().request('POST', '/v1/api-portal/merchants/', {
      auth: partner,
      json: proprietorBody(),
    });
    const rival = await harness().partner('Rival Partner');
    const visitor = await signedIn(partner);
    expect(mine.statusCode, mine.body).toBe(200);
    const id = mine.json().data.id as string;
    const list = await visitor.request('GET', '/dashboard/');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(id);
    const detail = await visitor.request('GET', `/dashboard/merchants/${id}/`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain(mine.json().data.display_name);
    const rivalVisitor = await signedIn(rival);
    expect((await rivalVisitor.request('GET', '/dashboard/')).body).not.toContain(id);
    const refused = await rivalVisitor.request('GET', `/dashboard/merchants/${id}/`);
    expect(refused.statusCode).toBe(404);
    expect(refused.body).not.toContain(mine.json().data.display_name);
    // A KYC document's file downloads from the merchant's page, for its partner only.
    const uploaded = await uploadDocument(harness(), partner, id, 'pan', {
      content: FILES.png,
      filename: 'pan.png',
    });
    expect(uploaded.statusCode, uploaded.body).toBe(200);
    const documentId = uploaded.json().data.id as string;
    const file = `/dashboard/merchants/${id}/documents/${documentId}/file`;
    expect((await visitor.request('GET', `/dashboard/merchants/${id}/`)).body).toContain(
      `<a href="${file}" download>pan.png</a>`,
    );
    const downloaded = await visitor.request('GET', file);
    expect(downloaded.statusCode).toBe(200);
    expect(downloaded.headers['content-type']).toBe('image/png');
    expect(downloaded.headers['content-disposition']).toBe(`attachment; filename="${documentId}.png"`);
    expect(downloaded.rawPayload).toEqual(FILES.png);
    expect((await rivalVisitor.request('GET', file)).statusCode).toBe(404);
    // Merchant pages are not a partner's.
    expect((await visitor.request('GET', '/dashboard/payments/')).statusCode).toBe(404);
  });

  it('pages a merchant’s VPAs past the first 100 on its partner’s page', async () => {
    const made = await harness().request('POST', '/v1/api-portal/merchants/', {
      auth: partner,
      json: proprietorBody(),
    });
    expect(made.statusCode, made.body).toBe(200);
    const id = made.json().data.id as string;
    for (let start = 0; start < 101; start += 10) {
      const batch = Array.from({ length: Math.min(10, 101 - start) }, () =>
        harness().request('POST', `/v1/api-portal/generate-vpa/${id}/`, { auth: partner }),
      );
      for (const answer of await Promise.all(batch)) expect(answer.statusCode, answer.body).toBe(200);
    }
    const visitor = await signedIn(partner);
    const vpasOn = (body: string) => new Set(body.match(/vpa_[A-Za-z0-9]+/g));
    const first = await visitor.request('GET', `/dashboard/merchants/${id}/`);
    expect(vpasOn(first.body).size).toBe(100);
    const next = /href="([^"]+)">More VPAs</.exec(first.body)?.[1]?.replaceAll('&amp;', '&') as string;
    expect(next).toMatch(new RegExp(`^/dashboard/merchants/${id}/\\?vpas_cursor=`));
    const second = await visitor.request('GET', next);
    expect(second.statusCode, second.body).toBe(200);
    expect(vpasOn(second.body).size).toBe(1);
    expect(second.body).not.toContain('More VPAs');
    expect(new Set([...vpasOn(first.body), ...vpasOn(second.body)]).size).toBe(101);
    // A cursor that is not one: a clear refusal.
    const bad = await visitor.request('GET', `/dashboard/merchants/${id}/?vpas_cursor=nonsense`);
    expect(bad.statusCode).toBe(400);
  });

  it('ends a session when idle, and at logout', async () => {
    const visitor = await signedIn();
    harness().clock.advance(29 * 60_000);
    expect((await visitor.request('GET', '/dashboard/')).statusCode).toBe(200);
    harness().clock.advance(31 * 60_000);
    const expired = await visitor.request('GET', '/dashboard/');
    expect(expired.statusCode).toBe(303);
    expect(expired.headers.location).toBe('/dashboard/login/');

    const another = await signedIn();
    const token = another.cookies.get('kosh_session') as string;
    const out = await another.submit('/dashboard/', '/dashboard/logout/');
    expect(out.statusCode).toBe(303);
    const replay = new Visitor(harness);
    replay.cookies.set('kosh_session', token);
    expect((await replay.request('GET', '/dashboard/')).statusCode).toBe(303);
  });

  it('shows no secret on any page: API secret keys and webhook secrets appear only in the answer that issued them', async () => {
    const shop = await harness().merchant('Secret Shop');
    const visitor = await signedIn(shop);
    const endpoint = await harness().request('POST', '/v1/webhooks/', {
      auth: shop,
      json: { url: 'http://127.0.0.1:9/secret-shop' },
    });
    expect(endpoint.statusCode, endpoint.body).toBe(200);
    const secrets = [shop.credentials.secret_key, endpoint.json().data.secret as string];
    const { paymentId, orderId } = await captured(shop);
    const pages = [
      '/dashboard/',
      '/dashboard/payments/',
      `/dashboard/payments/${paymentId}/`,
      '/dashboard/orders/',
      `/dashboard/orders/${orderId}/`,
      '/dashboard/refunds/',
      '/dashboard/webhooks/',
      '/dashboard/keys/',
      '/dashboard/settings/',
      '/dashboard/payments/export.csv',
    ];
    for (const path of pages) {
      const response = await visitor.request('GET', path);
      expect(response.statusCode, path).toBe(200);
      for (const secret of secrets) expect(response.body, path).not.toContain(secret);
      expect(response.body, path).not.toMatch(/sk_(test|live)_|whsec_/);
    }
  });

  it('marks the session cookie Secure when Kosh is served over https', async () => {
    const secure = await createHarness(harness().kind, { KOSH_PUBLIC_URL: 'https://pay.example' });
    try {
      const shop = await secure.merchant('Https Shop');
      await secure.container.services.dashboardUsers.createUser({
        accountId: shop.id,
        email: 'owner@https.example',
        password: PASSWORD,
      });
      const visitor = new Visitor(() => secure);
      const response = await visitor.login('owner@https.example');
      expect(response.statusCode).toBe(303);
      const cookies = [response.headers['set-cookie']].flat();
      expect(cookies.find((line) => line?.startsWith('kosh_session='))).toMatch(
        /; HttpOnly; SameSite=Strict; Secure$/,
      );
    } finally {
      await secure.close();
    }
  });
});
