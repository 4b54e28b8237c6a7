import type { EventType } from '../events/events.service.js';

/**
 * The one table of payment state changes. Code never writes a status that is not the `to` of a row
 * here, and every write is a compare-and-set on the row's `from`. The order's moves are the orders
 * module's (src/modules/orders/order.transitions.ts).
 */
export type PaymentStatus = 'created' | 'pending' | 'captured' | 'failed';
export const PAYMENT_STATUSES: readonly PaymentStatus[] = ['created', 'pending', 'captured', 'failed'];

export type PaymentTrigger =
  /** The customer acted at the bank or wallet: the outcome is now being decided. */
  | 'customer_acted'
  /** The bank or wallet authorised the payment (the money is taken). */
  | 'authorised'
  /** The bank or wallet declined, the customer cancelled, or the order was paid by another payment. */
  | 'declined'
  /** Nobody touched the payment within the expiry time. */
  | 'expired'
  /** The bank gave no answer within the pending timeout. */
  | 'timed_out'
  /** An authorisation that arrived after the payment had failed; taken only while the order is unpaid. */
  | 'late_authorisation';
export const PAYMENT_TRIGGERS: readonly PaymentTrigger[] = [
  'customer_acted',
  'authorised',
  'declined',
  'expired',
  'timed_out',
  'late_authorisation',
];

export interface PaymentTransition {
  from: PaymentStatus;
  on: PaymentTrigger;
  to: PaymentStatus;
  /** The event recorded in the same transaction. */
  event: EventType;
  /** Whether the move captures money, so the order becomes paid in the same transaction. */
  capturesOrder: boolean;
}

export const PAYMENT_TRANSITIONS: readonly PaymentTransition[] = [
  { from: 'created', on: 'customer_acted', to: 'pending', event: 'payment.pending', capturesOrder: false },
  // A provider's answer can arrive before Kosh saw the customer act (its webhook, its return).
  { from: 'created', on: 'authorised', to: 'captured', event: 'payment.captured', capturesOrder: true },
  { from: 'created', on: 'declined', to: 'failed', event: 'payment.failed', capturesOrder: false },
  { from: 'created', on: 'expired', to: 'failed', event: 'payment.failed', capturesOrder: false },
  { from: 'pending', on: 'authorised', to: 'captured', event: 'payment.captured', capturesOrder: true },
  { from: 'pending', on: 'declined', to: 'failed', event: 'payment.failed', capturesOrder: false },
  { from: 'pending', on: 'timed_out', to: 'failed', event: 'payment.failed', capturesOrder: false },
  {
    from: 'failed',
    on: 'late_authorisation',
    to: 'captured',
    event: 'payment.captured',
    capturesOrder: true,
  },
];

/** The row for this move, or undefined when the move is not allowed from `from`. */
export function paymentTransition(from: PaymentStatus, on: PaymentTrigger): PaymentTransition | undefined {
  return PAYMENT_TRANSITIONS.find((transition) => transition.from === from && transition.on === on);
}

export function isFinal(status: PaymentStatus): boolean {
  return status === 'captured' || status === 'failed';
}
