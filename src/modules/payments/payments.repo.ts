import type { NextStep } from '../../connectors/connector.js';
import type { Queryable, StatementPart } from '../../db/db.js';
import type { PaymentMethod, UpiFlow } from '../../domain/payment-methods.js';
import type { Mode } from '../../domain/scope.js';
import type { PaymentStatus } from './payment.transitions.js';
import { paymentListQueries } from './payments.lists.repo.js';
import { paymentQueueQueries } from './payments.queues.repo.js';
import { PAYMENT_COLUMNS, type PaymentRow, type ProviderFacts, type StatusChange } from './payments.row.js';

export type { CapturedDay, PaymentFilter } from './payments.lists.repo.js';
export { AUTOMATIC_REFUND_ATTEMPTS } from './payments.queues.repo.js';
export type { PaymentRow };

/** What the provider answered when the payment started (`initiate`), stored with it. */
export interface Initiation {
  reference: string | null;
  rawStatus: string | null;
  next: NextStep | null;
  data: Record<string, unknown>;
  /** When to ask the provider about it, or null when there is nothing to ask. */
  nextSyncAt: Date | null;
}

export interface NewPayment {
  id: string;
  accountId: string;
  mode: Mode;
  orderId: string;
  amount: number;
  currency: string;
  method: PaymentMethod;
  bank: string | null;
  wallet: string | null;
  instrumentName: string;
  email: string;
  contact: string;
  name: string;
  description: string | null;
  metadata: object;
  returnUrl: string | null;
  connector: string;
  connectorAccountId: string | null;
  createdAt: Date;
  /** Known before the insert only for a connector that never leaves the process (the sandbox). */
  initiation: Initiation | null;
  /** A UPI payment's flow, the customer's VPA (collect) and its deadline; null otherwise. */
  upi: { flow: UpiFlow; vpa: string | null; expiresAt: Date } | null;
  /**
   * When the reconciler first asks about it, for a payment the provider may hold before Kosh hears
   * its answer (UPI: until its own deadline, whatever happens to the call); else the initiation's.
   */
  firstSyncAt?: Date | null;
  /** The hosted checkout session it was started from, if any. */
  checkoutSessionId?: string | null;
}

/**
 * The payment's half of the statement that starts a payment: the orders module runs it inside its
 * own (`orders.repo.ts`, `startPayment`), one round trip that locks the order, inserts the payment
 * only when the order may take it, and moves the order. `insert` reads the CTE `gate`, which has a
 * row only when the order accepts the payment; `exists` says whether a payment of this id was
 * recorded already (a resumed Idempotency-Key request). Both number their parameters from $1.
 */
export type PaymentInsert = StatementPart<'insert' | 'exists'>;

const START_INSERT = {
  name: 'payment_v5',
  texts: {
    insert: `INSERT INTO payments (id, account_id, mode, order_id, amount, currency, status, method, bank, wallet,
             instrument_name, email, contact, name, description, metadata, return_url, connector, created_at, updated_at,
             connector_account_id, provider_reference, provider_status, provider_next, provider_data, next_sync_at,
             upi_flow, upi_vpa, expires_at, checkout_session_id)
           SELECT $1, $2, $3, $4, $5, $6, 'created', $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $18,
                  $19, $20, $21, $22, $23, $24, $25, $26, $27, $28
             FROM gate
           ON CONFLICT (id) DO NOTHING
           RETURNING id`,
    exists: 'SELECT 1 FROM payments WHERE id = $1 AND account_id = $2 AND mode = $3',
  },
};

const FIND_BY_ID = {
  name: 'payments_find_by_id',
  text: `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = $1`,
};
const FIND_BY_ID_FOR_UPDATE = {
  name: 'payments_find_by_id_for_update',
  text: `${FIND_BY_ID.text} FOR UPDATE`,
};

export function createPaymentsRepo() {
  return {
    ...paymentQueueQueries(),
    ...paymentListQueries(),
    /** The payment's half of the start statement (see `PaymentInsert`). */
    startInsert(p: NewPayment): PaymentInsert {
      const initiation = p.initiation;
      return {
        ...START_INSERT,
        params: [
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
          p.connectorAccountId,
          initiation?.reference ?? null,
          initiation?.rawStatus ?? null,
          initiation?.next ?? null,
          initiation?.data ?? {},
          initiation ? initiation.nextSyncAt : (p.firstSyncAt ?? null),
          p.upi?.flow ?? null,
          p.upi?.vpa ?? null,
          p.upi?.expiresAt ?? null,
          p.checkoutSessionId ?? null,
        ],
      };
    },

    /**
     * Records what the provider answered when asked to start the payment, while the payment still
     * waits for its customer. Undefined when it moved on meanwhile (a webhook got there first).
     */
    async recordInitiation(
      db: Queryable,
      id: string,
      initiation: Initiation,
      at: Date,
    ): Promise<PaymentRow | undefined> {
      const [row] = await db.query<PaymentRow>(
        `UPDATE payments
            SET provider_reference = coalesce($2, provider_reference), provider_status = coalesce($3, provider_status),
                provider_next = $4, provider_data = provider_data || $5::jsonb, next_sync_at = $6, updated_at = $7
          WHERE id = $1 AND status = 'created'
          RETURNING ${PAYMENT_COLUMNS}`,
        [
          id,
          initiation.reference,
          initiation.rawStatus,
          initiation.next,
          initiation.data,
          initiation.nextSyncAt,
          at,
        ],
      );
      return row;
    },

    /** Tenant-scoped: another account's or mode's payment is not found. */
    async find(db: Queryable, accountId: string, mode: Mode, id: string): Promise<PaymentRow | undefined> {
      const [row] = await db.query<PaymentRow>(
        {
          name: 'payments_find',
          text: `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = $1 AND account_id = $2 AND mode = $3`,
        },
        [id, accountId, mode],
      );
      return row;
    },

    /**
     * By id alone: the browser-facing pages and the reconciler hold the payment id, not an API key.
     * `lock` takes the row lock, so that outcomes applied at once (a webhook and a return) take turns.
     */
    async findById(db: Queryable, id: string, lock = false): Promise<PaymentRow | undefined> {
      const [row] = await db.query<PaymentRow>(lock ? FIND_BY_ID_FOR_UPDATE : FIND_BY_ID, [id]);
      return row;
    },

    /**
     * The one status write: compare-and-set on `from`. `tokenHash`, when given, must match the stored
     * authentication token, which is cleared by the same update (so it works once).
     */
    async changeStatus(tx: Queryable, change: StatusChange): Promise<PaymentRow | undefined> {
      const facts = change.facts?.facts;
      const [row] = await tx.query<PaymentRow>(
        {
          name: 'payments_change_status',
          text: `UPDATE payments
            SET status = $3, error_code = $4, error_reason = $5, updated_at = $6,
                captured_at = CASE WHEN $3 = 'captured' THEN $6 ELSE captured_at END,
                authorised_at = CASE WHEN $3 = 'captured' THEN coalesce(authorised_at, $6) ELSE authorised_at END,
                pending_at = CASE WHEN $3 = 'pending' OR $18::boolean THEN $6 ELSE pending_at END,
                auth_token_hash = CASE WHEN $7::bytea IS NULL THEN auth_token_hash ELSE NULL END,
                provider_data = provider_data || $8::jsonb,
                next_sync_at = CASE WHEN $9::boolean THEN $10::timestamptz ELSE next_sync_at END,
                provider_status = coalesce($11, provider_status), provider_reference = coalesce($12, provider_reference),
                bank_reference = coalesce($13, bank_reference), fee = coalesce($14, fee), tax = coalesce($15, tax),
                upi_payer_vpa = coalesce($16, upi_payer_vpa),
                sync_attempts = sync_attempts + CASE WHEN $17::boolean THEN 1 ELSE 0 END
          WHERE id = $1 AND status = $2 AND ($7::bytea IS NULL OR auth_token_hash = $7)
            AND ($19::timestamptz IS NULL OR updated_at = $19)
          RETURNING ${PAYMENT_COLUMNS}`,
        },
        [
          change.id,
          change.from,
          change.to,
          change.errorCode,
          change.errorReason,
          change.at,
          change.tokenHash ?? null,
          { ...change.providerData, ...facts?.data },
          change.nextSyncAt !== undefined,
          change.nextSyncAt ?? null,
          facts?.rawStatus ?? null,
          facts?.reference ?? null,
          facts?.bankReference ?? null,
          facts?.fee ?? null,
          facts?.tax ?? null,
          facts?.payerVpa ?? null,
          change.facts?.asked ?? false,
          change.acted ?? false,
          change.unchangedSince ?? null,
        ],
      );
      return row;
    },

    /**
     * Records what the provider said and when to ask next, whatever the state; `status` is the
     * state the caller saw (compare-and-set), so a note never lands on a payment that moved since.
     * `updated_at` moves only when a field the payment shows changes (bank reference, fee, tax, the
     * payer's VPA): asking again and hearing nothing new changes nothing a merchant sees.
     */
    async recordProviderFacts(
      tx: Queryable,
      id: string,
      status: PaymentStatus,
      facts: ProviderFacts,
      schedule: { nextSyncAt: Date | null; asked: boolean },
      at: Date,
    ): Promise<PaymentRow | undefined> {
      const [row] = await tx.query<PaymentRow>(
        {
          name: 'payments_record_facts',
          text: `UPDATE payments
            SET provider_status = coalesce($3, provider_status), provider_reference = coalesce($4, provider_reference),
                bank_reference = coalesce($5, bank_reference), fee = coalesce($6, fee), tax = coalesce($7, tax),
                provider_data = provider_data || $8::jsonb, next_sync_at = $9,
                sync_attempts = sync_attempts + CASE WHEN $10::boolean THEN 1 ELSE 0 END,
                upi_payer_vpa = coalesce($12, upi_payer_vpa),
                updated_at = CASE WHEN (bank_reference, fee, tax, upi_payer_vpa)
                  IS DISTINCT FROM (coalesce($5, bank_reference), coalesce($6, fee), coalesce($7, tax),
                                    coalesce($12, upi_payer_vpa)) THEN $11 ELSE updated_at END
          WHERE id = $1 AND status = $2
          RETURNING ${PAYMENT_COLUMNS}`,
        },
        [
          id,
          status,
          facts.rawStatus ?? null,
          facts.reference ?? null,
          facts.bankReference ?? null,
          facts.fee ?? null,
          facts.tax ?? null,
          facts.data ?? {},
          schedule.nextSyncAt,
          schedule.asked,
          at,
          facts.payerVpa ?? null,
        ],
      );
      return row;
    },

    /**
     * A failed payment the bank authorised after all, whose order another payment had paid: it stays
     * failed, and the authorisation and the money owed back are recorded (once).
     */
    async recordRefusedAuthorisation(
      tx: Queryable,
      id: string,
      failure: { errorCode: string; errorReason: string },
      at: Date,
    ): Promise<PaymentRow | undefined> {
      const [row] = await tx.query<PaymentRow>(
        `UPDATE payments
            SET authorised_at = $4, refund_due = true, error_code = $2, error_reason = $3, updated_at = $4
          WHERE id = $1 AND status = 'failed' AND NOT refund_due
          RETURNING ${PAYMENT_COLUMNS}`,
        [id, failure.errorCode, failure.errorReason, at],
      );
      return row;
    },

    /**
     * The authentication page's one statement: the payment, and for a test payment that waits for
     * its customer on the sandbox bank page, is not past its expiry (`created_at` from `notBefore`
     * on) and whose order no other payment has paid, a fresh token set (`tokenSet`). Any other
     * payment is only read.
     */
    async findForPage(
      db: Queryable,
      id: string,
      tokenHash: Buffer,
      notBefore: Date,
    ): Promise<{ payment: PaymentRow; tokenSet: boolean } | undefined> {
      const [row] = await db.query<PaymentRow & { token_set: boolean }>(
        {
          name: 'payments_find_for_page',
          text: `WITH opened AS (
              UPDATE payments SET auth_token_hash = $2
               WHERE id = $1 AND status = 'created' AND method <> 'upi' AND provider_next ->> 'kind' = 'sandbox'
                 AND (next_sync_at IS NOT NULL OR created_at >= $3)
                 AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = payments.order_id AND o.status = 'paid')
              RETURNING id)
            SELECT ${PAYMENT_COLUMNS}, EXISTS (SELECT 1 FROM opened) AS token_set FROM payments WHERE id = $1`,
        },
        [id, tokenHash, notBefore],
      );
      if (!row) return undefined;
      const { token_set: tokenSet, ...payment } = row;
      return { payment, tokenSet };
    },

    /**
     * A fresh authentication token for a payment still waiting for its customer, who has not chosen
     * yet (a sandbox UPI payment left to expire keeps its choice: no page takes another).
     */
    async setTokenHash(db: Queryable, id: string, tokenHash: Buffer): Promise<boolean> {
      const rows = await db.query(
        {
          name: 'payments_set_token',
          text: `UPDATE payments SET auth_token_hash = $2
                  WHERE id = $1 AND status = 'created' AND provider_data ->> 'choice' IS NULL RETURNING id`,
        },
        [id, tokenHash],
      );
      return rows.length === 1;
    },

    /**
     * A choice that leaves the payment `created` (the sandbox UPI app's "Let it expire"): recorded
     * in its provider data with the page's token used up, by compare-and-set on both, once.
     * Undefined when the payment moved on, the token did not match, or a choice was made already.
     */
    async recordWaitingChoice(
      db: Queryable,
      id: string,
      tokenHash: Buffer,
      choice: string,
    ): Promise<PaymentRow | undefined> {
      const [row] = await db.query<PaymentRow>(
        {
          name: 'payments_record_waiting_choice',
          text: `UPDATE payments
            SET auth_token_hash = NULL, provider_data = provider_data || jsonb_build_object('choice', $3::text)
          WHERE id = $1 AND status = 'created' AND auth_token_hash = $2 AND provider_data ->> 'choice' IS NULL
          RETURNING ${PAYMENT_COLUMNS}`,
        },
        [id, tokenHash, choice],
      );
      return row;
    },

    /** The account's secret for the mode; the first use stores `fresh()` (a racing first use loses). */
    async returnSigningSecret(
      db: Queryable,
      accountId: string,
      mode: Mode,
      fresh: () => string,
    ): Promise<string> {
      const select = 'SELECT secret FROM return_signing_secrets WHERE account_id = $1 AND mode = $2';
      const [found] = await db.query<{ secret: string }>(select, [accountId, mode]);
      if (found) return found.secret;
      await db.query(
        `INSERT INTO return_signing_secrets (account_id, mode, secret) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
        [accountId, mode, fresh()],
      );
      const [row] = await db.query<{ secret: string }>(select, [accountId, mode]);
      return row!.secret;
    },
  };
}

export type PaymentsRepo = ReturnType<typeof createPaymentsRepo>;
