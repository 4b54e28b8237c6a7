import { afterAll, beforeAll, expect, it } from 'vitest';
import { requestFingerprint } from '../../src/http/idempotency.js';
import { liveVisitor } from '../helpers/dashboard-visitor.js';
import { fakepayAccount } from '../helpers/fakepay/connector.js';
import { Fakepay } from '../helpers/fakepay/server.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { paymentBody } from '../helpers/payments.js';

/**
 * Live refunds through a provider (the Fakepay test provider, over real HTTP): the refund id is the
 * provider's idempotency key, so a resend after a lost answer or a dead attempt never refunds twice;
 * a provider's pending refund is finished by the reconciler's `refundStatus`; its refusal frees the
 * amount. A test key never reaches a live payment.
 */
const ACCOUNT = 'ca_fakepay_refunds';
let fakepay: Fakepay;

beforeAll(async () => {
  fakepay = await Fakepay.start();
});
afterAll(async () => {
  await fakepay.close();
});

describeEachDatabase(
  'live refunds through a provider',
  (harness) => {
    let merchant: TestAccount;
    let testKey: TestAccount;

    beforeAll(async () => {
      const h = harness();
      testKey = await h.merchant('Live Refund Shop');
      merchant = await h.liveKey(testKey);
      const { methods } = h.container.services;
      const live = { ...(await methods.get(merchant.id, 'test')), netbanking: { HDFC: 'HDFC Bank' } };
      await h.container.db.transaction((tx) => methods.set(tx, merchant.id, 'live', live));
    });

    const api = async (method: 'GET' | 'POST', path: string, json?: unknown, headers = {}) =>
      harness().request(method, path, { auth: merchant, json, headers });

    /** A live payment the provider captured (its order paid at the provider, then reconciled). */
    async function capturedPayment(amount = 5000): Promise<string> {
      const order = await api('POST', '/v1/orders/', { amount, currency: 'INR' });
      const created = await api('POST', '/v1/payments/create/s2s/', {
        ...paymentBody(order.json().data.id, { bank: 'HDFC' }),
        amount,
      });
      expect(created.statusCode, created.body).toBe(200);
      const paymentId = created.json().payment_id as string;
      const [providerOrder] = fakepay.ordersFor(paymentId);
      providerOrder!.status = 'paid';
      harness().clock.advance(5_000);
      await harness().container.jobs.paymentSync.run(new AbortController().signal);
      expect((await api('GET', `/v1/payments/${paymentId}/`)).json().data.status).toBe('captured');
      return paymentId;
    }

    const refundSync = async (advanceMs: number) => {
      harness().clock.advance(advanceMs);
      return harness().container.jobs.refundSync.run(new AbortController().signal);
    };
    const fetchRefund = async (id: string) => (await api('GET', `/v1/refunds/${id}/`)).json().data;

    it('a refund the provider processes at once is processed in the answer; the provider made it once, with its amount', async () => {
      fakepay.refundOutcome = 'processed';
      const paymentId = await capturedPayment();
      const response = await api('POST', `/v1/payments/${paymentId}/refunds/`, {
        amount: 1200,
        speed: 'instant',
      });
      expect(response.statusCode, response.body).toBe(200);
      const refund = response.json().data;
      expect(refund).toMatchObject({ status: 'processed', amount: 1200, speed: 'instant' });
      expect(fakepay.refundsFor(refund.id)).toEqual([
        expect.objectContaining({ amount: 1200, speed: 'instant', status: 'processed' }),
      ]);
    });

    it('a test key does not find a live payment or its refunds (404), and writes nothing', async () => {
      const paymentId = await capturedPayment();
      const calls = fakepay.calls.length;
      const refused = await harness().request('POST', `/v1/payments/${paymentId}/refunds/`, {
        auth: testKey,
        json: { amount: 100 },
      });
      expect(refused.statusCode).toBe(404);
      expect(refused.json().error.code).toBe('resource_not_found');
      const listed = await harness().request('GET', `/v1/payments/${paymentId}/refunds/`, { auth: testKey });
      expect(listed.statusCode).toBe(404);
      expect(fakepay.calls.length).toBe(calls);
      expect((await api('GET', `/v1/payments/${paymentId}/`)).json().data.amount_refunded).toBe(0);
    });

    it('a provider that keeps a refund pending: the reconciler asks refundStatus until it is processed', async () => {
      fakepay.refundOutcome = 'pending';
      const paymentId = await capturedPayment();
      const refund = (await api('POST', `/v1/payments/${paymentId}/refunds/`, { amount: 500 })).json().data;
      expect(refund.status).toBe('pending');
      const asked = () => fakepay.calls.filter((call) => call === 'GET /v1/refunds/:id').length;
      const before = asked();
      expect(await refundSync(61_000)).toBeGreaterThan(0);
      expect(asked()).toBe(before + 1);
      expect((await fetchRefund(refund.id)).status).toBe('pending');
      fakepay.settleRefunds('processed');
      await refundSync(10_000);
      expect(await fetchRefund(refund.id)).toMatchObject({ status: 'processed' });
      expect(fakepay.refundsFor(refund.id)).toHaveLength(1);
    });

    it('a provider that refuses: the refund fails and its amount is free again', async () => {
      fakepay.refundOutcome = 'failed';
      const paymentId = await capturedPayment(3000);
      const refund = (await api('POST', `/v1/payments/${paymentId}/refunds/`, {})).json().data;
      expect(refund).toMatchObject({ status: 'failed', error_code: 'refund_declined', amount: 3000 });
      fakepay.refundOutcome = 'processed';
      const again = await api('POST', `/v1/payments/${paymentId}/refunds/`, {});
      expect(again.json().data).toMatchObject({ status: 'processed', amount: 3000 });
    });

    it.each(['reset', 'bad_gateway_html', 'garbage'] as const)(
      'an answer lost after the provider acted (%s): pending, then resent with the same id, refunded once',
      async (fault) => {
        fakepay.refundOutcome = 'processed';
        const paymentId = await capturedPayment();
        fakepay.faults = { refund: fault };
        const refund = (await api('POST', `/v1/payments/${paymentId}/refunds/`, { amount: 900 })).json().data;
        expect(refund.status).toBe('pending');
        expect(fakepay.refundsFor(refund.id)).toHaveLength(1);
        // The operator sees why the refund is still pending.
        const line = harness()
          .logs()
          .split('\n')
          .find((text) => text.includes(refund.id) && text.includes('no answer about the refund'));
        expect(line, harness().logs().slice(-2000)).toBeDefined();
        expect(JSON.parse(line!).reason).toEqual(expect.any(String));
        fakepay.faults = {};
        // Within the request's lease nothing is resent; past it the reconciler sends it again.
        expect(await refundSync(1_000)).toBe(0);
        await refundSync(60_000);
        expect(await fetchRefund(refund.id)).toMatchObject({ status: 'processed' });
        expect(fakepay.refundsFor(refund.id)).toHaveLength(1);
        expect((await api('GET', `/v1/payments/${paymentId}/`)).json().data).toMatchObject({
          amount_refunded: 900,
        });
      },
    );

    /** A payment the provider authorised after another payment of its order was captured: owed back. */
    async function owedBack(): Promise<string> {
      const order = (await api('POST', '/v1/orders/', { amount: 5000, currency: 'INR' })).json().data.id;
      const start = async () =>
        (await api('POST', '/v1/payments/create/s2s/', paymentBody(order, { bank: 'HDFC' }))).json()
          .payment_id as string;
      const late = await start();
      const winner = await start();
      const sync = () => harness().container.jobs.paymentSync.run(new AbortController().signal);
      fakepay.ordersFor(winner)[0]!.status = 'paid';
      harness().clock.advance(5_000);
      await sync();
      fakepay.settle(fakepay.ordersFor(late)[0]!, 'paid');
      harness().clock.advance(10_000);
      await sync();
      const fetched = (await api('GET', `/v1/payments/${late}/`)).json().data;
      expect(fetched).toMatchObject({
        status: 'failed',
        error_code: 'order_already_paid',
        authorised_at: expect.any(Number),
        bank_reference: expect.stringMatching(/^BRN/),
      });
      // Its event says what a fetch says: the bank's reference is in both.
      const [event] = await harness().container.db.query<{ payload: { payment: Record<string, unknown> } }>(
        `SELECT payload FROM events WHERE type = 'payment.late_authorisation' AND payload->'payment'->>'id' = $1`,
        [late],
      );
      expect(event?.payload.payment.bank_reference).toBe(fetched.bank_reference);
      return late;
    }

    const refundsOf = async (paymentId: string) =>
      (await api('GET', `/v1/payments/${paymentId}/refunds/`)).json().data as Array<Record<string, unknown>>;

    it('a late authorisation on a paid order is refunded in full by the reconciler', async () => {
      fakepay.refundOutcome = 'processed';
      const paymentId = await owedBack();
      await refundSync(1_000);
      const [refund, ...others] = await refundsOf(paymentId);
      expect(others).toEqual([]);
      expect(refund).toMatchObject({ status: 'processed', amount: 5000, receipt: null, metadata: {} });
      expect(fakepay.refundsFor(String(refund?.id))).toEqual([expect.objectContaining({ amount: 5000 })]);
      expect((await api('GET', `/v1/payments/${paymentId}/`)).json().data).toMatchObject({
        status: 'failed',
        amount_refunded: 5000,
        refund_status: 'full',
      });
      // Refunded: the reconciler leaves it alone.
      await refundSync(60_000);
      expect(await refundsOf(paymentId)).toHaveLength(1);
    });

    it('an automatic refund the provider keeps refusing is tried three times, spaced, then left to the merchant', async () => {
      fakepay.refundOutcome = 'failed';
      const paymentId = await owedBack();
      const statuses = async () =>
        (await refundsOf(paymentId)).map((refund) => [refund.status, refund.amount]);
      for (let round = 0; round < 5; round++) await refundSync(1_000);
      // A refusal may pass (the provider's balance, a bank's outage): the next try waits.
      expect(await statuses()).toEqual([['failed', 5000]]);
      await refundSync(9 * 60_000);
      expect(await statuses()).toHaveLength(1);
      await refundSync(60_000);
      expect(await statuses()).toEqual([
        ['failed', 5000],
        ['failed', 5000],
      ]);
      await refundSync(5 * 3_600_000);
      expect(await statuses()).toHaveLength(2);
      await refundSync(3_600_000);
      for (let round = 0; round < 3; round++) await refundSync(86_400_000);
      expect(await statuses()).toEqual([
        ['failed', 5000],
        ['failed', 5000],
        ['failed', 5000],
      ]);
      expect((await api('GET', `/v1/payments/${paymentId}/`)).json().data).toMatchObject({
        amount_refunded: 0,
        refund_status: null,
      });
      // Then the merchant refunds it like a captured payment: from the dashboard's Refund form…
      fakepay.refundOutcome = 'processed';
      const visitor = await liveVisitor(harness, merchant.id, '198.51.100.78');
      const page = `/dashboard/payments/${paymentId}/`;
      const fromForm = await visitor.submit(page, `${page}refunds/`, { amount: 2000 });
      expect(fromForm.statusCode, fromForm.body).toBe(303);
      // … and through the API, for the rest.
      const manual = await api('POST', `/v1/payments/${paymentId}/refunds/`, {});
      expect(manual.statusCode, manual.body).toBe(200);
      expect(manual.json().data).toMatchObject({ status: 'processed', amount: 3000 });
      expect((await api('GET', `/v1/payments/${paymentId}/`)).json().data).toMatchObject({
        status: 'failed',
        amount_refunded: 5000,
        refund_status: 'full',
      });
      const again = await api('POST', `/v1/payments/${paymentId}/refunds/`, {});
      expect(again.json().error).toMatchObject({ code: 'refund_exceeds_captured' });
      await refundSync(86_400_000);
      expect(await statuses()).toHaveLength(5);
    });

    it('a keyed refund whose attempt died after the provider call resumes on retry: one refund at the provider', async () => {
      fakepay.refundOutcome = 'pending';
      const paymentId = await capturedPayment();
      const path = `/v1/payments/${paymentId}/refunds/`;
      const body = { amount: 400 };
      const principal = { accountId: merchant.id, mode: 'live' as const };
      const { services } = harness().container;
      let made: string | undefined;
      await expect(
        services.idempotency.execute(
          principal,
          'live-refund-crash-1',
          requestFingerprint('POST', path, body),
          'phased',
          async (work) => {
            made = (await services.refunds.create(principal, paymentId, body, { ids: work.ids })).id;
            throw new Error('the process died');
          },
        ),
      ).rejects.toThrow('the process died');
      expect(fakepay.refundsFor(made!)).toHaveLength(1);
      const posts = fakepay.calls.filter((call) => call === 'POST /v1/refunds').length;
      const retry = await api('POST', path, body, { 'idempotency-key': 'live-refund-crash-1' });
      expect(retry.statusCode, retry.body).toBe(200);
      expect(retry.json().data.id).toBe(made);
      // The provider acknowledged it the first time: the retry does not send it again.
      expect(fakepay.calls.filter((call) => call === 'POST /v1/refunds').length).toBe(posts);
      expect(fakepay.refundsFor(made!)).toHaveLength(1);
      expect((await api('GET', path)).json().data).toHaveLength(1);
    });
  },
  {},
  () => ({
    liveConnector: fakepayAccount(fakepay, ACCOUNT),
  }),
);
