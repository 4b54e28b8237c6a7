import { randomBytes } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { PROVIDERS, type ProviderName } from '../../src/connectors/registry.js';
import { SANDBOX_BANKS, SANDBOX_WALLETS } from '../../src/connectors/sandbox/catalogue.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { paymentBody } from '../helpers/payments.js';

/**
 * `/v1/connector-accounts/`: a merchant's own payment provider accounts, live keys only, one
 * active at a time, secrets stored encrypted and never shown again, tenant-scoped.
 */
describeEachDatabase('connector accounts', (harness) => {
  let testKey: TestAccount;
  let live: TestAccount;
  let otherLive: TestAccount;

  beforeAll(async () => {
    testKey = await harness().merchant('Provider Shop');
    live = await harness().liveKey(testKey);
    otherLive = await harness().liveKey(await harness().merchant('Other Provider Shop'));
  });

  const secret = () => `cfsk_ma_prod_${randomBytes(12).toString('hex')}`;
  const catalogueTakenBy = (name: ProviderName) => ({
    netbanking: Object.fromEntries(
      SANDBOX_BANKS.filter((bank) => PROVIDERS[name].methods.netbanking.includes(bank.code)).map((bank) => [
        bank.code,
        bank.label,
      ]),
    ),
    wallet: Object.fromEntries(
      SANDBOX_WALLETS.filter((wallet) => PROVIDERS[name].methods.wallet.includes(wallet.code)).map(
        (wallet) => [wallet.code, wallet.label],
      ),
    ),
  });
  const add = (account: TestAccount, json: unknown) =>
    harness().request('POST', '/v1/connector-accounts/', { auth: account, json });
  const rows = async (accountId: string) =>
    harness().container.db.query<{ id: string; status: string; secret_credentials: string; row: string }>(
      `SELECT id, status, secret_credentials, to_jsonb(c)::text AS row FROM connector_accounts c
        WHERE account_id = $1 ORDER BY id`,
      [accountId],
    );

  it('answers 403 live_mode_required to a test key on every operation', async () => {
    for (const [method, path] of [
      ['POST', '/v1/connector-accounts/'],
      ['GET', '/v1/connector-accounts/'],
      ['GET', '/v1/connector-accounts/ca_00000000000000000000000000/'],
      ['DELETE', '/v1/connector-accounts/ca_00000000000000000000000000/'],
    ] as const) {
      const response = await harness().request(method, path, {
        auth: testKey,
        ...(method === 'POST'
          ? { json: { connector: 'cashfree', credentials: { client_id: 'CF1', client_secret: secret() } } }
          : {}),
      });
      expect(response.statusCode, `${method} ${path}`).toBe(403);
      expect(response.json().error).toMatchObject({ code: 'live_mode_required', type: 'permission_error' });
    }
    expect(await rows(testKey.id)).toEqual([]);
  });

  it('refuses a live payment while the merchant has no provider account, saying what to do', async () => {
    const order = await harness().request('POST', '/v1/orders/', {
      auth: live,
      json: { amount: 5000, currency: 'INR' },
    });
    const response = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth: live,
      json: paymentBody(order.json().data.id),
    });
    expect(response.statusCode).toBe(503);
    expect(response.json().error.code).toBe('connector_unavailable');
    expect(response.json().error.message).toContain('/v1/connector-accounts/');
    // Nothing to offer live either.
    const methods = (await harness().request('GET', '/v1/payments/methods/', { auth: live })).json();
    expect(methods.netbanking).toEqual({});
    expect(methods.wallet).toEqual({});
  });

  it.each([
    [{ connector: 'stripe', credentials: {} }, 'invalid_field', 'connector'],
    [{ connector: 'cashfree' }, 'missing_field', 'credentials'],
    [
      { connector: 'cashfree', credentials: { client_id: 'CF1' } },
      'missing_field',
      'credentials.client_secret',
    ],
    [
      { connector: 'cashfree', credentials: { client_id: 'CF1', client_secret: 'x', key_id: 'y' } },
      'unknown_field',
      'credentials.key_id',
    ],
    [
      {
        connector: 'razorpay',
        credentials: { key_id: 'rzp_live_1', key_secret: 'a b', webhook_secret: 'w' },
      },
      'invalid_field',
      'credentials.key_secret',
    ],
    [
      { connector: 'cashfree', credentials: { client_id: 'CF1', client_secret: 5 } },
      'invalid_field',
      'credentials.client_secret',
    ],
    [{ connector: 'cashfree', credentials: 'x' }, 'invalid_field', 'credentials'],
    [
      { connector: 'cashfree', credentials: { client_id: 'CF1', client_secret: 'y' }, status: 'active' },
      'server_owned_field',
      'status',
    ],
  ])('refuses %j with a clear 400, writing nothing', async (json, code, field) => {
    const response = await add(otherLive, json);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error).toMatchObject({ code, field });
    expect(await rows(otherLive.id)).toEqual([]);
  });

  it('adds one, shows its webhook address and only the last four characters of its secrets; one active at a time', async () => {
    const clientSecret = secret();
    const response = await add(live, {
      connector: 'cashfree',
      credentials: { client_id: 'CF_LIVE_1234', client_secret: clientSecret },
    });
    expect(response.statusCode, response.body).toBe(200);
    const account = response.json().data;
    expect(account).toEqual({
      id: expect.stringMatching(/^ca_[0-9a-z]{26}$/),
      entity: 'connector_account',
      connector: 'cashfree',
      status: 'active',
      webhook_url: `http://localhost:3000/v1/connectors/cashfree/webhooks/${account.id}/`,
      credentials: { client_id: 'CF_LIVE_1234', client_secret_last4: clientSecret.slice(-4) },
      created_at: expect.any(Number),
      disabled_at: null,
      // No live methods chosen yet: every bank and wallet of the catalogue that Cashfree takes.
      methods: catalogueTakenBy('cashfree'),
    });
    expect(response.body).not.toContain(clientSecret);
    // Stored sealed: the secret is nowhere in the row.
    const [row] = await rows(live.id);
    expect(row?.secret_credentials).toMatch(/^enc:v1:/);
    expect(row?.row).not.toContain(clientSecret);
    expect(harness().logs()).not.toContain(clientSecret);

    const second = await add(live, {
      connector: 'razorpay',
      credentials: { key_id: 'rzp_live_1', key_secret: secret(), webhook_secret: secret() },
    });
    expect(second.statusCode).toBe(409);
    expect(second.json().error.code).toBe('connector_account_active');
    expect(second.json().error.message).toContain(account.id);
    expect(await rows(live.id)).toHaveLength(1);

    expect(
      (await harness().request('GET', `/v1/connector-accounts/${account.id}/`, { auth: live })).json().data,
    ).toEqual(account);
    const list = (await harness().request('GET', '/v1/connector-accounts/', { auth: live })).json();
    expect(list).toEqual({ data: [account], has_more: false, next_cursor: null });
  });

  it("never shows or touches another merchant's account (404)", async () => {
    const [mine] = await rows(live.id);
    for (const method of ['GET', 'DELETE'] as const) {
      const response = await harness().request(method, `/v1/connector-accounts/${mine?.id}/`, {
        auth: otherLive,
      });
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('resource_not_found');
    }
    expect(
      (await harness().request('GET', '/v1/connector-accounts/', { auth: otherLive })).json().data,
    ).toEqual([]);
    expect((await rows(live.id))[0]?.status).toBe('active');
  });

  it('limits live methods to what both the merchant enabled and its provider takes', async () => {
    const { methods } = harness().container.services;
    const enabled = {
      ...(await methods.get(live.id, 'test')),
      netbanking: { HDFC: 'HDFC Bank', ICIC: 'ICICI Bank', NOPE: 'No Such Bank' },
      wallet: { phonepe: 'PhonePe', nowallet: 'Nothing' },
    };
    await harness().container.db.transaction((tx) => methods.set(tx, live.id, 'live', enabled));
    const offered = (await harness().request('GET', '/v1/payments/methods/', { auth: live })).json();
    expect(offered.netbanking).toEqual({ HDFC: 'HDFC Bank', ICIC: 'ICICI Bank' });
    expect(offered.wallet).toEqual({ phonepe: 'PhonePe' });
    // The connector account's answer shows the same.
    const [account] = (await harness().request('GET', '/v1/connector-accounts/', { auth: live })).json().data;
    expect(account.methods).toEqual({ netbanking: offered.netbanking, wallet: offered.wallet });
    // A payment with an enabled bank the provider does not take is refused before any provider call.
    const order = await harness().request('POST', '/v1/orders/', {
      auth: live,
      json: { amount: 5000, currency: 'INR' },
    });
    const refused = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth: live,
      json: paymentBody(order.json().data.id, { bank: 'NOPE' }),
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'method_not_enabled', field: 'bank' });
  });

  it('disables it: new live payments are refused again, and another account can be added', async () => {
    const [mine] = await rows(live.id);
    const disabled = await harness().request('DELETE', `/v1/connector-accounts/${mine?.id}/`, { auth: live });
    expect(disabled.statusCode).toBe(200);
    expect(disabled.json().data).toMatchObject({
      status: 'disabled',
      disabled_at: expect.any(Number),
      methods: null,
    });
    const again = await harness().request('DELETE', `/v1/connector-accounts/${mine?.id}/`, { auth: live });
    expect(again.json().data).toEqual(disabled.json().data);
    const order = await harness().request('POST', '/v1/orders/', {
      auth: live,
      json: { amount: 5000, currency: 'INR' },
    });
    const payment = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth: live,
      json: paymentBody(order.json().data.id),
    });
    expect(payment.statusCode).toBe(503);
    const razorpay = await add(live, {
      connector: 'razorpay',
      credentials: { key_id: 'rzp_live_abcd', key_secret: secret(), webhook_secret: secret() },
    });
    expect(razorpay.statusCode, razorpay.body).toBe(200);
    expect(Object.keys(razorpay.json().data.credentials).sort()).toEqual([
      'key_id',
      'key_secret_last4',
      'webhook_secret_last4',
    ]);
  });
});
