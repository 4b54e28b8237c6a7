import type { PreparedStatement, Queryable } from '../../db/db.js';
import type { PageRequest } from '../../domain/pagination.js';
import type { Mode } from '../../domain/principal.js';
import type { PaymentStatus } from './payment.transitions.js';

export interface PaymentRow {
  id: string;
  account_id: string;
  mode: Mode;
  order_id: string;
  amount: string;
  currency: string;
  status: PaymentStatus;
  method: 'netbanking' | 'wallet';
  bank: string | null;
  wallet: string | null;
  instrument_name: string;
  email: string;
  contact: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  return_url: string;
  connector: string;
  error_code: string | null;
  error_reason: string | null;
  created_at: Date;
  updated_at: Date;
  captured_at: Date | null;
}

const COLUMNS = `id, account_id, mode, order_id, amount, currency, status, method, bank, wallet, instrument_name,
  email, contact, name, description, metadata, return_url, connector, error_code, error_reason, created_at, updated_at, captured_at`;

export interface NewPayment {
  id: string;
  accountId: string;
  mode: Mode;
  orderId: string;
  amount: number;
  currency: string;
  method: 'netbanking' | 'wallet';
  bank: string | null;
  wallet: string | null;
  instrumentName: string;
  email: string;
  contact: string;
  name: string;
  description: string | null;
  metadata: object;
  returnUrl: string;
  connector: string;
  createdAt: Date;
}

/** What the order looked like when a payment tried to start on it; `started` says whether it did. */
export interface StartResult {
  status: 'created' | 'attempted' | 'paid';
  amount: string;
  currency: string;
  started: boolean;
}

/**
 * Starting a payment in ONE statement (one round trip, its own transaction): lock the order, insert
 * the payment only if the order may take it (status among `$19`, same amount and currency), and
 * move the order to `$20` with the payment's return URL and bank details. The order row is locked
 * before anything is written, so a capture on the same order cannot interleave. When nothing was
 * inserted the row still says why (not found, paid, another amount or currency). The update names
 * the order by \`$4\`, not by a join on the inserted row: the planner cannot see through a join
 * on a data-modifying CTE and would scan every order of the account.
 */
const START: PreparedStatement = {
  name: 'payments_start',
  text: `WITH target AS (
           SELECT status, amount, currency FROM orders
            WHERE id = $4 AND account_id = $2 AND mode = $3
            FOR UPDATE
         ), payment AS (
           INSERT INTO payments (id, account_id, mode, order_id, amount, currency, status, method, bank, wallet,
             instrument_name, email, contact, name, description, metadata, return_url, connector, created_at, updated_at)
           SELECT $1, $2, $3, $4, $5, $6, 'created', $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $18
             FROM target
            WHERE target.status = ANY ($19::text[]) AND target.amount = $5::bigint AND target.currency = $6::text
           RETURNING id
         ), moved AS (
           UPDATE orders SET status = $20, return_url = $16, bank_details = $21, updated_at = $18
            WHERE EXISTS (SELECT 1 FROM payment)
              AND orders.id = $4 AND orders.account_id = $2 AND orders.mode = $3
              AND orders.status = ANY ($19::text[])
           RETURNING orders.id
         )
         SELECT status, amount, currency, EXISTS (SELECT 1 FROM moved) AS started FROM target`,
};

export function createPaymentsRepo() {
  return {
    /**
     * Inserts the payment and moves its order (\`from\` → \`to\`, from the order transition table) in
     * one statement; undefined when the order does not exist for this account and mode.
     */
    async start(
      db: Queryable,
      p: NewPayment,
      order: { from: readonly string[]; to: string; bankDetails: object },
    ): Promise<StartResult | undefined> {
      const [row] = await db.query<StartResult>(START, [
        p.id,
        p.accountId,
        p.mode,
        p.orderId,
        p.amount,
        p.currency,
        p.method,
        p.bank,
        p.wallet,
        p.instrumentName,
        p.email,
        p.contact,
        p.name,
        p.description,
        p.metadata,
        p.returnUrl,
        p.connector,
        p.createdAt,
        order.from,
        order.to,
        order.bankDetails,
      ]);
      return row;
    },

    /** Tenant-scoped: another account's or mode's payment is not found. */
    async find(db: Queryable, accountId: string, mode: Mode, id: string): Promise<PaymentRow | undefined> {
      const [row] = await db.query<PaymentRow>(
        `SELECT ${COLUMNS} FROM payments WHERE id = $1 AND account_id = $2 AND mode = $3`,
        [id, accountId, mode],
      );
      return row;
    },

    /** By id alone: the browser-facing authentication page holds the payment id, not an API key. */
    async findById(db: Queryable, id: string): Promise<PaymentRow | undefined> {
      const [row] = await db.query<PaymentRow>(`SELECT ${COLUMNS} FROM payments WHERE id = $1`, [id]);
      return row;
    },

    async list(
      db: Queryable,
      accountId: string,
      mode: Mode,
      page: PageRequest,
      orderId?: string,
    ): Promise<PaymentRow[]> {
      return db.query<PaymentRow>(
        `SELECT ${COLUMNS} FROM payments
          WHERE account_id = $1 AND mode = $2 AND ($3::text IS NULL OR id < $3) AND ($5::text IS NULL OR order_id = $5)
          ORDER BY id DESC LIMIT $4`,
        [accountId, mode, page.cursor ?? null, page.limit + 1, orderId ?? null],
      );
    },

    /**
     * The one status write: compare-and-set on `from`. `tokenHash`, when given, must match the stored
     * authentication token, which is cleared by the same update (so it works once).
     */
    async changeStatus(
      tx: Queryable,
      change: {
        id: string;
        from: PaymentStatus;
        to: PaymentStatus;
        errorCode: string | null;
        errorReason: string | null;
        at: Date;
        tokenHash?: Buffer;
      },
    ): Promise<PaymentRow | undefined> {
      const [row] = await tx.query<PaymentRow>(
        `UPDATE payments
            SET status = $3, error_code = $4, error_reason = $5, updated_at = $6,
                captured_at = CASE WHEN $3 = 'captured' THEN $6 ELSE captured_at END,
                auth_token_hash = CASE WHEN $7::bytea IS NULL THEN auth_token_hash ELSE NULL END
          WHERE id = $1 AND status = $2 AND ($7::bytea IS NULL OR auth_token_hash = $7)
          RETURNING ${COLUMNS}`,
        [
          change.id,
          change.from,
          change.to,
          change.errorCode,
          change.errorReason,
          change.at,
          change.tokenHash ?? null,
        ],
      );
      return row;
    },

    /** A fresh authentication token for a payment still waiting for its customer. */
    async setTokenHash(db: Queryable, id: string, tokenHash: Buffer): Promise<boolean> {
      const rows = await db.query(
        `UPDATE payments SET auth_token_hash = $2 WHERE id = $1 AND status = 'created' RETURNING id`,
        [id, tokenHash],
      );
      return rows.length === 1;
    },

    /** Claims a batch of untouched payments older than `cutoff`; other sweepers skip the locked rows. */
    async claimExpired(tx: Queryable, cutoff: Date, limit: number): Promise<PaymentRow[]> {
      return tx.query<PaymentRow>(
        `SELECT ${COLUMNS} FROM payments
          WHERE status = 'created' AND created_at < $1
          ORDER BY created_at LIMIT $2
          FOR UPDATE SKIP LOCKED`,
        [cutoff, limit],
      );
    },

    async returnSigningSecret(db: Queryable, accountId: string, mode: Mode, fresh: string): Promise<string> {
      await db.query(
        `INSERT INTO return_signing_secrets (account_id, mode, secret) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
        [accountId, mode, fresh],
      );
      const [row] = await db.query<{ secret: string }>(
        'SELECT secret FROM return_signing_secrets WHERE account_id = $1 AND mode = $2',
        [accountId, mode],
      );
      return row!.secret;
    },
  };
}

export type PaymentsRepo = ReturnType<typeof createPaymentsRepo>;
