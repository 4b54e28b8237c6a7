import { afterAll, beforeAll, expect, it } from 'vitest';
import { fakepayAccount } from '../helpers/fakepay/connector.js';
import { Fakepay } from '../helpers/fakepay/server.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { paymentBody, returnFields } from '../helpers/payments.js';

/**
 * No check waits forever: a provider whose status API answers 502 pages keeps a payment `pending`
 * until the pending timeout (here 60 s), which fails it `payment_timed_out`; the reconciler keeps
 * asking, and once the provider recovers and says the customer paid, the payment is captured at
 * the next question — at most 5 minutes later in the first hour after the timeout (docs/payments.md,
 * "How long a late success takes").
 */
const ACCOUNT = 'ca_fakepay_late';
const PENDING_TIMEOUT_SECONDS = 60;
const LATE_BOUND_SECONDS = 300;
let fakepay: Fakepay;

beforeAll(async () => {
  fakepay = await Fakepay.start();
  fakepay.webhookTiming = 'none';
});
afterAll(async () => {
  await fakepay.close();
});

describeEachDatabase(
  'a late success after provider outages',
  (harness) => {
    let merchant: TestAccount;

    beforeAll(async () => {
      merchant = await harness().liveKey(await harness().merchant('Late Shop'));
    });

    const row = async (id: string) =>
      (
        await harness().container.db.query<{
          status: string;
          error_code: string | null;
          next_sync_at: Date | null;
          pending_at: Date | null;
          captured_at: Date | null;
        }>('SELECT status, error_code, next_sync_at, pending_at, captured_at FROM payments WHERE id = $1', [
          id,
        ])
      )[0]!;
    const seconds = (from: Date, to: Date) => (to.getTime() - from.getTime()) / 1000;

    /** Moves the clock to the payment's next question and lets the reconciler ask; returns the gap. */
    async function nextQuestion(id: string): Promise<number> {
      const { next_sync_at } = await row(id);
      expect(next_sync_at).not.toBeNull();
      const now = harness().clock.now();
      const gap = Math.max(0, seconds(now, next_sync_at!));
      harness().clock.advance(gap * 1000);
      expect(await harness().container.jobs.paymentSync.run(new AbortController().signal)).toBe(1);
      return gap;
    }

    /**
     * A payment whose customer is at the provider's bank page: its id, and the bank's decision as
     * the customer's browser posts it (the provider's return page, read into its fields).
     */
    async function atTheBank() {
      const order = await harness().request('POST', '/v1/orders/', {
        auth: merchant,
        json: { amount: 5000, currency: 'INR' },
      });
      const created = await harness().request('POST', '/v1/payments/create/s2s/', {
        auth: merchant,
        json: paymentBody(order.json().data.id, { bank: 'HDFC' }),
      });
      expect(created.statusCode, created.body).toBe(200);
      const paymentId = created.json().payment_id as string;
      const page = await harness().request('GET', `/v1/payments/${paymentId}/authentication/`);
      const bankUrl =
        page.statusCode === 302
          ? String(page.headers.location)
          : (/<form id="kosh-provider" method="POST" action="([^"]+)"/.exec(page.body)?.[1] ?? '');
      expect(bankUrl.startsWith(fakepay.url), page.body).toBe(true);
      const decide = async (choice: string) =>
        returnFields(
          await (
            await fetch(`${bankUrl.replace(/\?.*$/, '')}/decide`, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: `choice=${choice}`,
            })
          ).text(),
        );
      return { paymentId, decide };
    }

    it('stays pending until the timeout, fails payment_timed_out, then captures within 5 minutes of the recovery', async () => {
      // The customer acts at the provider's bank page, which has no answer yet: the provider's
      // signed return says so. Then the provider's status API breaks.
      const { paymentId, decide } = await atTheBank();
      const signed = await decide('pending');
      fakepay.faults = { status: 'bad_gateway_html' };
      const statusCalls = () => fakepay.calls.filter((call) => call === 'GET /v1/orders/:id').length;
      const callsBefore = statusCalls();
      expect(signed).toMatchObject({ status: 'pending', signature: expect.stringMatching(/^[0-9a-f]{64}$/) });
      const back = await harness().request('POST', `/v1/payments/${paymentId}/callback/`, { form: signed });
      expect(returnFields(back.body).status).toBe('pending');
      const pendingAt = (await row(paymentId)).pending_at!;
      expect(pendingAt).not.toBeNull();

      // Every answer is a 502 page: pending until the timeout, asked exactly at it, then failed.
      let asks = 0;
      while ((await row(paymentId)).status === 'pending') {
        await nextQuestion(paymentId);
        asks += 1;
        expect(asks).toBeLessThan(30);
      }
      const timedOut = await row(paymentId);
      expect(timedOut).toMatchObject({ status: 'failed', error_code: 'payment_timed_out' });
      expect(seconds(pendingAt, harness().clock.now())).toBe(PENDING_TIMEOUT_SECONDS);

      // Still 502s for 20 minutes: the payment stays failed and is asked at least every 5 minutes.
      const timeoutAt = harness().clock.now();
      while (seconds(timeoutAt, harness().clock.now()) < 20 * 60) {
        expect(await nextQuestion(paymentId)).toBeLessThanOrEqual(LATE_BOUND_SECONDS);
        expect(await row(paymentId)).toMatchObject({ status: 'failed', error_code: 'payment_timed_out' });
      }
      expect(statusCalls() - callsBefore).toBeGreaterThan(asks);

      // The provider recovers a second after a question, the bank having authorised meanwhile:
      // the next question captures the payment.
      harness().clock.advance(1_000);
      fakepay.settle(fakepay.ordersFor(paymentId)[0]!, 'paid');
      fakepay.faults = {};
      const recoveredAt = harness().clock.now();
      expect(await nextQuestion(paymentId)).toBeLessThanOrEqual(LATE_BOUND_SECONDS);
      const captured = await row(paymentId);
      expect(captured.status).toBe('captured');
      expect(seconds(recoveredAt, harness().clock.now())).toBeLessThanOrEqual(LATE_BOUND_SECONDS);
      expect(seconds(timeoutAt, harness().clock.now())).toBeLessThan(3_600);
      expect(captured.next_sync_at).toBeNull();

      const events = await harness().container.db.query<{ type: string }>(
        `SELECT type FROM events WHERE payload->'payment'->>'id' = $1 ORDER BY id`,
        [paymentId],
      );
      expect(events.map((event) => event.type)).toEqual([
        'payment.pending',
        'payment.failed',
        'payment.captured',
        'order.paid',
      ]);
    }, 60_000);

    it("takes the provider's signed success when the customer comes back after Kosh stopped waiting", async () => {
      fakepay.faults = {};
      const { paymentId, decide } = await atTheBank();
      // The bank is slow to answer and the provider's status API is down: Kosh stops waiting.
      await harness().request('POST', `/v1/payments/${paymentId}/callback/`, {
        form: await decide('pending'),
      });
      fakepay.faults = { status: 'bad_gateway_html' };
      while ((await row(paymentId)).status === 'pending') await nextQuestion(paymentId);
      expect(await row(paymentId)).toMatchObject({ status: 'failed', error_code: 'payment_timed_out' });

      // Then the customer approves at the bank and is sent back with the provider's signed success
      // (its status API still down): the return is the answer, at once, not "no money was taken".
      const signed = await decide('success');
      expect(signed.status).toBe('paid');
      const back = await harness().request('POST', `/v1/payments/${paymentId}/callback/`, { form: signed });
      expect(returnFields(back.body).status).toBe('captured');
      expect(await row(paymentId)).toMatchObject({ status: 'captured', error_code: null });
      // A repeated return only shows the outcome.
      const again = await harness().request('POST', `/v1/payments/${paymentId}/callback/`, { form: signed });
      expect(returnFields(again.body).status).toBe('captured');
      fakepay.faults = {};
    }, 60_000);
  },
  { KOSH_PENDING_TIMEOUT_SECONDS: String(PENDING_TIMEOUT_SECONDS) },
  () => ({ liveConnector: fakepayAccount(fakepay, ACCOUNT) }),
);
