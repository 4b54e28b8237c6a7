import type { OutgoingHttpHeaders } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, describeEachDatabase, type TestAccount } from '../helpers/harness.js';

describeEachDatabase('authentication and modes', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant();
  });

  const expect401 = async (authorization: string | undefined, code: string) => {
    const response = await harness().request(
      'GET',
      '/v1/orders/',
      authorization ? { auth: authorization } : {},
    );
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/^Basic /);
    expect(response.json().error).toMatchObject({ type: 'authentication_error', code });
  };

  it('answers 401 with WWW-Authenticate when credentials are missing', async () => {
    await expect401(undefined, 'authentication_required');
  });

  it.each([
    ['a Bearer token', 'Bearer abc'],
    ['Basic without a colon', `Basic ${Buffer.from('key_test_abc').toString('base64')}`],
    ['Basic with an empty secret', `Basic ${Buffer.from('key_test_abc:').toString('base64')}`],
    ['Basic that is not base64', 'Basic !!!not-base64!!!'],
    ['Basic with nothing after it', 'Basic '],
  ])('answers 401 for a malformed header: %s', async (_name, header) => {
    await expect401(header, 'invalid_credentials');
  });

  it('refuses a write a web page of another site sent with the browser-held credentials', async () => {
    const auth = merchant;
    const count = async () =>
      (await harness().request('GET', '/v1/orders/?limit=100', { auth })).json().data.length as number;
    const before = await count();
    // A form on another site posting to the API: the browser attaches the Basic credentials it holds.
    for (const headers of <Record<string, string>[]>[
      { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', origin: 'https://attacker.example' },
      { 'sec-fetch-site': 'same-site', origin: 'https://shop.localhost' },
      { origin: 'https://attacker.example' },
      { origin: 'null' },
    ]) {
      const forged = await harness().request('POST', '/v1/orders/', {
        auth,
        headers,
        form: { amount: '4242', currency: 'INR' },
      });
      expect(forged.statusCode, JSON.stringify(headers)).toBe(403);
      expect(forged.json().error).toMatchObject({ type: 'permission_error', code: 'cross_site_request' });
    }
    expect(await count()).toBe(before);
    // Reads cannot be seen by the other site; a server, the address bar and Kosh's own origin write as before.
    const read = await harness().request('GET', '/v1/orders/', {
      auth,
      headers: { 'sec-fetch-site': 'cross-site', origin: 'https://attacker.example' },
    });
    expect(read.statusCode).toBe(200);
    for (const headers of <Record<string, string>[]>[
      {},
      { 'sec-fetch-mode': 'cors' },
      { 'sec-fetch-site': 'none' },
      { 'sec-fetch-site': 'same-origin', origin: new URL(harness().container.config.publicUrl).origin },
      { origin: new URL(harness().container.config.publicUrl).origin },
    ]) {
      const allowed = await harness().request('POST', '/v1/orders/', {
        auth,
        headers,
        json: { amount: 5000, currency: 'INR' },
      });
      expect(allowed.statusCode, JSON.stringify(headers)).toBe(200);
    }
    expect(await count()).toBe(before + 5);
  });

  it('answers 401 for a wrong secret and for an unknown key', async () => {
    await expect401(
      basicAuth({ api_key: merchant.credentials.api_key, secret_key: 'sk_test_wrong' }),
      'invalid_credentials',
    );
    await expect401(
      basicAuth({ api_key: 'key_test_doesnotexist0000000000', secret_key: 'x' }),
      'invalid_credentials',
    );
    await expect401(basicAuth({ api_key: 'not_a_key', secret_key: 'x' }), 'invalid_credentials');
  });

  it('reads Basic after any number of spaces, and refuses a request that sends two Authorization headers', async () => {
    const right = basicAuth(merchant.credentials);
    const spaced = await harness().request('GET', '/v1/orders/', {
      auth: right.replace('Basic ', 'Basic   '),
    });
    expect(spaced.statusCode, spaced.body).toBe(200);
    // Node keeps the first of several: a request sending two would be judged by one it did not choose.
    for (const twice of [
      [right, 'Basic Zm9vOmJhcg=='],
      ['Basic Zm9vOmJhcg==', right],
    ]) {
      const response = await harness().app.inject({
        method: 'GET',
        url: '/v1/orders/',
        // Node's header types allow one Authorization; the wire allows several.
        headers: { authorization: twice } as unknown as OutgoingHttpHeaders,
      });
      expect(response.statusCode).toBe(401);
      expect(response.json().error).toMatchObject({
        code: 'invalid_credentials',
        message: 'Send one Authorization header, not several.',
      });
    }
  });

  it('checks the secret on every request, also once the key is cached', async () => {
    const cached = await harness().merchant('Cached');
    const wrong = basicAuth({
      api_key: cached.credentials.api_key,
      secret_key: `${cached.credentials.secret_key}x`,
    });
    expect((await harness().request('GET', '/v1/orders/', { auth: cached })).statusCode).toBe(200);
    await expect401(wrong, 'invalid_credentials');
    await expect401(
      basicAuth({ api_key: cached.credentials.api_key, secret_key: 'sk_test_short' }),
      'invalid_credentials',
    );
    expect((await harness().request('GET', '/v1/orders/', { auth: cached })).statusCode).toBe(200);
  });

  it('writes one access line per request, with the account and mode once authenticated', async () => {
    const before = harness().logs().length;
    const response = await harness().request('GET', '/v1/payments/methods/', { auth: merchant });
    const lines = harness()
      .logs()
      .slice(before)
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === 'request');
    expect(lines).toEqual([
      expect.objectContaining({
        service: 'kosh',
        reqId: response.headers['x-request-id'],
        account_id: merchant.id,
        mode: 'test',
        method: 'GET',
        url: '/v1/payments/methods/',
        status: 200,
        ms: expect.any(Number),
      }),
    ]);
  });

  it('refuses a revoked key at once', async () => {
    const revokable = await harness().merchant('Revokable');
    expect((await harness().request('GET', '/v1/orders/', { auth: revokable })).statusCode).toBe(200);
    await harness().container.services.accounts.revokeKey(revokable.id, revokable.credentials.api_key);
    await expect401(revokable.auth, 'invalid_credentials');
  });

  it('refuses a partner key on merchant endpoints with 403', async () => {
    const partner = await harness().partner();
    const response = await harness().request('POST', '/v1/orders/', {
      auth: partner,
      json: { amount: 5000, currency: 'INR' },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json().error).toMatchObject({ type: 'permission_error', code: 'merchant_key_required' });
  });

  it('issues live keys only to activated accounts, and refuses a live key once the account is no longer active', async () => {
    const fresh = await harness().merchant('Not yet activated');
    await expect(harness().container.services.accounts.issueKey(fresh.id, 'live')).rejects.toMatchObject({
      code: 'account_not_activated',
    });
    const live = await harness().liveKey(fresh);
    expect(live.credentials.api_key).toMatch(/^key_live_/);
    expect((await harness().request('GET', '/v1/orders/', { auth: live })).statusCode).toBe(200);
    const { accounts } = harness().container.services;
    await harness().container.db.transaction((tx) => accounts.setStatus(tx, fresh.id, 'suspended'));
    const refused = await harness().request('GET', '/v1/orders/', { auth: live });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('account_not_activated');
  });

  describe('test and live data never meet', () => {
    let test: TestAccount;
    let live: TestAccount;
    beforeAll(async () => {
      test = await harness().merchant('Two modes');
      live = await harness().liveKey(test);
    });

    it('a test key cannot see a live order, and a live key cannot see a test order', async () => {
      const liveOrder = (
        await harness().request('POST', '/v1/orders/', {
          auth: live,
          json: { amount: 5000, currency: 'INR' },
        })
      ).json().data;
      const testOrder = (
        await harness().request('POST', '/v1/orders/', {
          auth: test,
          json: { amount: 6000, currency: 'INR' },
        })
      ).json().data;
      expect((await harness().request('GET', `/v1/orders/${liveOrder.id}/`, { auth: test })).statusCode).toBe(
        404,
      );
      expect((await harness().request('GET', `/v1/orders/${testOrder.id}/`, { auth: live })).statusCode).toBe(
        404,
      );
      expect((await harness().request('GET', `/v1/orders/${liveOrder.id}/`, { auth: live })).statusCode).toBe(
        200,
      );
      const testList = (await harness().request('GET', '/v1/orders/', { auth: test }))
        .json()
        .data.map((o: { id: string }) => o.id);
      const liveList = (await harness().request('GET', '/v1/orders/', { auth: live }))
        .json()
        .data.map((o: { id: string }) => o.id);
      expect(testList).toEqual([testOrder.id]);
      expect(liveList).toEqual([liveOrder.id]);
    });

    it('live mode has no payment methods until a connector provides them; test mode has the sandbox', async () => {
      const liveMethods = (await harness().request('GET', '/v1/payments/methods/', { auth: live })).json();
      const testMethods = (await harness().request('GET', '/v1/payments/methods/', { auth: test })).json();
      expect(liveMethods.netbanking).toEqual({});
      expect(liveMethods.wallet).toEqual({});
      expect(Object.keys(testMethods.netbanking).length).toBeGreaterThanOrEqual(15);
    });
  });

  it('never writes a secret or an Authorization header to the logs', async () => {
    await harness().request('POST', '/v1/orders/', {
      auth: merchant,
      json: { amount: 5000, currency: 'INR' },
    });
    await harness().request('GET', '/v1/orders/', {
      auth: basicAuth({ api_key: merchant.credentials.api_key, secret_key: 'wrong' }),
    });
    const logs = harness().logs();
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(merchant.credentials.secret_key);
    expect(logs).not.toContain(merchant.auth.slice('Basic '.length));
    expect(logs.toLowerCase()).not.toContain('"authorization"');
  });
});
