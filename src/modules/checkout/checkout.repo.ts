import type { Queryable } from '../../db/db.js';
import type { Mode } from '../../domain/scope.js';
import type { CheckoutCustomer, CheckoutMethod, CheckoutSessionRow } from './checkout.model.js';

export type { CheckoutSessionRow };

const COLUMNS =
  'id, account_id, mode, order_id, return_url, customer, methods, status, payment_id, expires_at, created_at, updated_at';
const RETURNING = COLUMNS.split(', ')
  .map((column) => `cs.${column}`)
  .join(', ');

export interface NewCheckoutSession {
  id: string;
  accountId: string;
  mode: Mode;
  orderId: string;
  returnUrl: string;
  customer: CheckoutCustomer | null;
  methods: CheckoutMethod[];
  expiresAt: Date;
  createdAt: Date;
}

/**
 * Which open sessions a sweep may settle: all that are due (the job, a batch at a time) or one (a
 * fetch that finds its session open). Rows another transaction holds are skipped, never waited for.
 */
export type Due = { limit: number } | { id: string };

function dueFilter(due: Due, next: number): { sql: string; params: unknown[] } {
  return 'id' in due
    ? { sql: `AND cs.id = $${next}`, params: [due.id] }
    : { sql: `ORDER BY cs.expires_at LIMIT $${next}`, params: [due.limit] };
}

/** Tenant-scoped: another account's or mode's session is not found. */
async function find(
  db: Queryable,
  accountId: string,
  mode: Mode,
  id: string,
): Promise<CheckoutSessionRow | undefined> {
  const [row] = await db.query<CheckoutSessionRow>(
    `SELECT ${COLUMNS} FROM checkout_sessions WHERE id = $1 AND account_id = $2 AND mode = $3`,
    [id, accountId, mode],
  );
  return row;
}

export function createCheckoutRepo() {
  return {
    /** Inserts the session; a resumed Idempotency-Key request finds the row its dead attempt wrote. */
    async insert(db: Queryable, s: NewCheckoutSession): Promise<CheckoutSessionRow> {
      const [row] = await db.query<CheckoutSessionRow>(
        `INSERT INTO checkout_sessions (id, account_id, mode, order_id, return_url, customer, methods, status,
                                        expires_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7::text[], 'open', $8, $9, $9)
         ON CONFLICT (id) DO NOTHING
         RETURNING ${COLUMNS}`,
        [s.id, s.accountId, s.mode, s.orderId, s.returnUrl, s.customer, s.methods, s.expiresAt, s.createdAt],
      );
      return row ?? (await find(db, s.accountId, s.mode, s.id)) ?? missing(s.id);
    },

    find,

    /** By id alone: the customer's page holds nothing but the id (the unguessable id is the capability). */
    async findById(db: Queryable, id: string): Promise<CheckoutSessionRow | undefined> {
      const [row] = await db.query<CheckoutSessionRow>(
        `SELECT ${COLUMNS} FROM checkout_sessions WHERE id = $1`,
        [id],
      );
      return row;
    },

    /**
     * Completes open sessions whose order is paid, with the order's captured payment (one per
     * order, by the payments table's own unique index): claim with FOR UPDATE SKIP LOCKED, then
     * compare-and-set from `open`. Returns the rows it moved; each needs its event in `tx`.
     */
    async completePaid(tx: Queryable, due: Due, at: Date): Promise<CheckoutSessionRow[]> {
      const filter = dueFilter(due, 2);
      return tx.query<CheckoutSessionRow>(
        `WITH due AS (
           SELECT cs.id FROM checkout_sessions cs JOIN orders o ON o.id = cs.order_id
            WHERE cs.status = 'open' AND o.status = 'paid' ${filter.sql}
              FOR UPDATE OF cs SKIP LOCKED)
         UPDATE checkout_sessions cs SET status = 'completed', payment_id = p.id, updated_at = $1
           FROM due, payments p
          WHERE cs.id = due.id AND cs.status = 'open' AND p.order_id = cs.order_id AND p.status = 'captured'
          RETURNING ${RETURNING}`,
        [at, ...filter.params],
      );
    },

    /**
     * An expired session whose own payment was captured after all (a payment that timed out and
     * that the bank authorised late): it completes with that payment. Compare-and-set from `expired`.
     */
    /**
     * The session of a payment that captured, completed by that payment in the capture's
     * transaction: from `open`, or from `expired` for a payment that timed out and was authorised
     * late. A session completed already is left as it is.
     */
    async completeWith(
      tx: Queryable,
      id: string,
      paymentId: string,
      at: Date,
    ): Promise<CheckoutSessionRow[]> {
      return tx.query<CheckoutSessionRow>(
        `UPDATE checkout_sessions cs SET status = 'completed', payment_id = $2, updated_at = $3
          WHERE cs.id = $1 AND cs.status IN ('open', 'expired')
          RETURNING ${RETURNING}`,
        [id, paymentId, at],
      );
    },

    async completeLate(tx: Queryable, id: string, at: Date): Promise<CheckoutSessionRow[]> {
      return tx.query<CheckoutSessionRow>(
        `UPDATE checkout_sessions cs SET status = 'completed', payment_id = p.id, updated_at = $1
           FROM payments p
          WHERE cs.id = $2 AND cs.status = 'expired' AND p.checkout_session_id = cs.id AND p.status = 'captured'
          RETURNING ${RETURNING}`,
        [at, id],
      );
    },

    /**
     * Expires open sessions past `expires_at`, except while a payment on the order may still
     * succeed (`created` or `pending`: the payments' own deadlines end those) and when the order is
     * paid (the session completes instead). Same claim and compare-and-set as `completePaid`.
     */
    async expireDue(tx: Queryable, due: Due, at: Date): Promise<CheckoutSessionRow[]> {
      const filter = dueFilter(due, 2);
      return tx.query<CheckoutSessionRow>(
        `WITH due AS (
           SELECT cs.id FROM checkout_sessions cs
            WHERE cs.status = 'open' AND cs.expires_at <= $1
              AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = cs.order_id AND o.status = 'paid')
              AND NOT EXISTS (SELECT 1 FROM payments p
                               WHERE p.order_id = cs.order_id AND p.status IN ('created', 'pending'))
              ${filter.sql}
              FOR UPDATE OF cs SKIP LOCKED)
         UPDATE checkout_sessions cs SET status = 'expired', updated_at = $1
           FROM due
          WHERE cs.id = due.id AND cs.status = 'open'
          RETURNING ${RETURNING}`,
        [at, ...filter.params],
      );
    },
  };
}

function missing(id: string): never {
  throw new Error(`checkout session ${id} was neither inserted nor found`);
}

export type CheckoutRepo = ReturnType<typeof createCheckoutRepo>;
