import { describe, expect, it } from 'vitest';
import type { Connector, ConnectorPayment } from '../../src/connectors/connector.js';
import { connectorRefund } from '../helpers/connector-objects.js';
import type { FakeRazorpay, RazorpayEndpoint, RazorpayFault } from '../helpers/providers/razorpay-fake.js';
import {
  atBank,
  BROWSER,
  connectorOn,
  continueWith,
  expectStarted,
  newPayment,
  reachBank,
  record,
  useRazorpayFake,
} from './support/razorpay-connector.js';

/** The Razorpay connector against FakeRazorpay: unreadable answers and wrong credentials, never a failure. */

describe('Razorpay connector against FakeRazorpay', () => {
  let fake: FakeRazorpay;
  let connector: Connector;

  const connectorFor = (overrides: Parameters<typeof connectorOn>[1] = {}) => connectorOn(fake, overrides);

  useRazorpayFake((suite) => {
    ({ fake, connector } = suite);
  });

  /** Kosh's path up to the bank: the order, then the payment once the browser is here. */
  const toBank = (payment?: ConnectorPayment) => reachBank(connector, payment);

  describe('unreadable answers are unknown, never failed', () => {
    const FAULTS: RazorpayFault[] = ['timeout', 'bad_gateway_html', 'garbage', 'reset'];
    const cases = FAULTS.flatMap((fault) =>
      (['order', 'pay', 'status', 'refund', 'refundStatus'] as RazorpayEndpoint[]).map(
        (endpoint) => [endpoint, fault] as const,
      ),
    );

    it.each(cases)('%s: %s', async (endpoint, fault) => {
      if (endpoint === 'order') {
        const payment = newPayment();
        fake.faults.order = fault;
        const result = await connector.initiate(payment);
        expect(result.outcome).toBe('unknown');
        // Razorpay made the order; the next start finds it instead of making another.
        expect(fake.ordersFor(payment.id)).toHaveLength(1);
        fake.faults = {};
        expectStarted(await connector.initiate(payment));
        expect(fake.ordersFor(payment.id)).toHaveLength(1);
        return;
      }
      if (endpoint === 'pay') {
        const payment = newPayment();
        const started = record(payment, expectStarted(await connector.initiate(payment)));
        fake.faults.pay = fault;
        const result = await continueWith(connector, started, BROWSER);
        expect(result.outcome).toBe('unknown');
        const orderId = started.provider.reference as string;
        expect(fake.paymentsFor(orderId)).toHaveLength(1);
        fake.faults = {};
        // The customer never saw that attempt: nothing they did is at Razorpay yet.
        expect(await connector.status(started)).toMatchObject({
          outcome: 'not_started',
          rawStatus: 'attempt_not_shown',
          reference: orderId,
        });
        // Called again, a fresh attempt on the same order takes the customer to the bank.
        const again = expectStarted(await continueWith(connector, started, BROWSER));
        expect(again.reference).toBe(orderId);
        if (again.next.kind !== 'redirect') throw new Error(`expected a redirect, got ${again.next.kind}`);
        await atBank(again.next.url, 'success');
        expect(await connector.status(record(started, again))).toMatchObject({ outcome: 'captured' });
        expect(fake.ordersFor(started.id)).toHaveLength(1);
        expect(fake.paymentsFor(orderId).map((attempt) => attempt.status)).toEqual(['created', 'captured']);
        return;
      }
      const { payment, url } = await toBank();
      await atBank(url, 'success');
      const paid = record(payment, await connector.status(payment));
      if (endpoint === 'status') {
        fake.faults.status = fault;
        expect((await connector.status(paid)).outcome).toBe('unknown');
        const byOrder = {
          ...paid,
          provider: { ...paid.provider, data: { razorpay_order_id: paid.provider.reference } },
        };
        expect((await connector.status(byOrder)).outcome).toBe('unknown');
        return;
      }
      const refund = connectorRefund(paid, { amount: 10_000 });
      if (endpoint === 'refund') {
        fake.faults.refund = fault;
        expect((await connector.refund(refund)).outcome).toBe('unknown');
        expect(fake.refundsFor(refund.id)).toHaveLength(1);
        fake.faults = {};
        expect((await connector.refund(refund)).outcome).toBe('processed');
        expect(fake.refundsFor(refund.id)).toHaveLength(1);
        return;
      }
      const made = await connector.refund(refund);
      fake.faults.refundStatus = fault;
      const acknowledged = {
        ...refund,
        provider: { reference: made.reference ?? null, status: 'processed', data: {} },
      };
      expect((await connector.refundStatus(acknowledged)).outcome).toBe('unknown');
      expect((await connector.refundStatus(refund)).outcome).toBe('unknown');
    });
  });

  it('takes a refusal of a refund as final only once the look-up said none was made before', async () => {
    const { payment, url } = await toBank();
    await atBank(url, 'success');
    const paid = record(payment, await connector.status(payment));
    expect((await connector.refund(connectorRefund(paid))).outcome).toBe('processed');
    // "Fully refunded already": about another refund, or (the look-up failing) maybe about this one.
    const another = connectorRefund(paid, { amount: 100 });
    fake.faults.refundStatus = 'bad_gateway_html';
    expect((await connector.refund(another)).outcome).toBe('unknown');
    fake.faults = {};
    expect(await connector.refund(another)).toMatchObject({
      outcome: 'failed',
      errorCode: 'refund_declined',
    });
  });

  describe('wrong credentials', () => {
    it.each([401, 400] as const)('are never a success, nor a failure (HTTP %s)', async (status) => {
      fake.authFailureStatus = status;
      const { payment, url } = await toBank();
      await atBank(url, 'success');
      const paid = record(payment, await connector.status(payment));
      const wrong = connectorFor({ key_secret: 'wrong-secret' });
      expect((await wrong.initiate(newPayment())).outcome).toBe('unknown');
      const fresh = newPayment();
      const started = record(fresh, expectStarted(await connector.initiate(fresh)));
      expect((await continueWith(wrong, started, BROWSER)).outcome).toBe('unknown');
      expect((await wrong.status(paid)).outcome).toBe('unknown');
      expect((await wrong.refund(connectorRefund(paid))).outcome).toBe('unknown');
      expect(fake.refunds.size).toBe(0);
    });
  });
});
