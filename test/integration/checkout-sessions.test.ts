import { beforeAll, describe, expect, it } from 'vitest';
import { CUSTOMER, checkoutHelpers, expectError } from '../helpers/checkout.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { choose, createOrder, createPayment, openPage, RETURN_URL } from '../helpers/payments.js';

type Json = Record<string, unknown>;

/**
 * Hosted checkout sessions over HTTP (docs/checkout.md): create (JSON and form), fetch, every
 * refusal naming its field with nothing written, Idempotency-Key, isolation between merchants and
 * modes. The payments a session starts, completion and expiry: checkout-sessions-payments.test.ts.
 */
describeEachDatabase('checkout sessions', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant('Checkout Shop');
  });
  const helpers = checkoutHelpers(harness);
  const create = (json: unknown, options: { account?: TestAccount; key?: string } = {}) =>
    helpers.create(json, { account: options.account ?? merchant, key: options.key });
  const session = (overrides: Record<string, unknown> = {}, account = merchant) =>
    helpers.session(account, overrides);
  const fetchSession = (id: string, account = merchant) => helpers.fetchSession(id, account);
  const { sessionCount } = helpers;

  describe('create and fetch', () => {
    it('creates a session from JSON with every method the account has, open for 30 minutes', async () => {
      const orderId = await createOrder(harness(), merchant);
      const now = Math.floor(harness().clock.now().getTime() / 1000);
      const response = await create({ order_id: orderId, return_url: RETURN_URL, customer: CUSTOMER });
      expect(response.statusCode, response.body).toBe(200);
      const { data, message } = response.json();
      expect(message).toEqual(expect.any(String));
      expect(data).toEqual({
        id: expect.stringMatching(/^cs_[0-9a-z]{26}$/),
        entity: 'checkout_session',
        order_id: orderId,
        url: `http://localhost:3000/checkout/${data.id}/`,
        status: 'open',
        payment_id: null,
        expires_at: now + 30 * 60,
        created_at: now,
      });
      const [row] = await harness().container.db.query<{ methods: string[]; customer: Json }>(
        'SELECT methods, customer FROM checkout_sessions WHERE id = $1',
        [data.id],
      );
      expect(row?.methods).toEqual(['upi', 'netbanking', 'wallet']);
      expect(row?.customer).toEqual(CUSTOMER);

      const fetched = await fetchSession(data.id);
      expect(fetched.statusCode, fetched.body).toBe(200);
      expect(fetched.json().data).toEqual(data);
    });

    it('creates a session from a form body: nested customer, comma-separated methods, minutes as text', async () => {
      const orderId = await createOrder(harness(), merchant);
      const response = await harness().request('POST', '/v1/checkout/sessions/', {
        auth: merchant,
        form: {
          order_id: orderId,
          return_url: RETURN_URL,
          methods: 'wallet,upi',
          expires_in_minutes: '10',
          customer: CUSTOMER,
        },
      });
      expect(response.statusCode, response.body).toBe(200);
      const data = response.json().data;
      expect(data.expires_at - data.created_at).toBe(600);
      const [row] = await harness().container.db.query<{ methods: string[] }>(
        'SELECT methods FROM checkout_sessions WHERE id = $1',
        [data.id],
      );
      expect(row?.methods).toEqual(['upi', 'wallet']);
    });

    it('takes expires_in_minutes at its bounds, 5 and 1440', async () => {
      for (const minutes of [5, 1440]) {
        const data = await session({ expires_in_minutes: minutes });
        expect((data.expires_at as number) - (data.created_at as number)).toBe(minutes * 60);
      }
    });

    it('replays a create with the same Idempotency-Key: the same session, once', async () => {
      const orderId = await createOrder(harness(), merchant);
      const body = { order_id: orderId, return_url: RETURN_URL };
      const first = await create(body, { key: `cs-${orderId}` });
      const again = await create(body, { key: `cs-${orderId}` });
      expect(first.statusCode, first.body).toBe(200);
      expect(again.statusCode).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json().data).toEqual(first.json().data);
      const rows = await harness().container.db.query(
        'SELECT id FROM checkout_sessions WHERE order_id = $1',
        [orderId],
      );
      expect(rows).toHaveLength(1);
      const other = await create({ ...body, expires_in_minutes: 10 }, { key: `cs-${orderId}` });
      expectError(other, 422, 'idempotency_key_reused');
    });
  });

  describe('refusals name their field and write nothing', () => {
    let fresh: TestAccount;
    let orderId: string;
    beforeAll(async () => {
      fresh = await harness().merchant('Refusals');
      orderId = await createOrder(harness(), fresh);
    });

    const cases: [title: string, body: () => Json, status: number, code: string, field: string][] = [
      [
        'an unknown order',
        () => ({ order_id: 'order_nope', return_url: RETURN_URL }),
        404,
        'resource_not_found',
        'order_id',
      ],
      ['no order_id', () => ({ return_url: RETURN_URL }), 400, 'missing_field', 'order_id'],
      ['no return_url', () => ({ order_id: orderId }), 400, 'missing_field', 'return_url'],
      [
        'an http return URL',
        () => ({ order_id: orderId, return_url: 'http://merchant.example/r' }),
        400,
        'invalid_return_url',
        'return_url',
      ],
      [
        'a relative return URL',
        () => ({ order_id: orderId, return_url: '/return' }),
        400,
        'invalid_return_url',
        'return_url',
      ],
      [
        'a return URL with credentials',
        () => ({ order_id: orderId, return_url: 'https://a:b@merchant.example/' }),
        400,
        'invalid_return_url',
        'return_url',
      ],
      [
        '4 minutes',
        () => ({ order_id: orderId, return_url: RETURN_URL, expires_in_minutes: 4 }),
        400,
        'invalid_field',
        'expires_in_minutes',
      ],
      [
        '1441 minutes',
        () => ({ order_id: orderId, return_url: RETURN_URL, expires_in_minutes: 1441 }),
        400,
        'invalid_field',
        'expires_in_minutes',
      ],
      [
        'fractional minutes',
        () => ({ order_id: orderId, return_url: RETURN_URL, expires_in_minutes: 7.5 }),
        400,
        'invalid_field',
        'expires_in_minutes',
      ],
      [
        'an unknown method',
        () => ({ order_id: orderId, return_url: RETURN_URL, methods: ['card'] }),
        400,
        'invalid_field',
        'methods.0',
      ],
      [
        'no methods',
        () => ({ order_id: orderId, return_url: RETURN_URL, methods: [] }),
        400,
        'invalid_field',
        'methods',
      ],
      [
        'a bad customer email',
        () => ({ order_id: orderId, return_url: RETURN_URL, customer: { ...CUSTOMER, email: 'asha' } }),
        400,
        'invalid_field',
        'customer.email',
      ],
      [
        'a bad customer contact',
        () => ({ order_id: orderId, return_url: RETURN_URL, customer: { ...CUSTOMER, contact: '12' } }),
        400,
        'invalid_field',
        'customer.contact',
      ],
      [
        'a blank customer name',
        () => ({ order_id: orderId, return_url: RETURN_URL, customer: { ...CUSTOMER, name: '  ' } }),
        400,
        'invalid_field',
        'customer.name',
      ],
      [
        'a customer without contact',
        () => ({ order_id: orderId, return_url: RETURN_URL, customer: { name: 'A', email: 'a@b.co' } }),
        400,
        'missing_field',
        'customer.contact',
      ],
      [
        'an unknown field',
        () => ({ order_id: orderId, return_url: RETURN_URL, amount: 5000 }),
        400,
        'unknown_field',
        'amount',
      ],
      [
        'a server-owned field',
        () => ({ order_id: orderId, return_url: RETURN_URL, status: 'completed' }),
        400,
        'server_owned_field',
        'status',
      ],
    ];
    for (const [title, body, status, code, field] of cases) {
      it(`refuses ${title} (${code}, ${field})`, async () => {
        expectError(await create(body(), { account: fresh }), status, code, field);
        expect(await sessionCount(fresh.id)).toBe(0);
      });
    }

    it('refuses a paid order with 409 order_already_paid', async () => {
      const { orderId: paid, paymentId } = await createPayment(harness(), fresh);
      await choose(harness(), paymentId, await openPage(harness(), paymentId), 'success');
      expectError(
        await create({ order_id: paid, return_url: RETURN_URL }, { account: fresh }),
        409,
        'order_already_paid',
        'order_id',
      );
      expect(await sessionCount(fresh.id)).toBe(0);
    });

    it('refuses methods the account lacks, and offers only what it has by default', async () => {
      const lacking = await harness().merchant('No wallets');
      const { methods } = harness().container.services;
      const current = await methods.get(lacking.id, 'test');
      await harness().container.db.transaction((tx) =>
        methods.set(tx, lacking.id, 'test', { ...current, wallet: {} }),
      );
      const order = await createOrder(harness(), lacking);
      const refused = await create(
        { order_id: order, return_url: RETURN_URL, methods: ['upi', 'wallet'] },
        { account: lacking },
      );
      expectError(refused, 400, 'method_not_enabled', 'methods');
      expect(refused.json().error.message).toContain('wallet');
      expect(await sessionCount(lacking.id)).toBe(0);
      const made = await create({ order_id: order, return_url: RETURN_URL }, { account: lacking });
      expect(made.statusCode, made.body).toBe(200);
      const [row] = await harness().container.db.query<{ methods: string[] }>(
        'SELECT methods FROM checkout_sessions WHERE id = $1',
        [made.json().data.id],
      );
      expect(row?.methods).toEqual(['upi', 'netbanking']);
    });
  });

  describe('isolation', () => {
    it("answers 404 for another merchant's session, the other mode's, and an unknown id", async () => {
      const mine = await session();
      const other = await harness().merchant('Someone Else');
      expectError(await fetchSession(mine.id, other), 404, 'resource_not_found');
      const live = await harness().liveKey(merchant);
      expectError(await fetchSession(mine.id, live), 404, 'resource_not_found');
      expectError(await fetchSession('cs_00000000000000000000000000'), 404, 'resource_not_found');
      expectError(await fetchSession('nope'), 404, 'resource_not_found');

      // A live session (written directly: no live connector here) is not the test key's.
      const liveOrder = await createOrder(harness(), live);
      const id = 'cs_01livesessionxxxxxxxxxxxxx';
      const now = harness().clock.now();
      await harness().container.db.query(
        `INSERT INTO checkout_sessions (id, account_id, mode, order_id, return_url, methods, expires_at, created_at, updated_at)
         VALUES ($1, $2, 'live', $3, $4, ARRAY['upi'], $5, $6, $6)`,
        [id, merchant.id, liveOrder, RETURN_URL, new Date(now.getTime() + 60_000), now],
      );
      expect((await fetchSession(id, live)).statusCode).toBe(200);
      expectError(await fetchSession(id, merchant), 404, 'resource_not_found');
      // Another merchant's order cannot be put in a session.
      const foreign = await create({ order_id: mine.orderId, return_url: RETURN_URL }, { account: other });
      expectError(foreign, 404, 'resource_not_found', 'order_id');
    });

    it("shows a live link whose connector is gone as unavailable, and never names the merchant's setup", async () => {
      const owner = await harness().merchant('Shop Without Provider');
      const live = await harness().liveKey(owner);
      const liveOrder = await createOrder(harness(), live);
      const id = 'cs_01connectorgonexxxxxxxxxxx';
      const now = harness().clock.now();
      // Made while a connector account was active (written directly: none is here now).
      await harness().container.db.query(
        `INSERT INTO checkout_sessions (id, account_id, mode, order_id, return_url, methods, expires_at, created_at, updated_at)
         VALUES ($1, $2, 'live', $3, $4, ARRAY['netbanking', 'upi'], $5, $6, $6)`,
        [id, owner.id, liveOrder, RETURN_URL, new Date(now.getTime() + 600_000), now],
      );
      const page = await harness().request('GET', `/checkout/${id}/`);
      expect(page.statusCode).toBe(403);
      expect(page.body).toContain('This payment link is not available');
      expect(page.body).not.toContain('name="pay"');
      const chosen = await harness().request('POST', `/checkout/${id}/`, {
        form: { pay: 'bank:HDFC', name: 'Asha', email: 'asha@example.com', contact: '+919876543210' },
      });
      expect(chosen.statusCode).toBeGreaterThanOrEqual(400);
      expect(chosen.statusCode).toBe(403);
      expect(chosen.body).toContain('cannot take payments');
      expect(chosen.body).not.toMatch(/connector|live mode/i);
      const payments = await harness().container.db.query('SELECT 1 FROM payments WHERE order_id = $1', [
        liveOrder,
      ]);
      expect(payments).toEqual([]);
    });

    it('refuses a live session while the account offers no live method (no connector account)', async () => {
      const live = await harness().liveKey(await harness().merchant('Live, no connector'));
      const order = await createOrder(harness(), live);
      const refused = await create({ order_id: order, return_url: RETURN_URL }, { account: live });
      expectError(refused, 400, 'method_not_enabled', 'methods');
      expect(await sessionCount(live.id)).toBe(0);
    });
  });
});
