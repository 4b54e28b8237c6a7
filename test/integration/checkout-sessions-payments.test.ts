import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUSTOMER, checkoutHelpers } from '../helpers/checkout.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { choose, openPage, RETURN_URL, returnFields } from '../helpers/payments.js';
import { drain } from '../helpers/webhook-events.js';
import { TestReceiver, verifyWebhook } from '../helpers/webhook-receiver.js';

type Json = Record<string, unknown>;

/**
 * The payments a hosted checkout session starts through the same core as S2S (`startPayment`),
 * its completion and expiry exactly once each with their events (the sweep job, and a fetch that
 * finds the order paid), and a failure then a success on one session capturing once.
 */
describeEachDatabase('checkout session payments', (harness) => {
  let merchant: TestAccount;
  let receiver: TestReceiver;
  let secret: string;

  beforeAll(async () => {
    merchant = await harness().merchant('Checkout Shop');
    receiver = await TestReceiver.start(() => harness().clock.now());
    const endpoint = await harness().request('POST', '/v1/webhooks/', {
      auth: merchant,
      json: {
        url: receiver.url('/hooks'),
        enabled_events: ['checkout_session.completed', 'checkout_session.expired'],
      },
    });
    expect(endpoint.statusCode, endpoint.body).toBe(200);
    secret = endpoint.json().data.secret;
  });
  afterAll(async () => {
    await receiver?.close();
  });
  const helpers = checkoutHelpers(harness);
  const session = (overrides: Record<string, unknown> = {}, account = merchant) =>
    helpers.session(account, overrides);
  const fetchSession = (id: string, account = merchant) => helpers.fetchSession(id, account);
  const { sessionEvents, sweep } = helpers;
  const checkout = () => harness().container.services.checkout;

  describe('payments, completion and expiry', () => {
    it('expires a session at expires_at, once, and then starts no payment', async () => {
      const account = await harness().merchant('Expiry');
      const made = await session({ expires_in_minutes: 5 }, account);
      harness().clock.advance(5 * 60_000 - 1000);
      await sweep();
      expect((await fetchSession(made.id, account)).json().data.status).toBe('open');
      harness().clock.advance(1000);
      await sweep();
      await sweep();
      const fetched = (await fetchSession(made.id, account)).json().data;
      expect(fetched).toMatchObject({ status: 'expired', payment_id: null });
      const events = await sessionEvents(account.id);
      expect(events.map((event) => event.type)).toEqual(['checkout_session.expired']);
      expect(events[0]?.payload.checkout_session).toEqual(fetched);
      await expect(
        checkout().startPayment(made.id, { method: 'netbanking', bank: 'ICIC', ...CUSTOMER }),
      ).rejects.toMatchObject({
        code: 'checkout_session_closed',
      });
      const payments = await harness().container.db.query('SELECT id FROM payments WHERE order_id = $1', [
        made.orderId,
      ]);
      expect(payments).toHaveLength(0);
    });

    it('waits for a payment in progress before expiring, and refuses to start one after expires_at', async () => {
      const account = await harness().merchant('Expiry in flight');
      const made = await session({ expires_in_minutes: 5, customer: CUSTOMER }, account);
      const started = await checkout().startPayment(made.id, { method: 'netbanking', bank: 'ICIC' });
      harness().clock.advance(5 * 60_000);
      await expect(
        checkout().startPayment(made.id, { method: 'wallet', wallet: 'amazonpay' }),
      ).rejects.toMatchObject({
        code: 'checkout_session_closed',
      });
      await sweep();
      expect((await fetchSession(made.id, account)).json().data.status).toBe('open');
      // The payment's own deadline ends it (payment-expiry); then the session expires.
      harness().clock.advance(15 * 60_000);
      await harness().container.jobs.paymentExpiry.run(new AbortController().signal);
      const [payment] = await harness().container.db.query<{ status: string }>(
        'SELECT status FROM payments WHERE id = $1',
        [started.payment_id],
      );
      expect(payment?.status).toBe('failed');
      await sweep();
      expect((await fetchSession(made.id, account)).json().data.status).toBe('expired');
      expect((await sessionEvents(account.id)).map((event) => event.type)).toEqual([
        'checkout_session.expired',
      ]);
    });

    it('completes an expired session when its own payment, which timed out, is authorised late', async () => {
      const account = await harness().merchant('Late at the bank');
      const made = await session({ expires_in_minutes: 5, customer: CUSTOMER }, account);
      const started = await checkout().startPayment(made.id, { method: 'netbanking', bank: 'ICIC' });
      harness().clock.advance(20 * 60_000);
      await harness().container.jobs.paymentExpiry.run(new AbortController().signal);
      await sweep();
      expect((await fetchSession(made.id, account)).json().data.status).toBe('expired');

      const states = harness().container.services.paymentStates;
      const captured = await states.apply(started.payment_id, { outcome: 'captured' }, { asked: true });
      expect(captured?.status).toBe('captured');
      // Completed in the capture's own transaction, before anyone reads the session: its webhook
      // goes out with the payment's.
      const [row] = await harness().container.db.query<Json>(
        'SELECT status, payment_id FROM checkout_sessions WHERE id = $1',
        [made.id],
      );
      expect(row).toEqual({ status: 'completed', payment_id: started.payment_id });
      expect((await sessionEvents(account.id)).map((event) => event.type)).toEqual([
        'checkout_session.expired',
        'checkout_session.completed',
      ]);
      const completed = (await fetchSession(made.id, account)).json().data;
      expect(completed).toMatchObject({ status: 'completed', payment_id: started.payment_id });
      expect((await fetchSession(made.id, account)).json().data.status).toBe('completed');
      expect((await sessionEvents(account.id)).map((event) => event.type)).toEqual([
        'checkout_session.expired',
        'checkout_session.completed',
      ]);
      // The customer's link says the order is paid, not that the link expired.
      const page = await harness().request('GET', `/checkout/${made.id}/`);
      expect(page.body).toContain('This order is paid');
    });

    it('completes once when a net banking payment it started is captured: the payment names the session, payment_id set, one event, signed return', async () => {
      const account = await harness().merchant('Completion');
      const made = await session({}, account);
      const started = await checkout().startPayment(made.id, {
        method: 'netbanking',
        bank: 'HDFC',
        ...CUSTOMER,
      });
      const [recorded] = await harness().container.db.query<Json>(
        'SELECT checkout_session_id, return_url, name, order_id FROM payments WHERE id = $1',
        [started.payment_id],
      );
      expect(recorded).toEqual({
        checkout_session_id: made.id,
        return_url: RETURN_URL,
        name: 'Asha Rao',
        order_id: made.orderId,
      });
      const fetchedPayment = await harness().request('GET', `/v1/payments/${started.payment_id}/`, {
        auth: account,
      });
      expect(fetchedPayment.statusCode, fetchedPayment.body).toBe(200);
      expect(fetchedPayment.json().data).toMatchObject({
        id: started.payment_id,
        order_id: made.orderId,
        checkout_session_id: made.id,
      });
      const chosen = await choose(
        harness(),
        started.payment_id,
        await openPage(harness(), started.payment_id),
        'success',
      );
      expect(chosen.statusCode, chosen.body).toBe(200);
      expect(chosen.body).toContain(`action="${RETURN_URL}"`);
      expect(returnFields(chosen.body)).toMatchObject({ payment_id: started.payment_id, status: 'captured' });
      await sweep();
      await sweep();
      const fetched = (await fetchSession(made.id, account)).json().data;
      expect(fetched).toMatchObject({ status: 'completed', payment_id: started.payment_id });
      const events = await sessionEvents(account.id);
      expect(events.map((event) => event.type)).toEqual(['checkout_session.completed']);
      expect(events[0]?.payload).toEqual({ checkout_session: fetched });
      // The payment's own events are those of any S2S payment: pending on the customer's choice,
      // captured with the payment as the API shows it, and the order paid.
      const paymentEvents = await harness().container.db.query<{ type: string; payload: Json }>(
        `SELECT type, payload FROM events WHERE account_id = $1 AND type NOT LIKE 'checkout_session.%' ORDER BY id`,
        [account.id],
      );
      expect(paymentEvents.map((event) => event.type)).toEqual([
        'payment.pending',
        'payment.captured',
        'order.paid',
      ]);
      const captured = (
        await harness().request('GET', `/v1/payments/${started.payment_id}/`, { auth: account })
      ).json().data;
      expect(paymentEvents[1]?.payload).toMatchObject({
        payment: captured,
        order: { id: made.orderId, status: 'paid' },
      });
      await expect(
        checkout().startPayment(made.id, { method: 'wallet', wallet: 'amazonpay', ...CUSTOMER }),
      ).rejects.toMatchObject({
        code: 'checkout_session_closed',
      });
    });

    it('completes lazily on fetch when the order is paid (a UPI payment), still with one event', async () => {
      const account = await harness().merchant('Lazy UPI');
      const made = await session({ methods: ['upi'], customer: CUSTOMER }, account);
      const started = await checkout().startPayment(made.id, { method: 'upi', upi: { flow: 'intent' } });
      const page = await harness().request('GET', `/v1/payments/${started.payment_id}/upi-simulator/`);
      expect(page.statusCode, page.body).toBe(200);
      const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1] as string;
      const paid = await harness().request('POST', `/v1/payments/${started.payment_id}/upi-simulator/`, {
        form: { token, choice: 'success' },
      });
      expect(paid.statusCode, paid.body).toBeLessThan(400);
      const first = (await fetchSession(made.id, account)).json().data;
      expect(first).toMatchObject({ status: 'completed', payment_id: started.payment_id });
      await sweep();
      expect((await fetchSession(made.id, account)).json().data).toEqual(first);
      expect((await sessionEvents(account.id)).map((event) => event.type)).toEqual([
        'checkout_session.completed',
      ]);
    });

    it('lets the customer try again after a failure; the success captures once', async () => {
      const account = await harness().merchant('Retry');
      const made = await session({ customer: CUSTOMER }, account);
      const failed = await checkout().startPayment(made.id, { method: 'netbanking', bank: 'ICIC' });
      await choose(harness(), failed.payment_id, await openPage(harness(), failed.payment_id), 'failure');
      await sweep();
      expect((await fetchSession(made.id, account)).json().data.status).toBe('open');
      const second = await checkout().startPayment(made.id, { method: 'wallet', wallet: 'amazonpay' });
      await choose(harness(), second.payment_id, await openPage(harness(), second.payment_id), 'success');
      await sweep();
      const payments = await harness().container.db.query<{
        id: string;
        status: string;
        checkout_session_id: string;
      }>('SELECT id, status, checkout_session_id FROM payments WHERE order_id = $1 ORDER BY id', [
        made.orderId,
      ]);
      // Ids made in one millisecond sort at random: compare without order.
      expect(payments).toHaveLength(2);
      expect(payments).toEqual(
        expect.arrayContaining([
          { id: failed.payment_id, status: 'failed', checkout_session_id: made.id },
          { id: second.payment_id, status: 'captured', checkout_session_id: made.id },
        ]),
      );
      expect((await fetchSession(made.id, account)).json().data).toMatchObject({
        status: 'completed',
        payment_id: second.payment_id,
      });
      expect((await sessionEvents(account.id)).map((event) => event.type)).toEqual([
        'checkout_session.completed',
      ]);
    });

    it('refuses a method the session does not offer, and a choice without the customer the merchant did not give', async () => {
      const made = await session({ methods: ['upi'] });
      await expect(
        checkout().startPayment(made.id, { method: 'wallet', wallet: 'amazonpay', ...CUSTOMER }),
      ).rejects.toMatchObject({
        code: 'method_not_enabled',
        field: 'method',
      });
      await expect(
        checkout().startPayment(made.id, { method: 'upi', upi: { flow: 'intent' } }),
      ).rejects.toMatchObject({
        code: 'missing_field',
      });
      await expect(
        checkout().startPayment('cs_00000000000000000000000000', { method: 'upi', upi: { flow: 'intent' } }),
      ).rejects.toMatchObject({
        code: 'resource_not_found',
      });
      const payments = await harness().container.db.query('SELECT id FROM payments WHERE order_id = $1', [
        made.orderId,
      ]);
      expect(payments).toHaveLength(0);
    });

    it('delivers checkout_session events as Standard Webhooks with { checkout_session }', async () => {
      const made = await session({ expires_in_minutes: 5 });
      harness().clock.advance(5 * 60_000);
      await sweep();
      await drain(harness());
      const bodies = receiver.received.map(
        (received) => verifyWebhook(secret, received) as { type: string; data: { checkout_session: Json } },
      );
      const mine = bodies.filter((body) => body.data.checkout_session.id === made.id);
      expect(mine).toHaveLength(1);
      expect(mine[0]?.type).toBe('checkout_session.expired');
      expect(mine[0]?.data.checkout_session).toMatchObject({
        id: made.id,
        status: 'expired',
        entity: 'checkout_session',
      });
    });
  });
});
