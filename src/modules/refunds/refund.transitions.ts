import type { EventType } from '../events/events.service.js';

/**
 * The one table of refund state changes. A refund is created `pending` (event `refund.created`)
 * with its amount counted on the payment; the provider then processes it or refuses it. A failed
 * refund gives its amount back to the payment, so another refund can take it.
 */
export type RefundStatus = 'pending' | 'processed' | 'failed';
export const REFUND_STATUSES: readonly RefundStatus[] = ['pending', 'processed', 'failed'];

export type RefundTrigger = 'provider_processed' | 'provider_failed';
export const REFUND_TRIGGERS: readonly RefundTrigger[] = ['provider_processed', 'provider_failed'];

export interface RefundTransition {
  from: RefundStatus;
  on: RefundTrigger;
  to: RefundStatus;
  event: EventType;
  /** Whether the refund's amount stops counting against the payment. */
  releasesAmount: boolean;
}

export const REFUND_TRANSITIONS: readonly RefundTransition[] = [
  {
    from: 'pending',
    on: 'provider_processed',
    to: 'processed',
    event: 'refund.processed',
    releasesAmount: false,
  },
  { from: 'pending', on: 'provider_failed', to: 'failed', event: 'refund.failed', releasesAmount: true },
];

export function refundTransition(from: RefundStatus, on: RefundTrigger): RefundTransition | undefined {
  return REFUND_TRANSITIONS.find((transition) => transition.from === from && transition.on === on);
}
