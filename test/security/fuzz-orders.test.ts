import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import {
  anyNumber,
  anyText,
  anyValue,
  encodings,
  FUZZ_RUNS,
  fuzzRoute,
  shortText,
  tenantDigest,
} from './fuzz.js';

/** Valid order bodies, with every optional field sometimes present. */
const validOrder = fc.record(
  {
    amount: fc.integer({ min: 100, max: 10_000_000_000 }),
    currency: fc.constant('INR'),
    receipt: shortText(40),
    metadata: fc.dictionary(
      shortText(40),
      fc.oneof(shortText(500), fc.string({ maxLength: 500 }), fc.integer(), fc.boolean(), fc.constant(null)),
      { maxKeys: 20 },
    ),
  },
  { requiredKeys: ['amount', 'currency'] },
);

/** One field changed to something near the limit, of the wrong type, or hostile. */
const nearValidOrder = fc
  .tuple(
    validOrder,
    fc.constantFrom(
      'amount',
      'currency',
      'receipt',
      'metadata',
      'ammount',
      'status',
      'id',
      'amount_paid',
      'notes',
    ),
    fc.oneof(anyValue, anyNumber, anyText, fc.dictionary(anyText, anyValue, { maxKeys: 25 })),
    fc.boolean(),
  )
  .map(([order, field, value, drop]) => {
    const body: Record<string, unknown> = { ...order };
    if (drop) delete body[field];
    else body[field] = value;
    return body;
  });

const anyOrderBody = fc.oneof(
  { weight: 3, arbitrary: validOrder },
  { weight: 5, arbitrary: nearValidOrder },
  { weight: 2, arbitrary: anyValue },
  { weight: 1, arbitrary: fc.dictionary(anyText, anyValue, { maxKeys: 8 }) },
);

const idempotencyHeaders = fc.oneof(
  { weight: 3, arbitrary: fc.constant({}) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(fc.constantFrom('k-1', 'k-2', 'k-3'), fc.string({ minLength: 1, maxLength: 20 }), anyText)
      .map((key) => ({ 'idempotency-key': key })),
  },
);

/** Percent-encodes; a lone surrogate (not encodable) becomes invalid UTF-8 bytes, another hostile input. */
function percentEncode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return `${encodeURIComponent(text.replace(/[\ud800-\udfff]/g, ''))}%ED%A0%80`;
  }
}

describeEachDatabase('security: fuzzing orders', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant('Fuzz');
  });

  it('the tenant digest changes with every committed write to the account (or its merchants) and with no rolled-back one', async () => {
    const h = harness();
    const partner = await h.partner('Digest Partner');
    const shop = await h.merchant('Digest Shop', { partnerId: partner.id });
    const bystander = await h.merchant('Bystander');
    const digests = async () => [await tenantDigest(h, shop.id), await tenantDigest(h, partner.id)];
    const first = await digests();
    const created = await h.request('POST', '/v1/orders/', {
      auth: shop,
      json: { amount: 500, currency: 'INR' },
    });
    expect(created.statusCode).toBe(200);
    const afterInsert = await digests();
    expect(afterInsert[0]).not.toBe(first[0]);
    expect(afterInsert[1]).not.toBe(first[1]);
    const id = created.json().data.id as string;
    // The same value written again is a write too.
    await h.container.db.query('UPDATE orders SET receipt = receipt WHERE id = $1', [id]);
    const afterUpdate = await digests();
    expect(afterUpdate[0]).not.toBe(afterInsert[0]);
    // A write rolled back leaves no trace.
    await expect(
      h.container.db.transaction(async (tx) => {
        await tx.query('DELETE FROM orders WHERE id = $1', [id]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await digests()).toEqual(afterUpdate);
    await h.container.db.query('DELETE FROM orders WHERE id = $1', [id]);
    expect((await digests())[0]).not.toBe(afterUpdate[0]);
    // Another account's writes are not this one's.
    const before = await digests();
    await h.request('POST', '/v1/orders/', { auth: bystander, json: { amount: 500, currency: 'INR' } });
    expect(await digests()).toEqual(before);
  });

  it(`POST /v1/orders/: ${FUZZ_RUNS} generated requests, JSON and form`, async () => {
    const statuses = await fuzzRoute(harness(), {
      method: 'POST',
      url: fc.constantFrom('/v1/orders/', '/v1/orders'),
      account: merchant,
      body: encodings(anyOrderBody),
      headers: idempotencyHeaders.filter((headers) =>
        Object.values(headers).every((value) => /^[\t\x20-\x7e\x80-\xff]*$/.test(value)),
      ),
      onSuccess(reply) {
        expect(reply.statusCode).toBe(200);
        const { data } = reply.json();
        expect(data.id).toMatch(/^order_/);
        expect(data.amount_paid + data.amount_pending).toBe(data.amount);
      },
    });
    // The generators reach both sides: creations and refusals.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(FUZZ_RUNS / 5);
  }, 300_000);

  it(`GET /v1/orders/: ${FUZZ_RUNS} generated queries`, async () => {
    for (let i = 0; i < 3; i++) {
      await harness().request('POST', '/v1/orders/', {
        auth: merchant,
        json: { amount: 100 + i, currency: 'INR' },
      });
    }
    const param = fc.oneof(
      fc.constantFrom('limit', 'cursor', 'colour', 'limit[]', 'cursor[a]'),
      fc.string({ maxLength: 10 }),
    );
    const value = fc.oneof(
      anyNumber.map(String),
      anyText,
      fc.constantFrom('order_00000000000000000000000000', 'order_zzzzzzzzzzzzzzzzzzzzzzzzzz', 'pay_123'),
    );
    const query = fc
      .array(fc.tuple(param, value), { maxLength: 4 })
      .map((pairs) => pairs.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&'));
    const statuses = await fuzzRoute(harness(), {
      method: 'GET',
      url: query.map((q) => `/v1/orders/?${q}`),
      account: merchant,
      onSuccess(reply) {
        const body = reply.json();
        expect(Object.keys(body).sort()).toEqual(['data', 'has_more', 'next_cursor']);
        expect(Array.isArray(body.data)).toBe(true);
        expect(body.data.length).toBeLessThanOrEqual(100);
      },
    });
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
  }, 300_000);
});
