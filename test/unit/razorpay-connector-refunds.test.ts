import { describe, expect, it } from 'vitest';
import type { Connector, ConnectorPayment } from '../../src/connectors/connector.js';
import { connectorRefund } from '../helpers/connector-objects.js';
import type { FakeRazorpay } from '../helpers/providers/razorpay-fake.js';
import { atBank, reachBank, record, useRazorpayFake } from './support/razorpay-connector.js';

/** The Razorpay connector against FakeRazorpay: refunds, in full, in parts, resent and settled later. */

describe('Razorpay connector against FakeRazorpay', () => {
  let fake: FakeRazorpay;
  let connector: Connector;

  useRazorpayFake((suite) => {
    ({ fake, connector } = suite);
  });

  /** Kosh's path up to the bank: the order, then the payment once the browser is here. */
  const toBank = (payment?: ConnectorPayment) => reachBank(connector, payment);

  describe('refunds', () => {
    async function captured() {
      const { payment, url } = await toBank();
      await atBank(url, 'success');
      return record(payment, await connector.status(payment));
    }

    it('refunds in full, with its receipt, notes and idempotency key', async () => {
      const payment = await captured();
      const refund = connectorRefund(payment);
      const result = await connector.refund(refund);
      const [made] = fake.refundsFor(refund.id);
      expect(result).toMatchObject({ outcome: 'processed', rawStatus: 'processed', reference: made?.id });
      expect(made).toMatchObject({
        amount: 50_000,
        speedRequested: 'normal',
        notes: { kosh_refund_id: refund.id, kosh_payment_id: payment.id },
      });
      expect(fake.calls.slice(-2)).toEqual(['GET /v1/payments/:id/refunds', 'POST /v1/payments/:id/refund']);
    });

    it('refunds in parts, and an instant refund as optimum', async () => {
      const payment = await captured();
      const first = connectorRefund(payment, { amount: 20_000, speed: 'instant' });
      const second = connectorRefund(payment, { amount: 30_000 });
      expect((await connector.refund(first)).outcome).toBe('processed');
      expect((await connector.refund(second)).outcome).toBe('processed');
      expect(fake.refundsFor(first.id)[0]?.speedRequested).toBe('optimum');
      expect(fake.refundsFor(second.id)[0]?.amount).toBe(30_000);
      const third = await connector.refund(connectorRefund(payment, { amount: 100 }));
      expect(third).toMatchObject({ outcome: 'failed', errorCode: 'refund_declined' });
    });

    it('a resend with the same Kosh refund id makes one refund (found by its receipt)', async () => {
      const payment = await captured();
      const refund = connectorRefund(payment, { amount: 10_000 });
      const first = await connector.refund(refund);
      const again = await connector.refund(refund);
      expect(again.reference).toBe(first.reference);
      expect(fake.refundsFor(refund.id)).toHaveLength(1);
      expect(fake.calls.filter((call) => call === 'POST /v1/payments/:id/refund')).toHaveLength(1);
    });

    it('a resend with the same Kosh refund id makes one refund (the idempotency key, when the look-up fails)', async () => {
      const payment = await captured();
      const refund = connectorRefund(payment, { amount: 10_000 });
      const first = await connector.refund(refund);
      fake.faults.refundStatus = 'bad_gateway_html';
      const again = await connector.refund(refund);
      expect(again).toMatchObject({ outcome: 'processed', reference: first.reference });
      expect(fake.refundsFor(refund.id)).toHaveLength(1);
      expect(fake.calls.filter((call) => call === 'POST /v1/payments/:id/refund')).toHaveLength(2);
    });

    it('is pending, then settles either way', async () => {
      fake.refundOutcome = 'pending';
      const payment = await captured();
      const refund = connectorRefund(payment, { amount: 10_000 });
      const result = await connector.refund(refund);
      expect(result).toMatchObject({ outcome: 'pending', rawStatus: 'pending' });
      const acknowledged = {
        ...refund,
        provider: { reference: result.reference ?? null, status: 'pending', data: {} },
      };
      expect((await connector.refundStatus(acknowledged)).outcome).toBe('pending');
      fake.settleRefunds('processed');
      expect(await connector.refundStatus(acknowledged)).toMatchObject({ outcome: 'processed' });
      expect(fake.calls).toContain('GET /v1/refunds/:id');

      const other = connectorRefund(payment, { amount: 10_000 });
      await connector.refund(other);
      fake.settleRefunds('failed');
      // Never acknowledged (its answer lost): found by its receipt.
      expect(await connector.refundStatus(other)).toMatchObject({
        outcome: 'failed',
        errorCode: 'refund_declined',
      });
    });

    it('does not know a refund Razorpay never made', async () => {
      const payment = await captured();
      expect(await connector.refundStatus(connectorRefund(payment))).toMatchObject({ outcome: 'unknown' });
    });

    it('refuses to refund a payment that was not captured', async () => {
      fake.autoCapture = false;
      const { payment, url } = await toBank();
      await atBank(url, 'success');
      expect(await connector.refund(connectorRefund(payment))).toMatchObject({
        outcome: 'failed',
        errorCode: 'refund_declined',
      });
    });
  });
});
