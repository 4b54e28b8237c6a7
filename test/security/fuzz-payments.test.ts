import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { SANDBOX_CHOICES } from '../../src/connectors/sandbox/sandbox.connector.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { choose, createOrder, createPayment, eventsOf, openPage } from '../helpers/payments.js';
import {
  bodiesFrom,
  encodings,
  expectErrorPage,
  FUZZ_RUNS,
  fuzzLists,
  fuzzRoute,
  idempotencyHeaders,
  listQueries,
  shortText,
} from './fuzz.js';
import { SecretLedger } from './secrets.js';

const ORDERS = 4;

describeEachDatabase('security: fuzzing payments', (harness) => {
  const ledger = new SecretLedger();
  let merchant: TestAccount;
  let orders: string[];
  /** Captured payments the refund fuzzing works on. */
  const captured: string[] = [];
  beforeAll(async () => {
    merchant = await harness().merchant('Fuzz payments');
    ledger.add(merchant);
    orders = [];
    for (let i = 0; i < ORDERS; i++) orders.push(await createOrder(harness(), merchant, 5000));
    // The key that signs return POSTs: the logs must never hold it either.
    const secret = await harness().request('GET', '/v1/payments/return-signing-secret/', { auth: merchant });
    ledger.addValue(secret.json().data.secret);
  });

  /** Valid S2S bodies over the suite's orders, net banking, wallet and UPI, optional fields sometimes. */
  const validPayment = () =>
    fc
      .record(
        {
          amount: fc.constant(5000),
          currency: fc.constant('INR'),
          contact: fc.constantFrom('+919876543210', '9876543210'),
          name: fc.string({ minLength: 1, maxLength: 100 }).filter((name) => name.trim().length > 0),
          email: fc.constantFrom('asha@example.com', 'a.b+c@shop.example.in', '"><script>@x.example'),
          order_id: fc.constantFrom(...orders),
          return_url: fc.constantFrom(
            'https://merchant.example/return',
            'http://localhost:3000/r',
            'https://merchant.example/r?x="><script>',
          ),
          method: fc.constantFrom('netbanking', 'wallet', 'upi'),
          description: shortText(255),
          metadata: fc.dictionary(shortText(40), shortText(100), { maxKeys: 5 }),
        },
        {
          requiredKeys: [
            'amount',
            'currency',
            'contact',
            'name',
            'email',
            'order_id',
            'return_url',
            'method',
          ],
        },
      )
      .chain(
        (body): fc.Arbitrary<Record<string, unknown>> =>
          // The instrument that fits the method, so that the deeper rules are reached.
          body.method === 'netbanking'
            ? fc.constantFrom('ICIC', 'HDFC', 'hdfc').map((bank) => ({ ...body, bank }))
            : body.method === 'wallet'
              ? fc.constantFrom('payzapp', 'PayZapp', 'mobikwik').map((wallet) => ({ ...body, wallet }))
              : fc
                  .record(
                    {
                      flow: fc.constantFrom('intent', 'qr'),
                      expiry_minutes: fc.integer({ min: 5, max: 60 }),
                    },
                    { requiredKeys: ['flow'] },
                  )
                  .map((upi) => ({ ...body, upi })),
      );

  const near: Record<string, unknown[]> = {
    amount: [4999, 5001, 0, -5000, '5000', 5000.5],
    currency: ['inr', 'USD', 'IN', "'--"],
    contact: ['+91', '98765 43210', '+9198765432101234', 'abc'],
    email: ['no-at.example.com', 'a@b', 'a b@c.example', 'a@@b.example'],
    order_id: ['order_00000000000000000000000000', 'order_x', "order'--", 'ORDER_1'],
    return_url: [
      'javascript:alert(1)',
      'http://merchant.example/r',
      'https://u:p@merchant.example/',
      '/relative',
      'data:text/html,x',
      'https:evil.example',
      'https:/\\evil.example',
      ' https://merchant.example/return',
    ],
    method: ['upi', 'card', 'NETBANKING', ''],
    bank: ['NOPE', 'payzapp', '', 'ICIC '],
    wallet: ['nope', 'ICIC', ''],
    upi: [
      'qr',
      { flow: 'collect' },
      { flow: 'collect', vpa: 'success@kosh' },
      { flow: 'collect', vpa: 'no-handle' },
      { flow: 'qr', vpa: 'a@b' },
      { flow: 'intent', expiry_minutes: 4 },
      { flow: 'intent', expiry_minutes: 61 },
      { flow: 'intent', expiry_minutes: 10.5 },
      { flow: 'intent', expiry_minutes: '10' },
      { flow: 'card' },
      { flow: 'qr', extra: true },
      { flow: 'collect', vpa: `${'v'.repeat(300)}@kosh` },
      { flow: 'collect', vpa: 'a\u0000b@kosh' },
    ],
    name: ['', ' ', 'a\u0000b', 'x'.repeat(101), 'line\nbreak'],
    description: ['x'.repeat(256), 'cr\rhere'],
  };

  it(`POST /v1/payments/create/s2s/: ${FUZZ_RUNS} generated requests, JSON and form`, async () => {
    const fields = [
      'amount',
      'currency',
      'contact',
      'name',
      'email',
      'order_id',
      'return_url',
      'method',
      'bank',
      'wallet',
      'upi',
      'description',
      'metadata',
      'amount_paid',
    ];
    let upiStarted = 0;
    const statuses = await fuzzRoute(harness(), {
      method: 'POST',
      url: fc.constantFrom('/v1/payments/create/s2s/', '/v1/payments/create/s2s'),
      account: merchant,
      body: encodings(bodiesFrom(validPayment(), fields, near)),
      headers: idempotencyHeaders,
      onSuccess(reply) {
        expect(reply.statusCode).toBe(200);
        const body = reply.json();
        expect(body.payment_id).toMatch(/^pay_/);
        expect(['html_form', 'redirect', 'upi_intent', 'upi_qr', 'upi_collect']).toContain(
          body.next[0].action,
        );
        if (String(body.next[0].action).startsWith('upi_')) upiStarted++;
      },
    });
    expect(upiStarted).toBeGreaterThan(0);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(FUZZ_RUNS / 5);
  }, 300_000);

  it(`GET /v1/payments/ and /v1/orders/<id>/payments/: ${FUZZ_RUNS} generated queries each`, async () => {
    const statuses = await fuzzLists(harness(), merchant, [
      listQueries([], ['pay_00000000000000000000000000']).map((query) => `/v1/payments/?${query}`),
      fc
        .tuple(
          fc.constantFrom(...orders, 'order_00000000000000000000000000', 'x', "order_'--", '%00', '..%2F'),
          listQueries([], ['pay_00000000000000000000000000']),
        )
        .map(([order, query]) => `/v1/orders/${order}/payments/?${query}`),
    ]);
    for (const counts of statuses) expect(counts.get(400) ?? 0).toBeGreaterThan(0);
  }, 300_000);

  it(`POST /v1/payments/<id>/refunds/: ${FUZZ_RUNS} generated requests, JSON and form`, async () => {
    // Captured payments large enough that most valid refunds fit, one payment not captured, and ids
    // that name nothing (or another tenant's nothing).
    // Many: a body whose amount was dropped refunds all that is left of its payment.
    for (let i = 0; i < 40; i++) {
      const amount = 100_000_000;
      const order = await createOrder(harness(), merchant, amount);
      const { paymentId } = await createPayment(harness(), merchant, { amount }, order);
      await choose(harness(), paymentId, await openPage(harness(), paymentId), 'success');
      captured.push(paymentId);
    }
    const open = (await createPayment(harness(), merchant, {}, await createOrder(harness(), merchant)))
      .paymentId;
    const validRefund = fc.record(
      {
        amount: fc.integer({ min: 1, max: 5_000 }),
        speed: fc.constantFrom('normal', 'instant'),
        receipt: fc.string({ minLength: 1, maxLength: 40 }),
        metadata: fc.dictionary(shortText(40), shortText(100), { maxKeys: 5 }),
      },
      // Without an amount a refund takes all that is left: bodiesFrom drops it now and then.
      { requiredKeys: ['amount'] },
    );
    const nearRefund: Record<string, unknown[]> = {
      amount: [0, -1, 1.5, '100', 1e308, 200_000_000, Number.MAX_SAFE_INTEGER + 1, null],
      speed: ['fast', 'INSTANT', '', null],
      receipt: ['', 'r'.repeat(41), 7],
      metadata: ['x', [1], { a: { b: 1 } }],
    };
    const statuses = await fuzzRoute(harness(), {
      method: 'POST',
      // Weighted, not one id among many: each kind of target is asked often enough (about a tenth of
      // the requests each for the payment not captured and the ids naming nothing) that its refusal
      // shows up in every run, whatever the seed.
      url: fc
        .oneof(
          { weight: 8, arbitrary: fc.constantFrom(...captured) },
          { weight: 1, arbitrary: fc.constant(open) },
          { weight: 1, arbitrary: fc.constantFrom('pay_00000000000000000000000000', "pay_'--", '..%2F') },
        )
        .map((id) => `/v1/payments/${id}/refunds/`),
      account: merchant,
      body: encodings(
        bodiesFrom(validRefund, ['amount', 'speed', 'receipt', 'metadata', 'payment_id'], nearRefund),
      ),
      headers: idempotencyHeaders,
      onSuccess(reply) {
        expect(reply.statusCode).toBe(200);
        expect(reply.json().data).toMatchObject({ id: expect.stringMatching(/^rfnd_/), entity: 'refund' });
      },
    });
    expect(statuses.get(200) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(FUZZ_RUNS / 5);
    expect(statuses.get(404) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(409) ?? 0).toBeGreaterThan(0);
    // Whatever was accepted, no payment is refunded past its amount.
    expect(
      await harness().container.db.query(
        `SELECT p.id FROM payments p WHERE p.amount_refunded <>
           (SELECT coalesce(sum(r.amount), 0) FROM refunds r WHERE r.payment_id = p.id AND r.status <> 'failed')`,
      ),
    ).toEqual([]);
  }, 300_000);

  it(`GET /v1/refunds/ and /v1/payments/<id>/refunds/: ${FUZZ_RUNS} generated queries each`, async () => {
    const statuses = await fuzzLists(harness(), merchant, [
      listQueries(['payment_id', 'status'], ['rfnd_00000000000000000000000000', 'processed', 'pending']).map(
        (query) => `/v1/refunds/?${query}`,
      ),
      fc
        .tuple(
          fc.constantFrom(...captured, 'pay_00000000000000000000000000', 'x', "pay_'--", '%00', '..%2F'),
          listQueries([], ['rfnd_00000000000000000000000000']),
        )
        .map(([payment, query]) => `/v1/payments/${payment}/refunds/?${query}`),
    ]);
    for (const counts of statuses) expect(counts.get(400) ?? 0).toBeGreaterThan(0);
  }, 300_000);

  it(`POST /v1/payments/<id>/upi-simulator/ (the sandbox UPI app): ${FUZZ_RUNS} generated requests, form and JSON`, async () => {
    const startUpi = async () =>
      (await createPayment(harness(), merchant, { method: 'upi', bank: undefined, upi: { flow: 'qr' } }))
        .paymentId;
    /** Opens the app's page, as a customer's phone does: the payment now holds a fresh token. */
    const appToken = async (paymentId: string) => {
      const page = await harness().request('GET', `/v1/payments/${paymentId}/upi-simulator/`);
      expect(page.statusCode, page.body).toBe(200);
      return /name="token" value="([^"]+)"/.exec(page.body)?.[1] as string;
    };
    // Open payments whose tokens the fuzzer never learns, one whose token it knows, one already
    // paid, and a net-banking payment (not the app's).
    const open = [await startUpi(), await startUpi(), await startUpi()];
    for (const id of open) await appToken(id);
    const known = await startUpi();
    const knownToken = await appToken(known);
    const paid = await startUpi();
    await harness().request('POST', `/v1/payments/${paid}/upi-simulator/`, {
      form: { token: await appToken(paid), choice: 'success' },
    });
    const netbanking = (await createPayment(harness(), merchant)).paymentId;

    const valid = fc.record({
      token: fc.oneof(
        { weight: 1, arbitrary: fc.constant(knownToken) },
        { weight: 2, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{43}$/) },
        { weight: 2, arbitrary: shortText(100) },
      ),
      choice: fc.constantFrom(...SANDBOX_CHOICES, 'expire'),
    });
    const nearSimulator: Record<string, unknown[]> = {
      token: ['', ' ', 'x'.repeat(101), '\u0000', 7, ['a', 'b'], { a: 1 }, null],
      choice: ['SUCCESS', 'success ', 'approve', '', 'expire\u0000', ['success'], 1, null, 'late-success'],
    };
    const statuses = await fuzzRoute(harness(), {
      method: 'POST',
      // Weighted, as the refunds' targets are: the payments the app serves and the ids naming nothing
      // (the 404s) each about half the requests, so every refusal shows up in every run, whatever the seed.
      url: fc
        .oneof(
          { weight: 7, arbitrary: fc.constantFrom(...open, known) },
          {
            weight: 7,
            arbitrary: fc.constantFrom('pay_00000000000000000000000000', "pay_'--", '%00', '..%2F'),
          },
          { weight: 1, arbitrary: fc.constantFrom(paid, netbanking, 'p'.repeat(200)) },
        )
        .chain((id) =>
          fc.constantFrom(`/v1/payments/${id}/upi-simulator/`, `/v1/payments/${id}/upi-simulator`),
        ),
      account: merchant,
      body: encodings(bodiesFrom(valid, ['token', 'choice'], nearSimulator)),
      expectError: expectErrorPage,
      onSuccess(reply) {
        expect(reply.statusCode).toBe(200);
        expect(reply.headers['content-type']).toMatch(/^text\/html/);
        expect(reply.body).toContain('<h1>Kosh sandbox UPI app</h1>');
      },
    });
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(FUZZ_RUNS / 5);
    expect(statuses.get(404) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(statuses.get(409) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    // No wrong token moved a payment: the open ones are open and told nobody anything.
    const events = await eventsOf(harness(), merchant.id);
    const eventsFor = (id: string) => events.filter((event) => event.payload.payment?.id === id);
    for (const id of open) {
      const payment = (await harness().request('GET', `/v1/payments/${id}/`, { auth: merchant })).json().data;
      expect(payment.status).toBe('created');
      expect(eventsFor(id)).toEqual([]);
    }
    expect(eventsFor(paid).filter((event) => event.type === 'payment.captured')).toHaveLength(1);
  }, 300_000);

  it('logs no secret, no Authorization value', () => {
    ledger.expectCleanLogs(harness());
  });
});
