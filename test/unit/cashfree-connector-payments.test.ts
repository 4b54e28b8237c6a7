import { describe, expect, it } from 'vitest';
import { createCashfreeConnector } from '../../src/connectors/cashfree/cashfree.connector.js';
import {
  CASHFREE_BANKS,
  CASHFREE_ERRORS,
  CASHFREE_WALLETS,
} from '../../src/connectors/cashfree/cashfree.tables.js';
import type { Connector } from '../../src/connectors/connector.js';
import { PROVIDERS } from '../../src/connectors/registry.js';
import { connectorPayment } from '../helpers/connector-objects.js';
import type { FakeCashfree } from '../helpers/providers/cashfree-fake.js';
import { cashfreeSteps, started, useCashfreeFake } from './support/cashfree-connector.js';

/** The Cashfree connector against FakeCashfree: starting payments, their status and the return. */

describe('Cashfree connector against FakeCashfree', () => {
  let fake: FakeCashfree;
  let connector: Connector;

  useCashfreeFake((suite) => {
    ({ fake, connector } = suite);
  });

  const { orderOf, visitBank, decide, pay } = cashfreeSteps(() => ({ fake, connector }));

  describe('initiate', () => {
    it('starts net banking: the order, then its payment, answered with a POST form', async () => {
      const payment = connectorPayment({ code: 'HDFC', amount: 5050 });
      const result = started(await connector.initiate(payment));
      const order = orderOf(payment);
      expect(result.action).toBe('html_form');
      expect(result.next.kind).toBe('form');
      if (result.next.kind !== 'form') return;
      expect(result.next.url).toBe(`${fake.origin}/bank/${order.payments[0]?.cfPaymentId}`);
      expect(result.next.fields).toEqual({ cf_payment_id: order.payments[0]?.cfPaymentId, bank: '3021' });
      expect(result.reference).toBe(order.cfOrderId);
      expect(result.rawStatus).toBe('ACTIVE');
      expect(result.reconcile).toBe(true);
      expect(result.data).toEqual({
        cf_order_id: order.cfOrderId,
        payment_session_id: order.sessionId,
        cf_payment_id: order.payments[0]?.cfPaymentId,
      });
      expect(order.amount).toBe(5050);
      expect(order.returnUrl).toBe(payment.callbackUrl);
      // No attempt starts after Kosh stops asking: the order ends with the late window (3 days).
      const lateWindowEnd = Math.floor((payment.createdAt.getTime() + 259_200_000) / 1000) * 1000;
      expect(order.expiresAt).toBe(new Date(lateWindowEnd).toISOString());
      expect(order.customer).toEqual({
        customer_id: payment.id.replace('_', ''),
        customer_phone: '9876543210',
        customer_email: 'asha@example.com',
        customer_name: 'Asha Rao',
      });
      expect(order.payments[0]?.method).toEqual({
        netbanking: { channel: 'link', netbanking_bank_code: 3021 },
      });
      await visitBank(result.next);
    });

    it('holds the order to the late window the connector is made with (KOSH_LATE_AUTH_WINDOW_SECONDS)', async () => {
      const settings = {
        cashfreeBaseUrl: fake.url,
        razorpayBaseUrl: fake.url,
        timeoutMs: 1_000,
        lateWindowSeconds: 7_200,
      };
      const windowed = PROVIDERS.cashfree.create(
        { client_id: fake.clientId, client_secret: fake.clientSecret },
        settings,
      );
      const payment = connectorPayment({ createdAt: new Date(Date.now() - 60_000) });
      started(await windowed.initiate(payment));
      const end = Math.floor((payment.createdAt.getTime() + 7_200_000) / 1000) * 1000;
      expect(orderOf(payment).expiresAt).toBe(new Date(end).toISOString());
    });

    it('starts a wallet payment, answered with a GET link', async () => {
      const payment = connectorPayment({ method: 'wallet', code: 'amazonpay' });
      const result = started(await connector.initiate(payment));
      expect(result.action).toBe('redirect');
      expect(result.next).toEqual({
        kind: 'redirect',
        url: `${fake.origin}/bank/${orderOf(payment).payments[0]?.cfPaymentId}?provider=amazon`,
      });
      expect(orderOf(payment).payments[0]?.method).toEqual({
        app: { channel: 'link', provider: 'amazon', phone: '9876543210' },
      });
      await visitBank(result.next);
    });

    it.each([
      ...Object.keys(CASHFREE_BANKS).map((code) => ['netbanking', code] as const),
      ...Object.keys(CASHFREE_WALLETS).map((code) => ['wallet', code] as const),
    ])('%s %s is accepted by Cashfree (the fake checks the code)', async (method, code) => {
      const result = await connector.initiate(connectorPayment({ method, code }));
      expect(result.outcome).toBe('started');
    });

    it('does not call Cashfree for a code it does not take', async () => {
      const before = fake.calls.length;
      const result = await connector.initiate(connectorPayment({ method: 'wallet', code: 'payzapp' }));
      expect(result).toMatchObject({ outcome: 'failed', errorCode: 'bank_unavailable', reference: null });
      expect(fake.calls.length).toBe(before);
    });

    it.each([1, 5000, 5050, 100000099])('sends %i paise as exact rupees', async (amount) => {
      const payment = connectorPayment({ amount });
      const result = await connector.initiate(payment);
      if (amount < 100) {
        // Cashfree takes orders of one rupee or more: a documented refusal, so the payment failed.
        expect(result).toMatchObject({ outcome: 'failed', errorCode: 'amount_not_accepted' });
        expect(fake.ordersFor(payment.id)).toHaveLength(0);
      } else {
        expect(result.outcome).toBe('started');
        expect(orderOf(payment).amount).toBe(amount);
      }
    });

    it('a bank the account has not enabled is a documented refusal: failed, with the reason', async () => {
      fake.disabledBanks.add(3044);
      const payment = connectorPayment({ code: 'SBIN' });
      const result = await connector.initiate(payment);
      expect(result).toMatchObject({
        outcome: 'failed',
        errorCode: CASHFREE_ERRORS.payment_method_unsupported?.code,
        reference: orderOf(payment).cfOrderId,
        rawStatus: 'payment_method_unsupported',
      });
    });

    it('a retried start finds the first order (idempotency key): one order at Cashfree', async () => {
      const payment = connectorPayment();
      started(await connector.initiate(payment));
      started(await connector.initiate(payment));
      expect(fake.ordersFor(payment.id)).toHaveLength(1);
    });

    it('an "order already exists" answer fetches the order and carries on', async () => {
      fake.replayIdempotencyKeys = false;
      const payment = connectorPayment();
      const first = started(await connector.initiate(payment));
      const calls = fake.calls.length;
      const again = started(await connector.initiate(payment));
      expect(fake.calls.slice(calls)).toEqual([
        'POST /pg/orders',
        'GET /pg/orders/:id',
        'POST /pg/orders/sessions',
      ]);
      expect(again.reference).toBe(first.reference);
      expect(fake.ordersFor(payment.id)).toHaveLength(1);
    });

    it('an existing order for another amount is unknown, not this payment’s order', async () => {
      fake.replayIdempotencyKeys = false;
      const payment = connectorPayment({ amount: 5050 });
      started(await connector.initiate(payment));
      const result = await connector.initiate({ ...payment, amount: 6000 });
      expect(result.outcome).toBe('unknown');
    });

    it('an existing order that is paid is unknown (Kosh asks status), and status says captured', async () => {
      fake.replayIdempotencyKeys = false;
      const payment = await pay();
      expect((await connector.initiate(payment)).outcome).toBe('unknown');
      expect((await connector.status(payment)).outcome).toBe('captured');
    });
  });

  describe('status and the return', () => {
    it('is not_started until the customer decides at the bank, then captured', async () => {
      const payment = connectorPayment();
      expect(await connector.status(payment)).toEqual({ outcome: 'not_started', rawStatus: null });
      const result = started(await connector.initiate(payment));
      expect((await connector.status(payment)).outcome).toBe('not_started');
      await visitBank(result.next);
      const notYet = await connector.status(payment);
      expect(notYet).toMatchObject({ outcome: 'not_started', rawStatus: 'NOT_ATTEMPTED' });
      const back = await decide(result.data?.cf_payment_id, 'success');
      // Back to Kosh's callback, unsigned: the order id only.
      expect(back.status).toBe(302);
      const location = new URL(back.headers.get('location') ?? '');
      expect(`${location.origin}${location.pathname}`).toBe(payment.callbackUrl);
      expect(location.searchParams.get('order_id')).toBe(payment.id);
      const returned = await connector.handleReturn?.(payment, {
        method: 'GET',
        query: Object.fromEntries(location.searchParams),
        body: {},
      });
      expect(returned).toEqual({ verified: false });
      const status = await connector.status(payment);
      const attempt = orderOf(payment).payments[0];
      expect(status).toEqual({
        outcome: 'captured',
        rawStatus: 'SUCCESS',
        amount: 5050,
        currency: 'INR',
        bankReference: attempt?.bankReference,
        data: { cf_payment_id: attempt?.cfPaymentId },
      });
      expect(fake.calls).toContain('GET /pg/orders/:id/payments');
    });

    it('a decline at the bank is failed, with the mapped reason', async () => {
      const payment = await pay({}, 'failure');
      expect(await connector.status(payment)).toMatchObject({
        outcome: 'failed',
        rawStatus: 'FAILED',
        errorCode: 'payment_declined',
        errorReason: CASHFREE_ERRORS.TRANSACTION_DECLINED?.reason,
        amount: 5050,
      });
    });

    it('a customer who leaves the bank is failed as cancelled; an undecided bank is pending', async () => {
      expect(await connector.status(await pay({}, 'drop'))).toMatchObject({
        outcome: 'failed',
        rawStatus: 'USER_DROPPED',
        errorCode: 'payment_cancelled',
      });
      expect(await connector.status(await pay({}, 'pending'))).toMatchObject({
        outcome: 'pending',
        rawStatus: 'PENDING',
      });
    });

    it('a bad URL answer (404 request_failed) is unknown, not "no such order"', async () => {
      const misplaced = createCashfreeConnector({
        baseUrl: `${fake.url}/v9`,
        credentials: { client_id: fake.clientId, client_secret: fake.clientSecret },
        timeoutMs: 1_000,
      });
      const payment = await pay();
      expect((await misplaced.status(payment)).outcome).toBe('unknown');
      expect((await connector.status(connectorPayment())).outcome).toBe('not_started');
    });

    it('speaks for the order by its successful attempt, else its latest', async () => {
      const payment = await pay({}, 'failure');
      // The customer tries again on the same order (the start is retried): a second attempt.
      const again = started(await connector.initiate(payment));
      expect(orderOf(payment).payments).toHaveLength(2);
      expect((await connector.status(payment)).outcome).toBe('not_started');
      await decide(again.data?.cf_payment_id, 'success');
      expect((await connector.status(payment)).outcome).toBe('captured');
    });

    it('keeps a payment open while an earlier attempt is at the bank, though a later one failed', async () => {
      // The first attempt waits at the bank; the customer tries again on the same order and that
      // attempt is declined. The first can still take the money: the payment is not failed.
      const payment = await pay({}, 'pending');
      const first = orderOf(payment).payments[0]?.cfPaymentId;
      const again = started(await connector.initiate(payment));
      await visitBank(again.next);
      await decide(again.data?.cf_payment_id, 'failure');
      expect(orderOf(payment).payments.map((attempt) => attempt.status)).toEqual(['PENDING', 'FAILED']);
      expect(await connector.status(payment)).toEqual({ outcome: 'pending', rawStatus: 'FAILED' });
      await decide(first, 'success');
      expect((await connector.status(payment)).outcome).toBe('captured');
    });
  });
});
