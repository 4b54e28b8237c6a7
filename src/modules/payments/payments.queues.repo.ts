import type { Queryable } from '../../db/db.js';
import type { Mode } from '../../domain/scope.js';
import { PAYMENT_COLUMNS, type PaymentRow } from './payments.row.js';

/** How many automatic refunds a payment owed back gets before an operator must act. */
export const AUTOMATIC_REFUND_ATTEMPTS = 3;

/**
 * How long after a refused automatic refund the next one is made: the second after 10 minutes, the
 * third after 6 hours, so that a passing refusal (the provider's balance, a bank's outage) does not
 * use up every attempt at once.
 */
export const AUTOMATIC_REFUND_DELAYS = { afterFirst: '600 seconds', afterLater: '21600 seconds' } as const;

/**
 * The payments queries of the background work: the expiry sweep's and the reconciler's queues, and
 * the refund ledger (the amount refunded on a payment). Part of the payments repository.
 */
export function paymentQueueQueries() {
  return {
    /**
     * Claims a batch of untouched payments older than `cutoff` that nobody needs to be asked about
     * (the others are expired by the reconciler, after asking); other sweepers skip the locked rows.
     */
    async claimExpired(tx: Queryable, cutoff: Date, limit: number): Promise<PaymentRow[]> {
      return tx.query<PaymentRow>(
        `SELECT ${PAYMENT_COLUMNS} FROM payments
          WHERE status = 'created' AND next_sync_at IS NULL AND created_at < $1
          ORDER BY created_at LIMIT $2
          FOR UPDATE SKIP LOCKED`,
        [cutoff, limit],
      );
    },

    /**
     * Claims a batch of payments due to be asked about, and moves their next time on by `leaseUntil`
     * in the same statement (committed on its own): another process skips them meanwhile, and one
     * that dies while asking leaves them to be claimed again when the lease ends.
     */
    async claimDueForSync(db: Queryable, now: Date, leaseUntil: Date, limit: number): Promise<PaymentRow[]> {
      return db.query<PaymentRow>(
        `UPDATE payments SET next_sync_at = $2
          WHERE id IN (
            SELECT id FROM payments WHERE next_sync_at <= $1 ORDER BY next_sync_at LIMIT $3 FOR UPDATE SKIP LOCKED)
          RETURNING ${PAYMENT_COLUMNS}`,
        [now, leaseUntil, limit],
      );
    },

    /** Asks about the payment at once (an unverified provider webhook named it). */
    async syncSoon(db: Queryable, id: string, at: Date): Promise<boolean> {
      const rows = await db.query(
        `UPDATE payments SET next_sync_at = $2
          WHERE id = $1 AND (next_sync_at > $2 OR (next_sync_at IS NULL AND status IN ('created', 'pending')))
          RETURNING id`,
        [id, at],
      );
      return rows.length === 1;
    },

    /**
     * Counts a refund's amount on its payment: one compare-and-set that holds only while the payment
     * took the money (captured, or authorised and owed back) and the sum stays within its amount.
     * Undefined when it does not hold (the caller reads the payment to say why).
     */
    async reserveRefund(
      tx: Queryable,
      change: { id: string; accountId: string; mode: Mode; amount: number; owedBack: boolean; at: Date },
    ): Promise<PaymentRow | undefined> {
      const [row] = await tx.query<PaymentRow>(
        `UPDATE payments SET amount_refunded = amount_refunded + $4, updated_at = $5
          WHERE id = $1 AND account_id = $2 AND mode = $3
            AND (status = 'captured' OR ($6::boolean AND refund_due))
            AND amount_refunded + $4 <= amount
          RETURNING ${PAYMENT_COLUMNS}`,
        [change.id, change.accountId, change.mode, change.amount, change.at, change.owedBack],
      );
      return row;
    },

    /** A failed refund's amount stops counting on its payment. */
    async releaseRefund(
      tx: Queryable,
      id: string,
      amount: number,
      at: Date,
    ): Promise<PaymentRow | undefined> {
      const [row] = await tx.query<PaymentRow>(
        `UPDATE payments SET amount_refunded = amount_refunded - $2, updated_at = $3
          WHERE id = $1 AND amount_refunded >= $2 RETURNING ${PAYMENT_COLUMNS}`,
        [id, amount, at],
      );
      return row;
    },

    /**
     * Payments whose money is owed back (a refused authorisation) and not yet being refunded, up to
     * AUTOMATIC_REFUND_ATTEMPTS automatic refunds each, spaced by AUTOMATIC_REFUND_DELAYS after a
     * refusal: one the provider keeps refusing is left to an operator (docs/refunds.md) rather than
     * sent again forever.
     */
    async owedBackWithoutRefund(db: Queryable, now: Date, limit: number): Promise<PaymentRow[]> {
      return db.query<PaymentRow>(
        `SELECT ${PAYMENT_COLUMNS} FROM payments p
          WHERE refund_due AND amount_refunded < amount
            AND (SELECT count(*) < $2
                        AND coalesce(max(r.updated_at) + CASE count(*) WHEN 1 THEN $3::interval ELSE $4::interval END,
                                     '-infinity') <= $5
                   FROM refunds r WHERE r.payment_id = p.id AND r.automatic)
          ORDER BY id LIMIT $1`,
        [
          limit,
          AUTOMATIC_REFUND_ATTEMPTS,
          AUTOMATIC_REFUND_DELAYS.afterFirst,
          AUTOMATIC_REFUND_DELAYS.afterLater,
          now,
        ],
      );
    },
  };
}
