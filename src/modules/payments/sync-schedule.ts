import type { PaymentStatus } from './payment.transitions.js';

/**
 * How long the reconciler waits before asking a provider about a payment again, by how many times
 * it asked already: short steps while the customer is likely still at the bank, then longer ones
 * for the late-authorisation window (shortened after Kosh gave up: `LATE_STEP_LIMITS`). The last
 * step repeats.
 */
export const SYNC_DELAYS_SECONDS: readonly number[] = [
  2, 3, 5, 10, 15, 30, 60, 120, 300, 600, 1_800, 3_600, 7_200, 14_400, 21_600,
];

export function syncDelaySeconds(attempts: number): number {
  const last = SYNC_DELAYS_SECONDS[SYNC_DELAYS_SECONDS.length - 1] as number;
  return SYNC_DELAYS_SECONDS[Math.max(0, attempts)] ?? last;
}

/**
 * After Kosh gave up waiting for a payment (`payment_timed_out`, `payment_expired`), the bank may
 * still authorise it, most likely soon: the step is at most `stepSeconds` while less than
 * `sinceSeconds` passed since Kosh gave up (the schedule above when that is shorter). A late
 * success is thus seen within 5 minutes in the first hour, within 30 minutes up to 6 hours, and
 * within 2 hours up to a day; later, by the schedule above (its last step: 6 hours).
 */
export const LATE_STEP_LIMITS: readonly { sinceSeconds: number; stepSeconds: number }[] = [
  { sinceSeconds: 3_600, stepSeconds: 300 },
  { sinceSeconds: 6 * 3_600, stepSeconds: 1_800 },
  { sinceSeconds: 24 * 3_600, stepSeconds: 7_200 },
];

/** The step after `attempts` asks, for a payment Kosh gave up on `sinceSeconds` ago. */
export function lateDelaySeconds(attempts: number, sinceSeconds: number): number {
  const limit = LATE_STEP_LIMITS.find((entry) => sinceSeconds < entry.sinceSeconds);
  const step = syncDelaySeconds(attempts);
  return limit ? Math.min(step, limit.stepSeconds) : step;
}

/** The settings that bound how long a payment stays open and how long it is asked about. */
export interface PaymentDeadlines {
  /** A `created` payment nobody acted on fails with `payment_expired` after this long. */
  expirySeconds: number;
  /** A `pending` payment with no answer fails with `payment_timed_out` after this long. */
  pendingTimeoutSeconds: number;
  /** A payment that failed without the provider's final word is asked about for this long (from its creation). */
  lateWindowSeconds: number;
}

/** Failures that are Kosh giving up waiting, not the provider's answer: the bank may still authorise. */
export const UNANSWERED_FAILURES: ReadonlySet<string> = new Set([
  'payment_timed_out',
  'payment_expired',
  'upi_expired',
]);

/**
 * While a UPI payment is open the customer may pay at any moment in the app, and the page waits:
 * it is asked about at least this often until its deadline (webhooks usually come first).
 */
export const UPI_OPEN_STEP_SECONDS = 15;

export interface SyncSubject {
  status: PaymentStatus;
  created_at: Date;
  pending_at: Date | null;
  error_code: string | null;
  refund_due: boolean;
  /** A UPI payment's own deadline, for created and pending alike; null or absent otherwise. */
  expires_at?: Date | null;
}

const after = (from: Date, seconds: number) => new Date(from.getTime() + seconds * 1000);

/**
 * When Kosh gave up waiting for a payment that failed unanswered: its deadline, which the
 * reconciler keeps to the second (the pending timeout, or the expiry of a payment never acted on).
 */
export function gaveUpAt(payment: SyncSubject, deadlines: PaymentDeadlines): Date {
  if (payment.expires_at) return payment.expires_at;
  if (payment.error_code === 'payment_timed_out' && payment.pending_at)
    return after(payment.pending_at, deadlines.pendingTimeoutSeconds);
  return after(payment.created_at, deadlines.expirySeconds);
}

/** The deadline of an open payment: when Kosh stops waiting for its outcome. */
export function deadlineOf(payment: SyncSubject, deadlines: PaymentDeadlines): Date | undefined {
  if (payment.expires_at && (payment.status === 'created' || payment.status === 'pending'))
    return payment.expires_at;
  if (payment.status === 'created') return after(payment.created_at, deadlines.expirySeconds);
  if (payment.status === 'pending' && payment.pending_at)
    return after(payment.pending_at, deadlines.pendingTimeoutSeconds);
  return undefined;
}

/**
 * When to ask about the payment next, after `attempts` asks, or null when nothing is left to ask:
 * a captured payment, a failure the provider itself decided, a refused authorisation, or the
 * late-authorisation window closed. An open payment is always asked again at its deadline, so the
 * deadline is kept to the second whatever the step.
 */
export function nextSyncAt(
  payment: SyncSubject,
  attempts: number,
  now: Date,
  deadlines: PaymentDeadlines,
): Date | null {
  if (payment.status === 'captured' || payment.refund_due) return null;
  if (payment.status === 'failed') {
    const windowEnd = after(payment.created_at, deadlines.lateWindowSeconds);
    if (!UNANSWERED_FAILURES.has(payment.error_code ?? '') || now >= windowEnd) return null;
    const since = Math.max(0, (now.getTime() - gaveUpAt(payment, deadlines).getTime()) / 1000);
    return new Date(Math.min(after(now, lateDelaySeconds(attempts, since)).getTime(), windowEnd.getTime()));
  }
  const step = syncDelaySeconds(attempts);
  const next = after(now, payment.expires_at ? Math.min(step, UPI_OPEN_STEP_SECONDS) : step);
  const deadline = deadlineOf(payment, deadlines);
  return deadline && deadline > now && deadline < next ? deadline : next;
}
