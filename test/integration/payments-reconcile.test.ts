import { afterAll, beforeAll, expect, it } from 'vitest';
import { backgroundJobs } from '../../src/jobs/jobs.js';
import { type JobRunner, startJobs } from '../../src/jobs/runner.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { paymentBody } from '../helpers/payments.js';

/**
 * The sandbox's real-bank outcomes settled by the reconciler in real time, over HTTP against a
 * listening Kosh with its background jobs running: pending answers that settle after
 * KOSH_SANDBOX_SETTLE_SECONDS, a late authorisation after KOSH_PENDING_TIMEOUT_SECONDS, and the
 * automatic refund of one whose order another payment paid (KOSH_SANDBOX_REFUND_SECONDS).
 */
const SETTLE = 2;
const TIMEOUT = 10;

describeEachDatabase(
  'sandbox outcomes settled by the reconciler',
  (harness) => {
    let base: string;
    let merchant: TestAccount;
    let jobs: JobRunner;

    beforeAll(async () => {
      const h = harness();
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(h.app.server.address() as { port: number }).port}`;
      jobs = startJobs(backgroundJobs(h.container), h.container.log);
      merchant = await h.merchant('Reconciled Shop');
    });
    afterAll(async () => {
      await jobs?.stop();
    });

    /** An API answer: `{ data }` for objects and lists, `{ payment_id }` for the S2S payment. */
    interface Answer {
      data: Record<string, unknown> & { id: string; status: string } & {
        filter: Array<{ status: string }>['filter'];
      };
      payment_id: string;
    }

    async function api(method: 'GET' | 'POST', path: string, json?: unknown): Promise<Answer> {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: merchant.auth,
          ...(json === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as Answer;
    }

    const newOrder = async () =>
      (await api('POST', '/v1/orders/', { amount: 5000, currency: 'INR' })).data.id as string;

    /** A payment on the order, and the customer's choice on the sandbox page; returns when it was chosen. */
    async function pay(orderId: string, choice: string, bank = 'ICIC') {
      const { payment_id: paymentId } = await api(
        'POST',
        '/v1/payments/create/s2s/',
        paymentBody(orderId, { bank }),
      );
      const page = await (await fetch(`${base}/v1/payments/${paymentId}/authentication/`)).text();
      const token = /name="token" value="([^"]+)"/.exec(page)?.[1] ?? '';
      const chosenAt = Date.now();
      const returned = await fetch(`${base}/v1/payments/${paymentId}/authentication/`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, choice }).toString(),
      });
      const status = /name="status" value="([^"]+)"/.exec(await returned.text())?.[1];
      return { paymentId: paymentId as string, chosenAt, returnedStatus: status };
    }

    const payment = async (id: string) => (await api('GET', `/v1/payments/${id}/`)).data;

    /** Polls the payment until `done` holds; returns it and the seconds since `from`. */
    async function waitFor(
      id: string,
      from: number,
      done: (p: Record<string, unknown>) => boolean,
      seconds: number,
    ) {
      const deadline = from + seconds * 1000;
      for (;;) {
        const current = await payment(id);
        if (done(current)) return { payment: current, after: (Date.now() - from) / 1000 };
        if (Date.now() > deadline)
          throw new Error(`payment ${id} is still ${JSON.stringify(current)} after ${seconds} s`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }

    const eventTypes = async (id: string) =>
      (
        await harness().container.db.query<{ type: string }>(
          `SELECT type FROM events WHERE payload->'payment'->>'id' = $1 ORDER BY id`,
          [id],
        )
      ).map((row) => row.type);

    it.concurrent('pending_success: captured and its order paid within 15 s of the choice', async () => {
      const orderId = await newOrder();
      const { paymentId, chosenAt, returnedStatus } = await pay(orderId, 'pending_success');
      expect(returnedStatus).toBe('pending');
      const { after } = await waitFor(paymentId, chosenAt, (p) => p.status === 'captured', 15);
      expect(after).toBeGreaterThanOrEqual(SETTLE - 0.5);
      expect((await api('GET', `/v1/orders/${orderId}/`)).data.status).toBe('paid');
    });

    it.concurrent('pending_failure: failed with payment_declined within 15 s of the choice', async () => {
      const { paymentId, chosenAt, returnedStatus } = await pay(await newOrder(), 'pending_failure', 'HDFC');
      expect(returnedStatus).toBe('pending');
      const { payment: failed } = await waitFor(paymentId, chosenAt, (p) => p.status !== 'pending', 15);
      expect(failed).toMatchObject({ status: 'failed', error_code: 'payment_declined' });
    });

    // The waits below are bounded by the reconciler's schedule (up to 90 and 120 s), not by the default test timeout.
    it.concurrent('late_success: timed out 10–20 s after the choice, then captured late within 90 s', {
      timeout: 150_000,
    }, async () => {
      const orderId = await newOrder();
      const { paymentId, chosenAt, returnedStatus } = await pay(orderId, 'late_success');
      expect(returnedStatus).toBe('pending');
      const timedOut = await waitFor(paymentId, chosenAt, (p) => p.status !== 'pending', 20);
      expect(timedOut.payment).toMatchObject({ status: 'failed', error_code: 'payment_timed_out' });
      expect(timedOut.after).toBeGreaterThanOrEqual(TIMEOUT);
      expect(timedOut.after).toBeLessThanOrEqual(20);
      await waitFor(paymentId, chosenAt, (p) => p.status === 'captured', 90);
      expect((await api('GET', `/v1/orders/${orderId}/`)).data.status).toBe('paid');
      expect(await eventTypes(paymentId)).toEqual([
        'payment.pending',
        'payment.failed',
        'payment.captured',
        'order.paid',
      ]);
    });

    it.concurrent('late_success on an order another payment paid meanwhile: never captured, its authorisation recorded and refunded in full', {
      timeout: 150_000,
    }, async () => {
      const orderId = await newOrder();
      const late = await pay(orderId, 'late_success');
      const winner = await pay(orderId, 'success', 'HDFC');
      expect(winner.returnedStatus).toBe('captured');
      const { payment: refused } = await waitFor(
        late.paymentId,
        late.chosenAt,
        (p) => p.authorised_at !== null,
        90,
      );
      expect(refused).toMatchObject({ status: 'failed', error_code: 'order_already_paid' });
      // The customer's money goes back without anyone acting: a full refund, processed.
      const { payment: refunded, after } = await waitFor(
        late.paymentId,
        late.chosenAt,
        (p) => p.refund_status === 'full',
        120,
      );
      expect(refunded).toMatchObject({ status: 'failed', amount_refunded: 5000 });
      const deadline = Date.now() + 15_000;
      let refunds: Array<Record<string, unknown>> = [];
      while (Date.now() < deadline) {
        refunds = (await api('GET', `/v1/payments/${late.paymentId}/refunds/`)).data as never;
        if (refunds.every((refund) => refund.status === 'processed')) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(refunds).toEqual([
        expect.objectContaining({
          amount: 5000,
          status: 'processed',
          payment_id: late.paymentId,
          order_id: orderId,
        }),
      ]);
      expect(after).toBeLessThan(120);
      expect(await eventTypes(late.paymentId)).toEqual([
        'payment.pending',
        'payment.failed',
        'payment.late_authorisation',
        'refund.created',
        'refund.processed',
      ]);
      // Nothing is left to ask: the reconciler will not touch it again.
      const [row] = await harness().container.db.query<{ next_sync_at: Date | null; refund_due: boolean }>(
        'SELECT next_sync_at, refund_due FROM payments WHERE id = $1',
        [late.paymentId],
      );
      expect(row).toEqual({ next_sync_at: null, refund_due: true });
      expect(
        (await api('GET', `/v1/orders/${orderId}/payments/`)).data.filter(
          (p: { status: string }) => p.status === 'captured',
        ),
      ).toHaveLength(1);
    });
  },
  {
    KOSH_SANDBOX_SETTLE_SECONDS: String(SETTLE),
    KOSH_PENDING_TIMEOUT_SECONDS: String(TIMEOUT),
    KOSH_PAYMENT_SYNC_INTERVAL_MS: '200',
    KOSH_SANDBOX_REFUND_SECONDS: '1',
  },
  { realClock: true },
);
