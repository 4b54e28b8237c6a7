import { describe, expect, it } from 'vitest';
import type { Connector } from '../../src/connectors/connector.js';
import { connectorRefund } from '../helpers/connector-objects.js';
import type { FakeCashfree } from '../helpers/providers/cashfree-fake.js';
import { cashfreeSteps, useCashfreeFake } from './support/cashfree-connector.js';

/** The Cashfree connector against FakeCashfree: refunds, in full and in part, resent and refused. */

describe('Cashfree connector against FakeCashfree', () => {
  let fake: FakeCashfree;
  let connector: Connector;

  useCashfreeFake((suite) => {
    ({ fake, connector } = suite);
  });

  const { pay } = cashfreeSteps(() => ({ fake, connector }));

  describe('refunds', () => {
    it('refunds in full: pending, then processed when the bank settles it', async () => {
      const payment = await pay();
      const refund = connectorRefund(payment);
      const result = await connector.refund(refund);
      const [made] = fake.refundsFor(refund.id);
      expect(result).toEqual({
        outcome: 'pending',
        rawStatus: 'PENDING',
        reference: made?.cfRefundId,
        data: { cf_refund_id: made?.cfRefundId },
      });
      expect(made).toMatchObject({ amount: 5050, speed: 'STANDARD', orderId: payment.id });
      expect((await connector.refundStatus(refund)).outcome).toBe('pending');
      fake.settleRefunds('SUCCESS');
      expect(await connector.refundStatus(refund)).toEqual({
        outcome: 'processed',
        rawStatus: 'SUCCESS',
        reference: made?.cfRefundId,
        data: { cf_refund_id: made?.cfRefundId, refund_arn: `ARN${made?.cfRefundId}` },
      });
      expect(fake.calls).toContain('GET /pg/orders/:id/refunds/:rid');
    });

    it('refunds in part, twice, and refuses more than is left (a documented refusal: failed)', async () => {
      const payment = await pay({ amount: 5050 });
      fake.refundOutcome = 'SUCCESS';
      const first = connectorRefund(payment, { amount: 2000 });
      const second = connectorRefund(payment, { amount: 3050, speed: 'instant' });
      expect((await connector.refund(first)).outcome).toBe('processed');
      expect((await connector.refund(second)).outcome).toBe('processed');
      expect(fake.refundsFor(first.id)[0]?.amount).toBe(2000);
      expect(fake.refundsFor(second.id)[0]).toMatchObject({ amount: 3050, speed: 'INSTANT' });
      const third = connectorRefund(payment, { amount: 1 });
      expect(await connector.refund(third)).toMatchObject({
        outcome: 'failed',
        errorCode: 'refund_declined',
        rawStatus: 'refund_amount_invalid',
      });
      expect(fake.refundsFor(third.id)).toHaveLength(0);
    });

    it('a resend with the same refund id makes one refund (idempotency key)', async () => {
      const payment = await pay();
      const refund = connectorRefund(payment);
      const first = await connector.refund(refund);
      const again = await connector.refund(refund);
      expect(again.reference).toBe(first.reference);
      expect(fake.refundsFor(refund.id)).toHaveLength(1);
    });

    // Cashfree does not document its answer to a repeated refund_id: whether it is a 409 "refund
    // exists" or a plain 400, the refund is looked up by its id before the amount is given back.
    it.each([
      { answer: { status: 409, code: 'refund_already_exists' }, settled: true, outcome: 'processed' },
      { answer: { status: 400, code: 'refund_invalid' }, settled: false, outcome: 'pending' },
    ])(
      'a resend Cashfree refuses with $answer.status $answer.code finds the refund made before: still one refund',
      async ({ answer, settled, outcome }) => {
        fake.replayIdempotencyKeys = false;
        fake.duplicateRefundAnswer = answer;
        const payment = await pay();
        const refund = connectorRefund(payment, { amount: 1000 });
        const first = await connector.refund(refund);
        const calls = fake.calls.length;
        if (settled) fake.settleRefunds('SUCCESS');
        const again = await connector.refund(refund);
        expect(fake.calls.slice(calls)).toEqual([
          'POST /pg/orders/:id/refunds',
          'GET /pg/orders/:id/refunds/:rid',
        ]);
        expect(again).toMatchObject({ outcome, reference: first.reference });
        expect(fake.refundsFor(refund.id)).toHaveLength(1);
      },
    );

    it('a refund the bank cancels is failed, with its description', async () => {
      const payment = await pay();
      fake.refundOutcome = 'CANCELLED';
      expect(await connector.refund(connectorRefund(payment))).toMatchObject({
        outcome: 'failed',
        rawStatus: 'CANCELLED',
        errorCode: 'refund_declined',
        errorReason: 'Refund cancelled by the bank.',
      });
    });

    it('a refund of an unpaid payment is refused; an unknown refund is unknown', async () => {
      const payment = await pay({}, 'failure');
      expect(await connector.refund(connectorRefund(payment))).toMatchObject({
        outcome: 'failed',
        rawStatus: 'order_not_paid',
      });
      expect((await connector.refundStatus(connectorRefund(payment))).outcome).toBe('unknown');
    });

    it.each(['bad_gateway_html', 'garbage'] as const)(
      'a refusal is not failed while the look-up of the refund answers %s: unknown, asked again',
      async (fault) => {
        const payment = await pay({}, 'failure');
        fake.faults.refundStatus = fault;
        const calls = fake.calls.length;
        expect(await connector.refund(connectorRefund(payment))).toMatchObject({ outcome: 'unknown' });
        expect(fake.calls.slice(calls)).toEqual([
          'POST /pg/orders/:id/refunds',
          'GET /pg/orders/:id/refunds/:rid',
        ]);
      },
    );
  });
});
