import { beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { SecretLedger } from './secrets.js';

const basic = (raw: string) => `Basic ${Buffer.from(raw).toString('base64')}`;

describeEachDatabase('security: authentication', (harness) => {
  const ledger = new SecretLedger();
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant('Auth');
    ledger.add(merchant);
  });

  function get(authorization: string | undefined) {
    return harness().request(
      'GET',
      '/v1/orders/',
      authorization === undefined ? {} : { auth: authorization },
    );
  }

  it('accepts the right credentials (the baseline the refusals are measured against)', async () => {
    expect((await get(merchant.auth)).statusCode).toBe(200);
  });

  it('refuses a request without credentials: 401 authentication_required with WWW-Authenticate', async () => {
    const reply = await get(undefined);
    expect(reply.statusCode).toBe(401);
    expect(reply.headers['www-authenticate']).toMatch(/^Basic realm="kosh"/);
    expect(reply.json().error).toMatchObject({
      type: 'authentication_error',
      code: 'authentication_required',
    });
  });

  const malformed: [string, () => string][] = [
    ['a Bearer token', () => `Bearer ${merchant.credentials.secret_key}`],
    ['Basic without a value', () => 'Basic'],
    ['Basic with characters outside base64', () => 'Basic !!!not-base64'],
    ['no colon', () => basic(merchant.credentials.api_key)],
    ['an empty api key', () => basic(`:${merchant.credentials.secret_key}`)],
    ['an empty secret', () => basic(`${merchant.credentials.api_key}:`)],
    ['an over-long value', () => `Basic ${'A'.repeat(5_000)}`],
    // An api key Kosh could not have issued is no key: never a database error (a NUL was a 500).
    ['an api key with a NUL', () => basic(`key_test_\u0000:${merchant.credentials.secret_key}`)],
    [
      'an api key ending in a NUL',
      () => basic(`${merchant.credentials.api_key}\u0000:${merchant.credentials.secret_key}`),
    ],
    ['an api key with a space', () => basic(`key_test_ab cd:${merchant.credentials.secret_key}`)],
    ['an api key with letters outside ASCII', () => basic(`key_test_é😀:${merchant.credentials.secret_key}`)],
  ];
  it.each(malformed)('refuses %s with 401 invalid_credentials', async (_name, header) => {
    const reply = await get(header());
    expect(reply.statusCode).toBe(401);
    expect(reply.json().error).toMatchObject({ type: 'authentication_error', code: 'invalid_credentials' });
  });

  it('answers a wrong secret and an unknown key identically (no key enumeration)', async () => {
    const wrongSecret = await get(basic(`${merchant.credentials.api_key}:sk_test_${'x'.repeat(43)}`));
    const unknownKey = await get(basic(`key_test_${'0'.repeat(24)}:${merchant.credentials.secret_key}`));
    const otherPrefix = await get(basic(`pk_test_abc:${merchant.credentials.secret_key}`));
    for (const reply of [wrongSecret, unknownKey, otherPrefix]) {
      expect(reply.statusCode).toBe(401);
      const { request_id: _ignored, ...error } = reply.json().error;
      expect(error).toEqual({
        type: 'authentication_error',
        code: 'invalid_credentials',
        message: 'The API key or secret key is not valid.',
        field: null,
        doc_url: 'http://localhost:3000/docs/errors#invalid_credentials',
      });
    }
  });

  it('refuses a secret of another key, even of the same account', async () => {
    const second = await harness().container.services.accounts.issueKey(merchant.id, 'test');
    ledger.addValue(second.secret_key);
    const crossed = await get(basic(`${merchant.credentials.api_key}:${second.secret_key}`));
    expect(crossed.statusCode).toBe(401);
  });

  it('refuses a revoked key at once, even after it was used (and cached)', async () => {
    const account = await harness().merchant('Revoked');
    ledger.add(account);
    expect((await get(account.auth)).statusCode).toBe(200);
    const revoked = await harness().container.services.accounts.revokeKey(
      account.id,
      account.credentials.api_key,
    );
    expect(revoked).toMatchObject({ api_key: account.credentials.api_key, revoked_at: expect.any(Date) });
    const reply = await get(account.auth);
    expect(reply.statusCode).toBe(401);
    expect(reply.json().error.code).toBe('invalid_credentials');
  });

  it('refuses the live key of a merchant that is no longer activated with 403 account_not_activated', async () => {
    const account = await harness().merchant('Deactivated');
    const live = await harness().liveKey(account);
    ledger.add(account, live);
    expect((await get(live.auth)).statusCode).toBe(200);
    await harness().container.db.transaction((tx) =>
      harness().container.services.accounts.setStatus(tx, account.id, 'needs_clarification'),
    );
    const reply = await get(live.auth);
    expect(reply.statusCode).toBe(403);
    expect(reply.json().error).toMatchObject({ type: 'permission_error', code: 'account_not_activated' });
    // Its test key keeps working: the sandbox stays open while onboarding is under way.
    expect((await get(account.auth)).statusCode).toBe(200);
  });

  it('never issues a live key to a merchant that is not activated', async () => {
    const account = await harness().merchant('Not activated');
    ledger.add(account);
    await expect(harness().container.services.accounts.issueKey(account.id, 'live')).rejects.toMatchObject({
      code: 'account_not_activated',
    });
  });

  it('refuses a suspended merchant with 403, whatever the mode', async () => {
    const account = await harness().merchant('Suspended');
    ledger.add(account);
    await harness().container.db.transaction((tx) =>
      harness().container.services.accounts.setStatus(tx, account.id, 'suspended'),
    );
    const reply = await get(account.auth);
    expect(reply.statusCode).toBe(403);
    expect(reply.json().error.code).toBe('account_not_activated');
  });

  it('refuses a partner key on a merchant endpoint with 403 merchant_key_required', async () => {
    const partner = await harness().partner('Auth partner');
    ledger.add(partner);
    for (const [method, url] of [
      ['GET', '/v1/orders/'],
      ['POST', '/v1/orders/'],
    ] as const) {
      const reply = await harness().request(method, url, {
        auth: partner,
        json: method === 'POST' ? { amount: 5000, currency: 'INR' } : undefined,
      });
      expect(reply.statusCode).toBe(403);
      expect(reply.json().error.code).toBe('merchant_key_required');
    }
  });

  describe('credentials in logs', () => {
    it('logs no secret, no Authorization value, for anything this suite sent', async () => {
      // A failing request with credentials in odd places, to give the logs every chance to leak.
      await harness().request('POST', `/v1/orders/?secret_key=${merchant.credentials.secret_key.length}`, {
        auth: basicAuth(merchant.credentials),
        json: { amount: 'x' },
      });
      ledger.expectCleanLogs(harness());
    });
  });
});
