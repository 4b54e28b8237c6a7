import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { choose, createOrder, createPayment, openPage } from '../helpers/payments.js';
import { bodiesFrom, encodings, FUZZ_RUNS, fuzzRoute, idempotencyHeaders, shortText } from './fuzz.js';

const MISSING_SESSION = 'cs_00000000000000000000000000';
const BAD_IDS = ['x', "cs_'--", '%00', '..%2F..%2F', 'cs_zzzzzzzzzzzzzzzzzzzzzzzzzz', 'order_1'];
const FIELDS = [
  'order_id',
  'return_url',
  'customer',
  'customer.name',
  'customer.email',
  'customer.contact',
  'methods',
  'expires_in_minutes',
];

describeEachDatabase('security: fuzzing checkout sessions', (harness) => {
  let merchant: TestAccount;
  let orders: string[];
  let paidOrder: string;
  let sessions: string[];

  beforeAll(async () => {
    merchant = await harness().merchant('Fuzz checkout');
    orders = [];
    for (let i = 0; i < 3; i++) orders.push(await createOrder(harness(), merchant));
    const paid = await createPayment(harness(), merchant);
    await choose(harness(), paid.paymentId, await openPage(harness(), paid.paymentId), 'success');
    paidOrder = paid.orderId;
    sessions = [];
    for (const order of orders) {
      const reply = await harness().request('POST', '/v1/checkout/sessions/', {
        auth: merchant,
        json: { order_id: order, return_url: 'https://merchant.example/r' },
      });
      sessions.push(reply.json().data.id);
    }
  });

  it(`POST /v1/checkout/sessions/: ${FUZZ_RUNS} generated requests, JSON and form`, async () => {
    const valid = fc.record(
      {
        order_id: fc.constantFrom(...orders),
        return_url: fc.constantFrom('https://merchant.example/r', 'http://localhost:4000/back?x=1'),
        customer: fc.record({
          name: shortText(100),
          email: fc.constant('asha@example.com'),
          contact: fc.constant('+919876543210'),
        }),
        methods: fc.uniqueArray(fc.constantFrom('upi', 'netbanking', 'wallet'), {
          minLength: 1,
          maxLength: 3,
        }),
        expires_in_minutes: fc.integer({ min: 5, max: 1440 }),
      },
      { requiredKeys: ['order_id', 'return_url'] },
    );
    const near: Record<string, unknown[]> = {
      order_id: [paidOrder, 'order_00000000000000000000000000', '', 'ORDER'],
      return_url: [
        'http://merchant.example/',
        'javascript:alert(1)',
        '//x',
        'https://u:p@x.example/',
        'https:evil.example',
        ' https://x.example/',
      ],
      methods: [[], ['card'], ['upi', 'upi'], 'upi,wallet', [1]],
      expires_in_minutes: [4, 1441, 0, -1, 5.5, '30', 1e20],
      'customer.email': ['a@', 'x'.repeat(300)],
      'customer.contact': ['12', '+91 98765 43210'],
    };
    const statuses = await fuzzRoute(harness(), {
      method: 'POST',
      url: fc.constantFrom('/v1/checkout/sessions/', '/v1/checkout/sessions'),
      account: merchant,
      body: encodings(bodiesFrom(valid, FIELDS, near)),
      headers: idempotencyHeaders,
      onSuccess(reply) {
        const { data } = reply.json();
        expect(data.id).toMatch(/^cs_/);
        expect(data.status).toBe('open');
      },
    });
    expect(statuses.get(200) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(FUZZ_RUNS / 5);
  }, 300_000);

  it(`GET /v1/checkout/sessions/<id>/: ${FUZZ_RUNS} generated ids`, async () => {
    const statuses = await fuzzRoute(harness(), {
      method: 'GET',
      url: fc
        .oneof(
          { weight: 4, arbitrary: fc.constantFrom(...sessions) },
          { weight: 2, arbitrary: fc.constantFrom(MISSING_SESSION, ...BAD_IDS) },
          { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map(encodeURIComponent) },
        )
        .map((id) => `/v1/checkout/sessions/${id}/`),
      account: merchant,
    });
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(404) ?? 0).toBeGreaterThan(0);
  }, 300_000);
});
