/**
 * What a provider's answer means for a payment: whether it is about this very payment, and the
 * move it implies from the payment's current state (pure: no database, no clock of its own).
 */
import type { StatusResult } from '../../connectors/connector.js';
import type { PaymentTrigger } from './payment.transitions.js';
import type { PaymentRow, ProviderFacts } from './payments.row.js';
import { deadlineOf, type PaymentDeadlines } from './sync-schedule.js';

/** The same, found before the customer reached the bank: nothing was taken. */
export const ORDER_PAID_BEFORE_AUTHORISING = {
  errorCode: 'order_already_paid',
  errorReason: 'The order was paid by another payment before this one reached the bank; nothing was taken.',
};

export const ORDER_PAID_ELSEWHERE = {
  errorCode: 'order_already_paid',
  errorReason:
    'The order was paid by another payment; this payment was not captured and its money goes back.',
};

/** Why a move fails the payment, as `move` records it. */
export interface Failure {
  errorCode?: string;
  errorReason?: string;
}

const TIMED_OUT = (seconds: number) => ({
  errorCode: 'payment_timed_out',
  errorReason: `The bank gave no answer within ${seconds} seconds.`,
});

/** A UPI payment nobody paid (or whose bank gave no answer) by its expires_at. */
export const UPI_EXPIRED = {
  errorCode: 'upi_expired',
  errorReason: 'The customer did not complete the UPI payment before it expired.',
};

/** The move a provider's answer implies for a payment in its current state, if any. */
export function triggerFor(
  payment: PaymentRow,
  result: StatusResult,
  now: Date,
  deadlines: PaymentDeadlines,
): { trigger: PaymentTrigger; options: Failure } | undefined {
  const failure = {
    errorCode: result.errorCode ?? 'payment_failed',
    errorReason: result.errorReason ?? 'The payment failed.',
  };
  const deadline = deadlineOf(payment, deadlines);
  const pastDeadline = deadline !== undefined && now >= deadline;
  switch (payment.status) {
    case 'created':
      if (result.outcome === 'captured') return { trigger: 'authorised', options: {} };
      if (result.outcome === 'failed') return { trigger: 'declined', options: failure };
      if (result.outcome === 'pending') return { trigger: 'customer_acted', options: {} };
      if (!pastDeadline) return undefined;
      if (payment.expires_at) return { trigger: 'expired', options: UPI_EXPIRED };
      return {
        trigger: 'expired',
        options: {
          errorCode: 'payment_expired',
          errorReason: `The customer did not complete the payment within ${deadlines.expirySeconds} seconds.`,
        },
      };
    case 'pending':
      if (result.outcome === 'captured') return { trigger: 'authorised', options: {} };
      if (result.outcome === 'failed') return { trigger: 'declined', options: failure };
      if (!pastDeadline) return undefined;
      return {
        trigger: 'timed_out',
        options: payment.expires_at ? UPI_EXPIRED : TIMED_OUT(deadlines.pendingTimeoutSeconds),
      };
    case 'failed':
      return result.outcome === 'captured' && !payment.refund_due
        ? { trigger: 'late_authorisation', options: {} }
        : undefined;
    case 'captured':
      return undefined;
  }
}

/** Whether what the provider says is about this very payment: amount, currency and reference agree. */
export function matches(payment: PaymentRow, result: StatusResult): boolean {
  if (result.amount !== undefined && result.amount !== Number(payment.amount)) return false;
  if (result.currency !== undefined && result.currency !== payment.currency) return false;
  if (result.reference && payment.provider_reference && result.reference !== payment.provider_reference)
    return false;
  return true;
}

/** What the provider said about the payment, as it is recorded on it. */
export function factsOf(result: StatusResult): ProviderFacts {
  return {
    rawStatus: result.rawStatus,
    reference: result.reference,
    bankReference: result.bankReference,
    payerVpa: result.payerVpa,
    fee: result.fee,
    tax: result.tax,
    data: result.data,
  };
}
