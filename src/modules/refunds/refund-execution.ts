import type { Logger } from 'pino';
import type { RefundResult } from '../../connectors/connector.js';
import type { ConnectorDirectory } from '../../connectors/directory.js';
import { CallInTransactionError, type Db, type Queryable } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { KoshError } from '../../domain/errors.js';
import type { Failpoints } from '../../domain/failpoints.js';
import type { EventsService } from '../events/events.service.js';
import type { PaymentsLedger } from '../payments/payments.ledger.js';
import { type PaymentRow, toPayment } from '../payments/payments.model.js';
import { syncDelaySeconds } from '../payments/sync-schedule.js';
import { type RefundTrigger, refundTransition } from './refund.transitions.js';
import { toConnectorRefund, toRefund } from './refunds.model.js';
import type { RefundRow, RefundsRepo } from './refunds.repo.js';

const TRIGGERS: Partial<Record<RefundResult['outcome'], RefundTrigger>> = {
  processed: 'provider_processed',
  failed: 'provider_failed',
};

/**
 * How a recorded refund reaches its provider and how the provider's answers move it. `submit` calls
 * the connector's `refund` outside any transaction, with the refund id as the provider's idempotency
 * key, so sending it again after a crash or an unknown answer never refunds twice; `apply` records an
 * answer under the refund's row lock: a final one moves the refund through the transition table
 * (compare-and-set, its event in the same transaction, a failure giving its amount back to the
 * payment), anything else leaves it pending and sets when to ask next.
 */
export function createRefundExecution(deps: {
  db: Db;
  repo: RefundsRepo;
  payments: PaymentsLedger;
  events: EventsService;
  connectors: ConnectorDirectory;
  clock: Clock;
  publicUrl: string;
  log: Logger;
  failpoints: Failpoints;
}) {
  const { db, repo, payments, events, connectors, clock, publicUrl, log } = deps;

  async function recordEvent(
    tx: Queryable,
    refund: RefundRow,
    payment: PaymentRow,
    type: Parameters<EventsService['record']>[1]['type'],
  ) {
    await events.record(tx, {
      accountId: refund.account_id,
      mode: refund.mode,
      type,
      data: { refund: toRefund(refund), payment: toPayment(payment) },
    });
  }

  async function applyIn(
    tx: Queryable,
    refundId: string,
    result: RefundResult,
    how: { asked: boolean; submitted: boolean },
  ): Promise<RefundRow | undefined> {
    const refund = await repo.findById(tx, refundId, true);
    if (!refund) return undefined;
    const now = clock.now();
    let current = refund;
    const trigger = TRIGGERS[result.outcome];
    const transition = trigger && refundTransition(refund.status, trigger);
    if (transition) {
      const failed = transition.to === 'failed';
      const moved = await repo.changeStatus(tx, {
        id: refund.id,
        from: transition.from,
        to: transition.to,
        errorCode: failed ? (result.errorCode ?? 'refund_failed') : null,
        errorReason: failed ? (result.errorReason ?? 'The provider did not process the refund.') : null,
        at: now,
      });
      if (moved) {
        const payment = transition.releasesAmount
          ? await payments.releaseRefund(tx, refund.payment_id, Number(refund.amount), now)
          : await payments.findById(tx, refund.payment_id);
        if (!payment)
          throw new KoshError('state_conflict', `Payment ${refund.payment_id} did not take the refund back.`);
        await recordEvent(tx, moved, payment, transition.event);
        current = moved;
      }
    }
    const attempts = refund.sync_attempts + (how.asked ? 1 : 0);
    const open = current.status === 'pending';
    const noted = await repo.recordProviderFacts(
      tx,
      refund.id,
      {
        reference: result.reference,
        rawStatus: result.rawStatus,
        data: result.data,
        // An answer Kosh could not read is no proof the provider has it: it is sent again.
        submitted: how.submitted && result.outcome !== 'unknown',
      },
      {
        nextSyncAt: open ? new Date(now.getTime() + syncDelaySeconds(attempts) * 1000) : null,
        asked: how.asked,
      },
      now,
    );
    return noted ?? current;
  }

  async function apply(refundId: string, result: RefundResult, how: { asked: boolean; submitted: boolean }) {
    return db.transaction((tx) => applyIn(tx, refundId, result, how));
  }

  /** Calls a connector, turning anything thrown into an unknown answer (Kosh's own bugs aside). */
  async function call(refund: RefundRow, run: () => Promise<RefundResult>): Promise<RefundResult> {
    try {
      const result = await run();
      // An answer nobody could read is asked again later; its reason tells an operator a provider
      // that is slow from one that has never heard of the refund.
      if (result.outcome === 'unknown') {
        log.warn(
          {
            refund_id: refund.id,
            connector: refund.connector,
            attempts: refund.sync_attempts,
            reason: result.reason,
          },
          'no answer about the refund from the provider; asking again later',
        );
      }
      return result;
    } catch (error) {
      if (error instanceof CallInTransactionError) throw error;
      log.warn({ err: error, refund_id: refund.id, connector: refund.connector }, 'refund call failed');
      return { outcome: 'unknown', reason: error instanceof Error ? error.message : String(error) };
    }
  }

  async function connectorRefund(refund: RefundRow) {
    const payment = await payments.findById(db, refund.payment_id);
    if (!payment) throw new KoshError('state_conflict', `Refund ${refund.id} has no payment.`);
    return {
      connector: await connectors.forPayment(refund),
      subject: toConnectorRefund(refund, payment, publicUrl),
    };
  }

  return {
    apply,

    /**
     * Sends a committed refund to its provider (again, if it was sent before without an answer Kosh
     * could read) and records the answer. `asked`: sent by the reconciler, which counts for its backoff.
     */
    async submit(refund: RefundRow, asked: boolean): Promise<RefundRow> {
      db.assertNoTransaction('refund submission');
      deps.failpoints.failpoint('refund-before-submit');
      const result = await call(refund, async () => {
        const { connector, subject } = await connectorRefund(refund);
        log.info({ refund_id: refund.id, connector: refund.connector }, 'refund sent to connector');
        return connector.refund(subject);
      });
      return (await apply(refund.id, result, { asked, submitted: true })) ?? refund;
    },

    /** Asks the provider about a refund it acknowledged, and records the answer. */
    async sync(refund: RefundRow): Promise<RefundRow> {
      const result = await call(refund, async () => {
        const { connector, subject } = await connectorRefund(refund);
        return connector.refundStatus(subject);
      });
      return (await apply(refund.id, result, { asked: true, submitted: true })) ?? refund;
    },
  };
}

export type RefundExecution = ReturnType<typeof createRefundExecution>;
