import type { LightMyRequestResponse } from 'fastify';
import qs from 'qs';
import { beforeAll, expect, it } from 'vitest';
import { upiMethods } from '../../src/modules/methods/methods.js';
import { CUSTOMER, checkoutHelpers } from '../helpers/checkout.js';
import {
  basicAuth,
  createHarness,
  describeEachDatabase,
  type Harness,
  type TestAccount,
} from '../helpers/harness.js';
import { FILES, proprietorBody, uploadDocument } from '../helpers/onboarding.js';
import { choose, createOrder, createPayment, openPage } from '../helpers/payments.js';
import { drain } from '../helpers/webhook-events.js';

const PASSWORD = 'correct horse battery staple';

/**
 * A dashboard visitor without a browser: keeps its cookies, reads each page's CSRF token, follows
 * nothing by itself. The browser tests (test/browser/dashboard.browser.test.ts) drive Chromium.
 */
class Visitor {
  cookies = new Map<string, string>();
  lastPage = '';

  constructor(
    private readonly harness: () => Harness,
    readonly address = '203.0.113.7',
  ) {}

  private remember(response: LightMyRequestResponse): void {
    const header = response.headers['set-cookie'];
    for (const line of [header ?? []].flat()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = decodeURIComponent(pair!.slice(at + 1));
      if (/Max-Age=0/.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(method: 'GET' | 'POST', url: string, form?: Record<string, unknown>) {
    const headers: Record<string, string> = {};
    if (this.cookies.size) {
      headers.cookie = [...this.cookies]
        .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
        .join('; ');
    }
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await this.harness().app.inject({
      method,
      url,
      headers,
      payload: form ? qs.stringify(form) : undefined,
      remoteAddress: this.address,
    });
    this.remember(response);
    if (response.statusCode === 200 && response.headers['content-type']?.toString().startsWith('text/html')) {
      this.lastPage = response.body;
    }
    return response;
  }

  get csrf(): string {
    const token = /name="csrf" value="([^"]+)"/.exec(this.lastPage)?.[1];
    expect(token, 'a CSRF field on the last page').toBeDefined();
    return token as string;
  }

  async login(email: string, password = PASSWORD) {
    await this.request('GET', '/dashboard/login/');
    return this.request('POST', '/dashboard/login/', { csrf: this.csrf, email, password });
  }

  /** A signed-in form post, with the CSRF token of `page` (fetched first). */
  async submit(page: string, action: string, fields: Record<string, unknown> = {}) {
    const opened = await this.request('GET', page);
    expect(opened.statusCode, opened.body).toBe(200);
    return this.request('POST', action, { csrf: this.csrf, ...fields });
  }
}

describeEachDatabase('dashboard', (harness) => {
  let merchant: TestAccount;
  let other: TestAccount;
  let partner: TestAccount;
  let email: string;
  let counter = 0;

  async function userFor(account: TestAccount): Promise<string> {
    const address = `user${++counter}-${account.id}@shop.example`;
    await harness().container.services.dashboardUsers.createUser({
      accountId: account.id,
      email: address,
      password: PASSWORD,
    });
    return address;
  }

  async function signedIn(account: TestAccount = merchant): Promise<Visitor> {
    const visitor = new Visitor(harness, `198.51.100.${++counter}`);
    const response = await visitor.login(account === merchant ? email : await userFor(account));
    expect(response.statusCode, response.body).toBe(303);
    return visitor;
  }

  async function captured(account = merchant, overrides: Record<string, unknown> = {}) {
    const orderId = await createOrder(harness(), account, 5000);
    const { paymentId } = await createPayment(harness(), account, overrides, orderId);
    const chosen = await choose(harness(), paymentId, await openPage(harness(), paymentId), 'success');
    expect(chosen.statusCode).toBe(200);
    return { paymentId, orderId };
  }

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

  it('lists payments with filters and search, pages through them, and exports the filtered list as the API lists it', async () => {
    const shop = await harness().merchant('Filter Shop');
    const visitor = await signedIn(shop);
    const made: string[] = [];
    for (let i = 0; i < 3; i++)
      made.push((await captured(shop, { email: `buyer${i}@example.com` })).paymentId);
    const walletPayment = (
      await createPayment(harness(), shop, { method: 'wallet', bank: undefined, wallet: 'PAYZAPP' })
    ).paymentId;

    const all = await visitor.request('GET', '/dashboard/payments/');
    for (const id of [...made, walletPayment]) expect(all.body).toContain(id);
    const capturedOnly = await visitor.request(
      'GET',
      '/dashboard/payments/?status=captured&method=netbanking',
    );
    expect(capturedOnly.body).not.toContain(walletPayment);
    for (const id of made) expect(capturedOnly.body).toContain(id);
    const byEmail = await visitor.request('GET', '/dashboard/payments/?q=buyer1%40example.com');
    expect(byEmail.body).toContain(made[1]);
    expect(byEmail.body).not.toContain(made[0]);
    const byId = await visitor.request('GET', `/dashboard/payments/?q=${made[2]}`);
    expect(byId.body).toContain(made[2]);
    expect(byId.body).not.toContain(made[0]);
    const byWallet = await visitor.request('GET', '/dashboard/payments/?wallet=PAYZAPP');
    expect(byWallet.body).toContain(walletPayment);
    expect(byWallet.body).not.toContain(made[0]);
    const bad = await visitor.request('GET', '/dashboard/payments/?status=paid');
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toMatch(/^text\/html/);

    const csv = await visitor.request('GET', '/dashboard/payments/export.csv?status=captured');
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const api = await harness().request('GET', '/v1/payments/?status=captured&limit=100', { auth: shop });
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toMatch(/^id,order_id,amount,currency,status/);
    expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual(
      api.json().data.map((payment: { id: string }) => payment.id),
    );
    expect(lines.slice(1).map((line) => line.split(',')[2])).toEqual(
      api.json().data.map((payment: { amount: number }) => String(payment.amount)),
    );
  });

  it('filters UPI payments and shows their flow and masked UPI id, never the whole id', async () => {
    const shop = await harness().merchant('UPI Shop');
    const { methods } = harness().container.services;
    const current = await methods.get(shop.id, 'test');
    await methods.set(harness().container.db, shop.id, 'test', { ...current, upi: upiMethods(true, true) });
    const visitor = await signedIn(shop);
    const netbanking = (await captured(shop)).paymentId;
    const upi = { method: 'upi', bank: undefined, return_url: undefined };
    const intent = (await createPayment(harness(), shop, { ...upi, upi: { flow: 'intent' } })).paymentId;
    const collect = (
      await createPayment(harness(), shop, { ...upi, upi: { flow: 'collect', vpa: 'asha.rao@okaxis' } })
    ).paymentId;

    const list = await visitor.request('GET', '/dashboard/payments/?method=upi');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('<option selected>upi</option>');
    expect(list.body).not.toContain(netbanking);
    expect(list.body).toContain(intent);
    expect(list.body).toContain('upi · intent');
    expect(list.body).toContain('upi · collect · as******@okaxis');
    expect(list.body).not.toContain('asha.rao@okaxis');

    const detail = await visitor.request('GET', `/dashboard/payments/${collect}/`);
    expect(detail.body).toMatch(/<dt>UPI flow<\/dt><dd>collect<\/dd>/);
    expect(detail.body).toMatch(/<dt>Request to<\/dt><dd>as\*{6}@okaxis<\/dd>/);
    expect(detail.body).toMatch(/<dt>Expires<\/dt><dd>\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/dd>/);
    expect(detail.body).not.toContain('<dt>Bank</dt>');
    expect(detail.body).not.toContain('asha.rao@okaxis');

    const settings = await visitor.request('GET', '/dashboard/settings/');
    expect(settings.body).toMatch(/<dt>UPI<\/dt><dd>intent and QR, collect<\/dd>/);
  });

  it('shows a payment with its events and deliveries; Resend makes a new delivery; Refund ends processed', async () => {
    const visitor = await signedIn();
    const endpoint = await harness().request('POST', '/v1/webhooks/', {
      auth: merchant,
      json: { url: 'http://127.0.0.1:9/never', enabled_events: ['payment.captured'] },
    });
    expect(endpoint.statusCode, endpoint.body).toBe(200);
    const { paymentId } = await captured();
    await drain(harness());

    const detail = await visitor.request('GET', `/dashboard/payments/${paymentId}/`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain('payment.captured');
    expect(detail.body).toContain('data-delivery="msg_');
    const eventId = /data-event="(evt_[^"]+)"/.exec(
      detail.body.slice(detail.body.indexOf('payment.captured') - 400),
    )?.[1];
    expect(eventId).toBeDefined();
    const attempts = async () =>
      Number(
        (
          await harness().container.db.query<{ n: string }>(
            'SELECT count(*) AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.event_id = $1',
            [eventId],
          )
        )[0]!.n,
      );
    const before = await attempts();
    expect(before).toBeGreaterThan(0);
    const resent = await visitor.request('POST', `/dashboard/events/${eventId}/resend/`, {
      csrf: visitor.csrf,
    });
    expect(resent.statusCode, resent.body).toBe(303);
    await drain(harness());
    expect(await attempts()).toBe(before + 1);

    const refunded = await visitor.submit(
      `/dashboard/payments/${paymentId}/`,
      `/dashboard/payments/${paymentId}/refunds/`,
      {
        amount: 2000,
      },
    );
    expect(refunded.statusCode, refunded.body).toBe(303);
    expect(refunded.headers.location).toBe(`/dashboard/payments/${paymentId}/?done=refunded`);
    harness().clock.advance(120_000);
    await harness().container.jobs.refundSync.run(new AbortController().signal);
    const refunds = await harness().request('GET', `/v1/payments/${paymentId}/refunds/`, { auth: merchant });
    expect(refunds.json().data).toMatchObject([{ amount: 2000, status: 'processed' }]);
    const after = await visitor.request('GET', `/dashboard/payments/${paymentId}/?done=refunded`);
    expect(after.body).toContain('Refund created.');
    expect(after.body).toContain('processed');
  });

  it('shows the checkout session a payment was started from, and no such row on an S2S payment', async () => {
    const visitor = await signedIn();
    const session = await checkoutHelpers(harness).session(merchant);
    const started = await harness().container.services.checkout.startPayment(session.id, {
      method: 'netbanking',
      bank: 'ICIC',
      ...CUSTOMER,
    });
    const detail = await visitor.request('GET', `/dashboard/payments/${started.payment_id}/`);
    expect(detail.statusCode, detail.body).toBe(200);
    expect(detail.body).toContain(
      `<dt>Checkout session</dt><dd><span class="mono">${session.id}</span></dd>`,
    );

    const { paymentId } = await createPayment(harness(), merchant);
    const s2s = await visitor.request('GET', `/dashboard/payments/${paymentId}/`);
    expect(s2s.statusCode, s2s.body).toBe(200);
    expect(s2s.body).not.toContain('Checkout session');
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
      csrf: visitor.csrf,
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

  it('answers a page of a 10,000-payment account as fast as a small one: lists are paged, never loaded whole', async () => {
    const shop = await harness().merchant('Busy Shop');
    const visitor = await signedIn(shop);
    const { paymentId } = await createPayment(harness(), shop);
    await choose(harness(), paymentId, await openPage(harness(), paymentId), 'failure');
    // 9,999 more failed payments like it (ids sort after it), copied in one statement.
    const columns = (
      await harness().container.db.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns
          WHERE table_schema = 'public' AND table_name = 'payments' ORDER BY ordinal_position`,
      )
    ).map((row) => row.column_name);
    const copied = columns.map((column) =>
      column === 'id'
        ? `'pay_' || lpad(n::text, 26, '0')`
        : column === 'created_at'
          ? 'p.created_at + make_interval(secs => n)'
          : `p."${column}"`,
    );
    await harness().container.db.query(
      `INSERT INTO payments (${columns.map((column) => `"${column}"`).join(', ')})
       SELECT ${copied.join(', ')} FROM payments p, generate_series(1, 9999) n WHERE p.id = $1`,
      [paymentId],
    );
    const timed = async (url: string) => {
      harness().queries.trips.length = 0;
      const started = performance.now();
      const response = await visitor.request('GET', url);
      const ms = performance.now() - started;
      expect(response.statusCode, `${url}: ${response.body.slice(0, 300)}`).toBe(200);
      return { ms, response, trips: harness().queries.trips.length };
    };
    // Warm: plans and caches, as on a server that has been serving.
    await timed('/dashboard/payments/');
    for (const url of [
      '/dashboard/payments/',
      '/dashboard/',
      '/dashboard/payments/?status=failed&method=netbanking',
    ]) {
      const { ms, response, trips } = await timed(url);
      process.stdout.write(
        `[dashboard] ${harness().kind} ${url} with 10,000 payments: ${ms.toFixed(0)} ms, ${trips} queries\n`,
      );
      expect(ms, url).toBeLessThan(1_000);
      expect(trips, url).toBeLessThanOrEqual(4);
      if (url.startsWith('/dashboard/payments/')) {
        expect(response.body.match(/<tr>/g)).toHaveLength(26); // the heading and one page of 25
        expect(response.body).toContain('Next page');
      }
    }
  }, 60_000);

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

  it('reads the deliveries of the payment page and the webhooks page in one statement, however many rows', async () => {
    const shop = await harness().merchant('Round Trip Shop');
    const visitor = new Visitor(harness, `198.51.100.${++counter}`);
    expect((await visitor.login(await userFor(shop))).statusCode).toBe(303);
    const addEndpoint = async (path: string) => {
      const endpoint = await harness().request('POST', '/v1/webhooks/', {
        auth: shop,
        json: { url: `http://127.0.0.1:9/${path}`, enabled_events: ['payment.captured', 'payment.failed'] },
      });
      expect(endpoint.statusCode, endpoint.body).toBe(200);
    };
    const deliveryReads = async (path: string) => {
      harness().queries.reset();
      const response = await visitor.request('GET', path);
      expect(response.statusCode, response.body).toBe(200);
      const trips = harness().queries.trips.map((trip) => trip.text);
      return {
        trips: trips.length,
        deliveries: trips.filter((text) => /FROM webhook_deliveries/.test(text)),
      };
    };

    await addEndpoint('one');
    const { paymentId } = await captured(shop);
    await drain(harness());
    const one = await deliveryReads('/dashboard/webhooks/');
    for (const path of ['two', 'three', 'four']) await addEndpoint(path);
    const { paymentId: second } = await captured(shop);
    await drain(harness());
    const four = await deliveryReads('/dashboard/webhooks/');
    expect(four.deliveries).toHaveLength(1);
    expect(four.trips).toBe(one.trips);

    const detail = await deliveryReads(`/dashboard/payments/${paymentId}/`);
    expect(detail.deliveries).toHaveLength(1);
    expect((await deliveryReads(`/dashboard/payments/${second}/`)).trips).toBe(detail.trips);
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
