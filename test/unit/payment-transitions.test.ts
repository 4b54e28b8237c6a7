import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ORDER_STATUSES, orderTransition } from '../../src/modules/orders/order.transitions.js';
import {
  isFinal,
  PAYMENT_STATUSES,
  PAYMENT_TRIGGERS,
  paymentTransition,
} from '../../src/modules/payments/payment.transitions.js';
import {
  REFUND_STATUSES,
  REFUND_TRANSITIONS,
  REFUND_TRIGGERS,
  refundTransition,
} from '../../src/modules/refunds/refund.transitions.js';

/** Every (state, trigger) pair, and what the table must answer for it. */
const EXPECTED: Record<string, string | undefined> = {
  'created:customer_acted': 'pending',
  'created:authorised': 'captured',
  'created:declined': 'failed',
  'created:expired': 'failed',
  'pending:authorised': 'captured',
  'pending:declined': 'failed',
  'pending:timed_out': 'failed',
  'failed:late_authorisation': 'captured',
};

describe('payment transition table', () => {
  const pairs = PAYMENT_STATUSES.flatMap((from) => PAYMENT_TRIGGERS.map((on) => [from, on] as const));

  it('covers 4 states × 6 triggers', () => {
    expect(pairs).toHaveLength(24);
  });

  it.each(pairs)('%s on %s', (from, on) => {
    const transition = paymentTransition(from, on);
    expect(transition?.to).toBe(EXPECTED[`${from}:${on}`]);
    if (transition) {
      expect(transition.event).toBe(`payment.${transition.to}`);
      expect(transition.capturesOrder).toBe(transition.to === 'captured');
    }
  });

  it('never leaves captured, and leaves failed only by a late authorisation', () => {
    for (const on of PAYMENT_TRIGGERS) expect(paymentTransition('captured', on)).toBeUndefined();
    expect(PAYMENT_TRIGGERS.filter((on) => paymentTransition('failed', on))).toEqual(['late_authorisation']);
    expect(PAYMENT_STATUSES.filter(isFinal)).toEqual(['captured', 'failed']);
  });
});

describe('order transition table', () => {
  const expected: Record<string, string | undefined> = {
    'created:payment_started': 'attempted',
    'attempted:payment_started': 'attempted',
    'attempted:paid': 'paid',
  };
  const pairs = ORDER_STATUSES.flatMap((from) =>
    (['payment_started', 'paid'] as const).map((on) => [from, on] as const),
  );
  it.each(pairs)('%s on %s', (from, on) => {
    expect(orderTransition(from, on)).toBe(expected[`${from}:${on}`]);
  });
});

describe('refund transition table', () => {
  const pairs = REFUND_STATUSES.flatMap((from) => REFUND_TRIGGERS.map((on) => [from, on] as const));
  const REFUNDS: Record<string, string | undefined> = {
    'pending:provider_processed': 'processed',
    'pending:provider_failed': 'failed',
  };

  it.each(pairs)('%s on %s', (from, on) => {
    const transition = refundTransition(from, on);
    expect(transition?.to).toBe(REFUNDS[`${from}:${on}`]);
    if (transition) {
      expect(transition.event).toBe(`refund.${transition.to}`);
      // Only a failure gives the amount back to the payment.
      expect(transition.releasesAmount).toBe(transition.to === 'failed');
    }
  });

  it('is the table docs/refunds.md shows', () => {
    const docs = fs.readFileSync(new URL('../../docs/refunds.md', import.meta.url), 'utf8');
    for (const transition of REFUND_TRANSITIONS) {
      expect(docs).toMatch(
        new RegExp(
          `\\| \`${transition.from}\`\\s*\\|[^|]+\\|\\s*\`${transition.to}\`\\s*\\|\\s*\`${transition.event}\``,
        ),
      );
    }
  });
});
