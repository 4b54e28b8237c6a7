import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';

describeEachDatabase('orders', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant();
  });

  describe('POST /v1/orders/', () => {
    it('creates an order with every field of seed §2.1 and its initial values', async () => {
      const before = Math.floor(Date.now() / 1000);
      const response = await harness().request('POST', '/v1/orders/', {
        auth: merchant,
        json: { amount: 5000, currency: 'INR' },
      });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['data', 'message']);
      expect(typeof body.message).toBe('string');
      const order = body.data;
      expect(order.id).toMatch(/^order_[0-9a-z]{26}$/);
      expect(order).toMatchObject({
        entity: 'order',
        amount: 5000,
        currency: 'INR',
        status: 'created',
        metadata: {},
        return_url: null,
        amount_paid: 0,
        bank_details: null,
        return_method: 'POST',
        amount_pending: 5000,
      });
      expect(Number.isInteger(order.created_at)).toBe(true);
      expect(order.created_at).toBeGreaterThanOrEqual(before - 5);
    });

    it('accepts receipt and metadata, in JSON and in form bodies with bracket nesting', async () => {
      const json = await harness().request('POST', '/v1/orders/', {
        auth: merchant,
        json: {
          amount: 100,
          currency: 'INR',
          receipt: 'rcpt-1',
          metadata: { cart: 'c-9', items: 3, gift: true, note: null },
        },
      });
      expect(json.statusCode).toBe(200);
      expect(json.json().data).toMatchObject({
        receipt: 'rcpt-1',
        metadata: { cart: 'c-9', items: 3, gift: true, note: null },
      });

      const form = await harness().request('POST', '/v1/orders', {
        auth: merchant,
        form: 'amount=2500&currency=INR&receipt=r2&metadata[cart]=c-10',
      });
      expect(form.statusCode).toBe(200);
      expect(form.json().data).toMatchObject({
        amount: 2500,
        receipt: 'r2',
        metadata: { cart: 'c-10' },
        amount_pending: 2500,
      });
    });

    const invalid: [string, Record<string, unknown>, string, string][] = [
      ['amount missing', { currency: 'INR' }, 'missing_field', 'amount'],
      ['currency missing', { amount: 5000 }, 'missing_field', 'currency'],
      ['amount a string in JSON', { amount: '5000', currency: 'INR' }, 'invalid_field', 'amount'],
      ['amount a fraction', { amount: 50.5, currency: 'INR' }, 'invalid_field', 'amount'],
      ['amount zero', { amount: 0, currency: 'INR' }, 'amount_out_of_range', 'amount'],
      ['amount negative', { amount: -100, currency: 'INR' }, 'amount_out_of_range', 'amount'],
      ['amount below the minimum', { amount: 99, currency: 'INR' }, 'amount_out_of_range', 'amount'],
      [
        'amount above the maximum',
        { amount: 10_000_000_001, currency: 'INR' },
        'amount_out_of_range',
        'amount',
      ],
      ['currency unknown', { amount: 5000, currency: 'XYZ' }, 'currency_not_supported', 'currency'],
      ['currency lowercase', { amount: 5000, currency: 'inr' }, 'currency_not_supported', 'currency'],
      ['currency too long', { amount: 5000, currency: 'INRS' }, 'invalid_field', 'currency'],
      [
        'receipt too long',
        { amount: 5000, currency: 'INR', receipt: 'r'.repeat(41) },
        'invalid_field',
        'receipt',
      ],
      ['receipt empty', { amount: 5000, currency: 'INR', receipt: '' }, 'invalid_field', 'receipt'],
      [
        'metadata not an object',
        { amount: 5000, currency: 'INR', metadata: 'x' },
        'invalid_field',
        'metadata',
      ],
      [
        'metadata nested',
        { amount: 5000, currency: 'INR', metadata: { a: { b: 1 } } },
        'invalid_field',
        'metadata.a',
      ],
      [
        'metadata array value',
        { amount: 5000, currency: 'INR', metadata: { a: [1] } },
        'invalid_field',
        'metadata.a',
      ],
      [
        'metadata value too long',
        { amount: 5000, currency: 'INR', metadata: { a: 'x'.repeat(501) } },
        'invalid_field',
        'metadata.a',
      ],
      [
        'metadata key too long',
        { amount: 5000, currency: 'INR', metadata: { ['k'.repeat(41)]: 1 } },
        'invalid_field',
        'metadata',
      ],
      [
        'metadata with 21 keys',
        {
          amount: 5000,
          currency: 'INR',
          metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i])),
        },
        'invalid_field',
        'metadata',
      ],
      ['a typo of amount', { ammount: 5000, currency: 'INR' }, 'unknown_field', 'ammount'],
      [
        'a server-owned status',
        { amount: 5000, currency: 'INR', status: 'paid' },
        'server_owned_field',
        'status',
      ],
      [
        'a server-owned amount_paid',
        { amount: 5000, currency: 'INR', amount_paid: 5000 },
        'server_owned_field',
        'amount_paid',
      ],
      ['a server-owned id', { amount: 5000, currency: 'INR', id: 'order_x' }, 'server_owned_field', 'id'],
    ];

    it.each(invalid)('JSON: %s → 400 %s naming %s', async (_name, body, code, field) => {
      const response = await harness().request('POST', '/v1/orders/', { auth: merchant, json: body });
      expect(response.statusCode).toBe(400);
      const error = response.json().error;
      expect(error).toMatchObject({ type: 'invalid_request_error', code, field });
      expect(error.message).toEqual(expect.any(String));
      expect(error.request_id).toBe(response.headers['x-request-id']);
    });

    const invalidForms: [string, string, string, string][] = [
      ['amount missing', 'currency=INR', 'missing_field', 'amount'],
      ['currency missing', 'amount=5000', 'missing_field', 'currency'],
      ['amount not an exact integer', 'amount=50.5&currency=INR', 'invalid_field', 'amount'],
      ['amount with a plus sign', 'amount=%2B5000&currency=INR', 'invalid_field', 'amount'],
      ['amount with leading zeros', 'amount=05000&currency=INR', 'invalid_field', 'amount'],
      ['amount in words', 'amount=five&currency=INR', 'invalid_field', 'amount'],
      ['amount below the minimum', 'amount=1&currency=INR', 'amount_out_of_range', 'amount'],
      ['currency unknown', 'amount=5000&currency=USD', 'currency_not_supported', 'currency'],
      ['receipt too long', `amount=5000&currency=INR&receipt=${'r'.repeat(41)}`, 'invalid_field', 'receipt'],
      ['metadata nested two levels', 'amount=5000&currency=INR&metadata[a][b]=1', 'invalid_body', ''],
      ['a typo of amount', 'ammount=5000&currency=INR', 'unknown_field', 'ammount'],
      ['a server-owned status', 'amount=5000&currency=INR&status=paid', 'server_owned_field', 'status'],
    ];

    it.each(invalidForms)('form: %s → 400 %s', async (_name, body, code, field) => {
      const response = await harness().request('POST', '/v1/orders/', { auth: merchant, form: body });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toMatchObject({ code, field: field || null });
    });

    it('stores nothing when a request is rejected', async () => {
      const other = await harness().merchant();
      await harness().request('POST', '/v1/orders/', { auth: other, json: { amount: 1, currency: 'INR' } });
      await harness().request('POST', '/v1/orders/', { auth: other, form: 'amount=x&currency=INR' });
      const list = await harness().request('GET', '/v1/orders/', { auth: other });
      expect(list.json().data).toEqual([]);
    });
  });

  describe('GET /v1/orders/<id>/', () => {
    it('fetches an order with and without the trailing slash', async () => {
      const created = (
        await harness().request('POST', '/v1/orders/', {
          auth: merchant,
          json: { amount: 700, currency: 'INR' },
        })
      ).json().data;
      for (const url of [`/v1/orders/${created.id}/`, `/v1/orders/${created.id}`]) {
        const response = await harness().request('GET', url, { auth: merchant });
        expect(response.statusCode).toBe(200);
        expect(response.json().data).toEqual(created);
      }
    });

    it("answers 404 for another account's order, exactly as for a missing one", async () => {
      const created = (
        await harness().request('POST', '/v1/orders/', {
          auth: merchant,
          json: { amount: 700, currency: 'INR' },
        })
      ).json().data;
      const stranger = await harness().merchant('Stranger');
      const theirs = await harness().request('GET', `/v1/orders/${created.id}/`, { auth: stranger });
      const missing = await harness().request('GET', '/v1/orders/order_00000000000000000000000000/', {
        auth: stranger,
      });
      expect(theirs.statusCode).toBe(404);
      expect(missing.statusCode).toBe(404);
      expect(theirs.json().error.code).toBe('resource_not_found');
      expect(JSON.stringify(theirs.json())).not.toContain('"amount"');
    });
  });

  describe('GET /v1/orders/', () => {
    it('pages newest first across pages without gaps or repeats', async () => {
      const pager = await harness().merchant('Pager');
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        const response = await harness().request('POST', '/v1/orders/', {
          auth: pager,
          json: { amount: 100 + i, currency: 'INR' },
        });
        ids.push(response.json().data.id);
        harness().clock.advance(1);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const url: string = `/v1/orders/?limit=3${cursor ? `&cursor=${cursor}` : ''}`;
        const page = (await harness().request('GET', url, { auth: pager })).json();
        seen.push(...page.data.map((order: { id: string }) => order.id));
        expect(page.data.length).toBeLessThanOrEqual(3);
        cursor = page.next_cursor;
        expect(page.has_more).toBe(cursor !== null);
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual([...ids].reverse());
    });

    it.each([
      ['limit=0', 'invalid_field', 'limit'],
      ['limit=101', 'invalid_field', 'limit'],
      ['limit=abc', 'invalid_field', 'limit'],
      ['cursor=nope', 'invalid_cursor', 'cursor'],
      ['colour=red', 'unknown_field', 'colour'],
    ])('rejects ?%s', async (query, code, field) => {
      const response = await harness().request('GET', `/v1/orders/?${query}`, { auth: merchant });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toMatchObject({ code, field });
    });
  });
});
