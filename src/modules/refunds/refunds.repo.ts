import type { Queryable } from '../../db/db.js';
import type { PageRequest } from '../../domain/pagination.js';
import type { Mode } from '../../domain/scope.js';
import type { RefundStatus } from './refund.transitions.js';

export interface RefundRow {
  id: string;
  account_id: string;
  mode: Mode;
  payment_id: string;
  order_id: string;
  amount: string;
  currency: string;
  status: RefundStatus;
  speed: 'normal' | 'instant';
  receipt: string | null;
  metadata: Record<string, unknown>;
  automatic: boolean;
  error_code: string | null;
  error_reason: string | null;
  connector: string;
  connector_account_id: string | null;
  provider_reference: string | null;
  provider_status: string | null;
  provider_data: Record<string, unknown>;
  submitted_at: Date | null;
  sync_attempts: number;
  next_sync_at: Date | null;
  created_at: Date;
  updated_at: Date;
  processed_at: Date | null;
}

const COLUMNS = `id, account_id, mode, payment_id, order_id, amount, currency, status, speed, receipt, metadata,
  automatic, error_code, error_reason, connector, connector_account_id, provider_reference, provider_status,
  provider_data, submitted_at, sync_attempts, next_sync_at, created_at, updated_at, processed_at`;

export interface NewRefund {
  id: string;
  accountId: string;
  mode: Mode;
  paymentId: string;
  orderId: string;
  amount: number;
  currency: string;
  speed: 'normal' | 'instant';
  receipt: string | null;
  metadata: object;
  automatic: boolean;
  connector: string;
  connectorAccountId: string | null;
  nextSyncAt: Date;
  at: Date;
}

export function createRefundsRepo() {
  return {
    async insert(tx: Queryable, refund: NewRefund): Promise<RefundRow> {
      const [row] = await tx.query<RefundRow>(
        `INSERT INTO refunds (id, account_id, mode, payment_id, order_id, amount, currency, status, speed, receipt,
           metadata, automatic, connector, connector_account_id, next_sync_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $10, $11, $12, $13, $14, $15, $15)
         RETURNING ${COLUMNS}`,
        [
          refund.id,
          refund.accountId,
          refund.mode,
          refund.paymentId,
          refund.orderId,
          refund.amount,
          refund.currency,
          refund.speed,
          refund.receipt,
          refund.metadata,
          refund.automatic,
          refund.connector,
          refund.connectorAccountId,
          refund.nextSyncAt,
          refund.at,
        ],
      );
      return row!;
    },

    /** Tenant-scoped: another account's or mode's refund is not found. */
    async find(db: Queryable, accountId: string, mode: Mode, id: string): Promise<RefundRow | undefined> {
      const [row] = await db.query<RefundRow>(
        `SELECT ${COLUMNS} FROM refunds WHERE id = $1 AND account_id = $2 AND mode = $3`,
        [id, accountId, mode],
      );
      return row;
    },

    async findById(db: Queryable, id: string, lock = false): Promise<RefundRow | undefined> {
      const [row] = await db.query<RefundRow>(
        `SELECT ${COLUMNS} FROM refunds WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
        [id],
      );
      return row;
    },

    async list(
      db: Queryable,
      accountId: string,
      mode: Mode,
      page: PageRequest,
      filter: { paymentId?: string | undefined; status?: RefundStatus | undefined },
    ): Promise<RefundRow[]> {
      return db.query<RefundRow>(
        `SELECT ${COLUMNS} FROM refunds
          WHERE account_id = $1 AND mode = $2 AND ($3::text IS NULL OR id < $3)
            AND ($5::text IS NULL OR payment_id = $5) AND ($6::text IS NULL OR status = $6)
          ORDER BY id DESC LIMIT $4`,
        [
          accountId,
          mode,
          page.cursor ?? null,
          page.limit + 1,
          filter.paymentId ?? null,
          filter.status ?? null,
        ],
      );
    },

    /** The one status write: compare-and-set on `from`. */
    async changeStatus(
      tx: Queryable,
      change: {
        id: string;
        from: RefundStatus;
        to: RefundStatus;
        errorCode: string | null;
        errorReason: string | null;
        at: Date;
      },
    ): Promise<RefundRow | undefined> {
      const [row] = await tx.query<RefundRow>(
        `UPDATE refunds
            SET status = $3, error_code = $4, error_reason = $5, updated_at = $6,
                processed_at = CASE WHEN $3 = 'processed' THEN $6 ELSE processed_at END
          WHERE id = $1 AND status = $2
          RETURNING ${COLUMNS}`,
        [change.id, change.from, change.to, change.errorCode, change.errorReason, change.at],
      );
      return row;
    },

    /** What the provider said, whether it acknowledged the request, and when to ask next. */
    async recordProviderFacts(
      tx: Queryable,
      id: string,
      facts: {
        reference?: string | null;
        rawStatus?: string | null;
        data?: Record<string, unknown>;
        submitted: boolean;
      },
      schedule: { nextSyncAt: Date | null; asked: boolean },
      at: Date,
    ): Promise<RefundRow | undefined> {
      const [row] = await tx.query<RefundRow>(
        `UPDATE refunds
            SET provider_reference = coalesce($2, provider_reference), provider_status = coalesce($3, provider_status),
                provider_data = provider_data || $4::jsonb,
                submitted_at = CASE WHEN $5::boolean THEN coalesce(submitted_at, $8) ELSE submitted_at END,
                next_sync_at = $6, sync_attempts = sync_attempts + CASE WHEN $7::boolean THEN 1 ELSE 0 END,
                updated_at = $8
          WHERE id = $1
          RETURNING ${COLUMNS}`,
        [
          id,
          facts.reference ?? null,
          facts.rawStatus ?? null,
          facts.data ?? {},
          facts.submitted,
          schedule.nextSyncAt,
          schedule.asked,
          at,
        ],
      );
      return row;
    },

    /** Claims refunds due to be sent or asked about, moving their next time on by a lease (SKIP LOCKED). */
    /**
     * A refund sent and waiting for its answer, asked about at the reconciler's next round (a
     * provider webhook said something about it). One not yet sent is left to whoever sends it.
     */
    async askSoon(db: Queryable, connectorAccountId: string, id: string, now: Date): Promise<boolean> {
      const rows = await db.query(
        `UPDATE refunds SET next_sync_at = $3
          WHERE id = $1 AND connector_account_id = $2 AND status = 'pending'
            AND submitted_at IS NOT NULL AND next_sync_at > $3
          RETURNING id`,
        [id, connectorAccountId, now],
      );
      return rows.length > 0;
    },

    async claimDueForSync(db: Queryable, now: Date, leaseUntil: Date, limit: number): Promise<RefundRow[]> {
      return db.query<RefundRow>(
        `UPDATE refunds SET next_sync_at = $2
          WHERE id IN (
            SELECT id FROM refunds WHERE next_sync_at <= $1 ORDER BY next_sync_at LIMIT $3 FOR UPDATE SKIP LOCKED)
          RETURNING ${COLUMNS}`,
        [now, leaseUntil, limit],
      );
    },
  };
}

export type RefundsRepo = ReturnType<typeof createRefundsRepo>;
