import type { Queryable } from '../../db/db.js';
import type { PageRequest } from '../../domain/pagination.js';
import type { Mode } from '../../domain/scope.js';
import { PAYMENT_COLUMNS, type PaymentRow } from './payments.row.js';

/** What a payments list can be narrowed to. */
export interface PaymentFilter {
  orderId?: string | undefined;
  status?: string | undefined;
  method?: string | undefined;
  bank?: string | undefined;
  wallet?: string | undefined;
  /** Bank, wallet and email are compared without regard to case. */
  email?: string | undefined;
  contact?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

/** A day's captured payments, for the dashboard's home page. */
export interface CapturedDay {
  day: string;
  count: string;
  amount: string;
  currency: string;
}

/**
 * The payments queries that only read for lists and pages: the API's and the dashboard's lists,
 * the dashboard's home page, and the hosted checkout's attempts and most used banks. Part of the
 * payments repository.
 */
export function paymentListQueries() {
  return {
    /** A checkout session's payments: how many there are, and the newest. */
    async checkoutAttempts(
      db: Queryable,
      sessionId: string,
    ): Promise<{ count: number; latest: PaymentRow | undefined }> {
      const [row] = await db.query<PaymentRow & { attempts: string }>(
        `SELECT ${PAYMENT_COLUMNS}, count(*) OVER () AS attempts FROM payments
          WHERE checkout_session_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`,
        [sessionId],
      );
      return { count: Number(row?.attempts ?? 0), latest: row };
    },

    /**
     * A checkout session's payments that took money Kosh could not keep (authorised after another
     * payment paid the order): each is refunded, or being refunded (payments_checkout_session_idx).
     */
    async checkoutOwedBack(
      db: Queryable,
      sessionId: string,
    ): Promise<{ id: string; amount: string; currency: string; amount_refunded: string }[]> {
      return db.query(
        `SELECT id, amount, currency, amount_refunded FROM payments
          WHERE checkout_session_id = $1 AND status = 'failed' AND authorised_at IS NOT NULL
          ORDER BY created_at, id`,
        [sessionId],
      );
    },

    /** How many payments the account captured with each bank since `since` (payments_captured_idx). */
    async capturedByBank(
      db: Queryable,
      accountId: string,
      mode: Mode,
      since: Date,
    ): Promise<Array<{ bank: string; count: string }>> {
      return db.query(
        `SELECT bank, count(*) AS count FROM payments
          WHERE account_id = $1 AND mode = $2 AND status = 'captured' AND captured_at >= $3 AND method = 'netbanking'
          GROUP BY bank`,
        [accountId, mode, since],
      );
    },

    async list(
      db: Queryable,
      accountId: string,
      mode: Mode,
      page: PageRequest,
      filter: PaymentFilter = {},
    ): Promise<PaymentRow[]> {
      return db.query<PaymentRow>(
        `SELECT ${PAYMENT_COLUMNS} FROM payments
          WHERE account_id = $1 AND mode = $2 AND ($3::text IS NULL OR id < $3) AND ($5::text IS NULL OR order_id = $5)
            AND ($6::text IS NULL OR status = $6) AND ($7::text IS NULL OR method = $7)
            AND ($8::timestamptz IS NULL OR created_at >= $8) AND ($9::timestamptz IS NULL OR created_at < $9)
            AND ($10::text IS NULL OR lower(bank) = lower($10)) AND ($11::text IS NULL OR lower(wallet) = lower($11))
            AND ($12::text IS NULL OR lower(email) = lower($12)) AND ($13::text IS NULL OR contact = $13)
          ORDER BY id DESC LIMIT $4`,
        [
          accountId,
          mode,
          page.cursor ?? null,
          page.limit + 1,
          filter.orderId ?? null,
          filter.status ?? null,
          filter.method ?? null,
          filter.from ?? null,
          filter.to ?? null,
          filter.bank ?? null,
          filter.wallet ?? null,
          filter.email ?? null,
          filter.contact ?? null,
        ],
      );
    },

    /**
     * Captured payments per day (UTC) since `since`, and the failed ones in the same time: the
     * dashboard's home page. Read from the account's payments of one mode by their capture time.
     */
    async capturedByDay(
      db: Queryable,
      accountId: string,
      mode: Mode,
      since: Date,
    ): Promise<{ days: CapturedDay[]; failed: number; currency: string | null }> {
      const days = await db.query<CapturedDay>(
        `SELECT to_char(captured_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*) AS count,
                sum(amount) AS amount, min(currency) AS currency
           FROM payments
          WHERE account_id = $1 AND mode = $2 AND status = 'captured' AND captured_at >= $3
          GROUP BY 1 ORDER BY 1`,
        [accountId, mode, since],
      );
      const [other] = await db.query<{ failed: string }>(
        `SELECT count(*) AS failed FROM payments
          WHERE account_id = $1 AND mode = $2 AND status = 'failed' AND created_at >= $3`,
        [accountId, mode, since],
      );
      return { days, failed: Number(other?.failed ?? 0), currency: days[0]?.currency ?? null };
    },
  };
}
