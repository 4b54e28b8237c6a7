import type { Logger } from 'pino';
import type { Connector, InitiateResult } from '../../connectors/connector.js';
import { CallInTransactionError, type Db } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { toConnectorPayment } from './payments.model.js';
import type { Initiation, PaymentRow, PaymentsRepo } from './payments.repo.js';
import type { PaymentStates } from './payments.states.js';
import { nextSyncAt, type PaymentDeadlines } from './sync-schedule.js';

export type MerchantAction = 'html_form' | 'redirect';

/** The action Kosh answered (or will answer) in `next[0]` for a started bank or wallet payment. */
export function actionOf(row: Pick<PaymentRow, 'provider_data'>): MerchantAction {
  return row.provider_data.action === 'html_form' ? 'html_form' : 'redirect';
}

/**
 * Starting a payment at its provider, after the payment row is committed: call `initiate` (or
 * `continueInBrowser`) outside any transaction, then record the answer. A refusal fails the payment
 * with the provider's reason; an answer Kosh cannot read leaves it open and asks about it soon.
 */
export function createPaymentInitiation(deps: {
  db: Db;
  repo: PaymentsRepo;
  states: PaymentStates;
  clock: Clock;
  deadlines: PaymentDeadlines;
  publicUrl: string;
  log: Logger;
}) {
  const { db, repo, states, clock, deadlines, publicUrl, log } = deps;

  const firstSync = (createdAt: Date, now: Date, expiresAt: Date | null) =>
    nextSyncAt(
      {
        status: 'created',
        created_at: createdAt,
        pending_at: null,
        error_code: null,
        refund_due: false,
        expires_at: expiresAt,
      },
      0,
      now,
      deadlines,
    );

  /** The row fields that record a started payment. */
  function fromResult(
    result: Extract<InitiateResult, { outcome: 'started' }>,
    createdAt: Date,
    now: Date,
    expiresAt: Date | null,
  ): Initiation {
    return {
      reference: result.reference,
      rawStatus: result.rawStatus,
      next: result.next,
      data: { ...result.data, action: result.action },
      // A UPI payment is always asked about until its own deadline.
      nextSyncAt:
        result.reconcile || expiresAt !== null
          ? (result.askAt ?? firstSync(createdAt, now, expiresAt))
          : null,
    };
  }

  async function call(run: () => Promise<InitiateResult>, payment: PaymentRow): Promise<InitiateResult> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof CallInTransactionError) throw error;
      // A connector that throws has given no answer Kosh can trust: the payment stays open.
      log.warn({ err: error, payment_id: payment.id, connector: payment.connector }, 'connector call failed');
      return { outcome: 'unknown', reason: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Records the answer; returns the payment as it is afterwards. */
  async function record(payment: PaymentRow, result: InitiateResult): Promise<PaymentRow> {
    const now = clock.now();
    if (result.outcome === 'started') {
      return (
        (await repo.recordInitiation(
          db,
          payment.id,
          fromResult(result, payment.created_at, now, payment.expires_at),
          now,
        )) ?? payment
      );
    }
    if (result.outcome === 'failed') {
      const failed = await states.apply(
        payment.id,
        {
          outcome: 'failed',
          errorCode: result.errorCode,
          errorReason: result.errorReason,
          rawStatus: result.rawStatus,
          reference: result.reference,
        },
        { asked: false },
      );
      return failed ?? payment;
    }
    log.warn(
      { payment_id: payment.id, connector: payment.connector, reason: result.reason },
      'payment start unknown; reconciling',
    );
    const unknown: Initiation = {
      reference: null,
      rawStatus: null,
      // A browser step that could not be taken stays to be taken again on the next visit.
      next: payment.provider_next,
      data: {},
      nextSyncAt: firstSync(payment.created_at, now, payment.expires_at),
    };
    return (await repo.recordInitiation(db, payment.id, unknown, now)) ?? payment;
  }

  return {
    fromResult,
    firstSync,

    /**
     * Starts a committed payment at its provider, unless that already happened (a resumed request,
     * a second visit of the page); returns the payment as it is afterwards.
     */
    async start(payment: PaymentRow, connector: Connector): Promise<PaymentRow> {
      if (payment.provider_next || payment.status !== 'created') return payment;
      db.assertNoTransaction('payment initiation');
      const result = await call(() => connector.initiate(toConnectorPayment(payment, publicUrl)), payment);
      return record(payment, result);
    },

    /** For a `browser` next step: the provider starts the payment now that the browser is here. */
    async continueInBrowser(
      payment: PaymentRow,
      connector: Connector,
      browser: { ip: string; userAgent: string | null; referer: string | null },
    ): Promise<PaymentRow> {
      const continueInBrowser = connector.continueInBrowser;
      if (!continueInBrowser) return payment;
      const result = await call(
        () => continueInBrowser(toConnectorPayment(payment, publicUrl), browser),
        payment,
      );
      return record(payment, result);
    },
  };
}

export type PaymentInitiation = ReturnType<typeof createPaymentInitiation>;
