import { describe, expect, it } from 'vitest';
import {
  isFinal,
  ORDER_STATUSES,
  orderTransition,
  PAYMENT_STATUSES,
  PAYMENT_TRIGGERS,
  paymentTransition,
} from '../../src/modules/payments/payment.transitions.js';

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
