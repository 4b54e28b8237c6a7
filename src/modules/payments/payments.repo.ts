import type { Queryable } from '../../db/db.js';
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

export function createPaymentsRepo() {
  return {
    async insert(tx: Queryable, p: NewPayment): Promise<PaymentRow> {
      const [row] = await tx.query<PaymentRow>(
        `INSERT INTO payments (id, account_id, mode, order_id, amount, currency, status, method, bank, wallet,
           instrument_name, email, contact, name, description, metadata, return_url, connector, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'created', $7, $8, $9, $18, $10, $11, $12, $13, $14, $15, $16, $17, $17)
         RETURNING ${COLUMNS}`,
        [
          p.id,
          p.accountId,
          p.mode,
          p.orderId,
          p.amount,
          p.currency,
          p.method,
          p.bank,
          p.wallet,
          p.email,
          p.contact,
          p.name,
          p.description,
          p.metadata,
          p.returnUrl,
          p.connector,
          p.createdAt,
          p.instrumentName,
        ],
      );
      return row!;
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
