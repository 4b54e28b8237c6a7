import { randomBytes } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { PROVIDERS } from '../../src/connectors/registry.js';
import { SANDBOX_BANKS, SANDBOX_WALLETS } from '../../src/connectors/sandbox/catalogue.js';
import { DashboardClient } from '../helpers/dashboard-client.js';
import { basicAuth, describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { proprietorBody } from '../helpers/onboarding.js';
import { paymentBody } from '../helpers/payments.js';

const BASE = '/v1/api-portal';
const upi = (intent: boolean, collect: boolean) => ({
  intent,
  collect,
  payer_account_type: { bank_account: intent || collect, credit_card: false },
});
const UPI_OFF = upi(false, false);

/**
 * Live methods on day one: an activated live merchant whose partner never chose its live methods
 * offers every bank and wallet of the Kosh catalogue that its connector takes; the partner's
 * choice (PATCH …/methods/) holds from then on.
 */
describeEachDatabase('live methods before and after the partner chooses', (harness) => {
  let partner: TestAccount;
  let merchant: TestAccount;

  beforeAll(async () => {
    const h = harness();
    partner = await h.liveKey(await h.partner('Day One Platform'));
    const created = await h.request('POST', `${BASE}/merchants/`, { auth: partner, json: proprietorBody() });
    expect(created.statusCode, created.body).toBe(200);
    const { id, credentials } = created.json().data;
    // The operator's activation, then the merchant's live key.
    merchant = await h.liveKey({ id, credentials, auth: basicAuth(credentials) });
  });

  const liveMethods = async () => {
    const response = await harness().request('GET', '/v1/payments/methods/', { auth: merchant });
    expect(response.statusCode).toBe(200);
    return response.json();
  };
  const stored = async () =>
    (
      await harness().container.db.query<{ methods: unknown }>(
        `SELECT methods FROM account_methods WHERE account_id = $1 AND mode = 'live'`,
        [merchant.id],
      )
    )[0]?.methods;
  /** The merchant's dashboard settings page in live mode, over HTTP. */
  const liveSettingsPage = async () => {
    const h = harness();
    if (!h.app.server.listening) await h.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(h.app.server.address() as { port: number }).port}`;
    const email = `owner-${merchant.id}@shop.example`;
    const password = 'correct horse battery staple';
    const users = await h.container.db.query('SELECT 1 FROM dashboard_users WHERE email = $1', [email]);
    if (users.length === 0)
      await h.container.services.dashboardUsers.createUser({ accountId: merchant.id, email, password });
    const { client, status } = await DashboardClient.login(base, { email, password });
    expect(status).toBe(303);
    await client.get('/dashboard/');
    expect((await client.post('/dashboard/mode/', { mode: 'live' })).status).toBe(303);
    const page = await client.get('/dashboard/settings/');
    expect(page.status).toBe(200);
    return page.body;
  };
  const cashfree = PROVIDERS.cashfree.methods;
  const takenBanks = SANDBOX_BANKS.filter((bank) => cashfree.netbanking.includes(bank.code));
  const takenWallets = SANDBOX_WALLETS.filter((wallet) => cashfree.wallet.includes(wallet.code));

  it('stores "not chosen" and offers nothing while the merchant has no connector account', async () => {
    expect(await stored()).toBeNull();
    const methods = await liveMethods();
    expect(methods.netbanking).toEqual({});
    expect(methods.wallet).toEqual({});
    // UPI is on in the catalogue, but without a connector there is nothing to take it.
    expect(methods.upi).toEqual(UPI_OFF);
  });

  it("offers the connector's banks and wallets of the catalogue once it adds a connector account", async () => {
    const added = await harness().request('POST', '/v1/connector-accounts/', {
      auth: merchant,
      json: {
        connector: 'cashfree',
        credentials: {
          client_id: 'CF_DAY_ONE',
          client_secret: `cfsk_ma_prod_${randomBytes(12).toString('hex')}`,
        },
      },
    });
    expect(added.statusCode, added.body).toBe(200);
    const expected = {
      netbanking: Object.fromEntries(takenBanks.map((bank) => [bank.code, bank.label])),
      wallet: Object.fromEntries(takenWallets.map((wallet) => [wallet.code, wallet.label])),
    };
    expect(Object.keys(expected.netbanking).length).toBeGreaterThan(15);
    expect(added.json().data.methods).toEqual(expected);
    const methods = await liveMethods();
    expect(methods.netbanking).toEqual(expected.netbanking);
    expect(methods.wallet).toEqual(expected.wallet);
    // Cashfree takes intent and collect; collect is off for the merchant until its partner turns it on.
    expect(cashfree.upi).toEqual({ intent: true, collect: true });
    expect(methods.upi).toEqual(upi(true, false));
    // What the provider does not map is not offered (Cashfree takes no PayZapp).
    expect(cashfree.wallet).not.toContain('payzapp');
    expect(methods.wallet.payzapp).toBeUndefined();
    expect(await stored()).toBeNull();
    // The dashboard's settings page in live mode lists the same banks and wallets.
    const settings = await liveSettingsPage();
    for (const bank of takenBanks) expect(settings).toContain(bank.label);
  });

  it("narrows to the partner's choice, which holds from then on", async () => {
    const url = `${BASE}/merchants/${merchant.id}/methods/`;
    const patched = await harness().request('PATCH', url, {
      auth: partner,
      json: { netbanking: { HDFC: false, SBIN: false }, wallet: { payzapp: false } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const methods = await liveMethods();
    expect(Object.keys(methods.netbanking).sort()).toEqual(
      takenBanks
        .map((bank) => bank.code)
        .filter((code) => code !== 'HDFC' && code !== 'SBIN')
        .sort(),
    );
    expect(Object.keys(methods.wallet).sort()).toEqual(
      takenWallets
        .map((wallet) => wallet.code)
        .filter((code) => code !== 'payzapp')
        .sort(),
    );
    expect(await stored()).not.toBeNull();
    const [account] = (await harness().request('GET', '/v1/connector-accounts/', { auth: merchant })).json()
      .data;
    expect(account.methods).toEqual({ netbanking: methods.netbanking, wallet: methods.wallet });

    const settings = await liveSettingsPage();
    expect(settings).not.toContain('State Bank of India');
    expect(settings).toContain('ICICI Bank');

    // Re-enabling one bank brings back that bank only.
    await harness().request('PATCH', url, { auth: partner, json: { netbanking: { HDFC: true } } });
    const again = await liveMethods();
    expect(again.netbanking.HDFC).toBe('HDFC Bank');
    expect(again.netbanking.SBIN).toBeUndefined();
    expect(again.wallet.payzapp).toBeUndefined();
  });

  it('reports UPI collect only while the merchant has it on, and refuses a live collect payment while it is off', async () => {
    const url = `${BASE}/merchants/${merchant.id}/methods/`;
    const patch = async (upiChange: Record<string, boolean>) => {
      const reply = await harness().request('PATCH', url, { auth: partner, json: { upi: upiChange } });
      expect(reply.statusCode, reply.body).toBe(200);
    };
    await patch({ collect: true });
    expect((await liveMethods()).upi).toEqual(upi(true, true));
    await patch({ collect: false });
    expect((await liveMethods()).upi).toEqual(upi(true, false));

    const payments = async () =>
      (
        await harness().container.db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM payments WHERE account_id = $1',
          [merchant.id],
        )
      )[0]?.n;
    const before = await payments();
    const order = await harness().request('POST', '/v1/orders/', {
      auth: merchant,
      json: { amount: 5000, currency: 'INR' },
    });
    const orderId = order.json().data.id as string;
    const { bank: _bank, ...body } = paymentBody(orderId, {
      method: 'upi',
      upi: { flow: 'collect', vpa: 'asha@okbank' },
    });
    const refused = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth: merchant,
      json: body,
    });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'method_not_enabled', field: 'upi.flow' });
    expect(await payments()).toBe(before);
    const orderNow = (await harness().request('GET', `/v1/orders/${orderId}/`, { auth: merchant })).json()
      .data;
    expect(orderNow.status).toBe('created');
    const events = await harness().container.db.query(
      `SELECT type FROM events WHERE payload->'order'->>'id' = $1 OR payload->'payment'->>'order_id' = $1`,
      [orderId],
    );
    expect(events).toEqual([]);
  });

  it('refuses a live payment with a bank the partner removed, before any provider call', async () => {
    const order = await harness().request('POST', '/v1/orders/', {
      auth: merchant,
      json: { amount: 5000, currency: 'INR' },
    });
    const refused = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth: merchant,
      json: paymentBody(order.json().data.id, { bank: 'SBIN' }),
    });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'method_not_enabled', field: 'bank' });
  });
});
