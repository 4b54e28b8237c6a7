import type { Logger } from 'pino';
import type { StatusResult } from '../../connectors/connector.js';
import type { ConnectorDirectory } from '../../connectors/directory.js';
import { CallInTransactionError, type Db } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import type { Job } from '../../jobs/runner.js';
import { toConnectorPayment } from './payments.model.js';
import type { PaymentRow, PaymentsRepo } from './payments.repo.js';
import type { PaymentStates } from './payments.states.js';

export const SYNC_BATCH_SIZE = 50;

/**
 * The reconciler (`payment-sync`): asks the provider about every payment whose outcome is open and
 * whose time has come (`next_sync_at`, set from the backoff schedule and the payment's deadlines),
 * and applies the answer through the transition table. A claim moves the payment's next time on by
 * a lease in one committed statement (FOR UPDATE SKIP LOCKED), the provider is asked outside any
 * transaction, and the answer is applied under the row lock with compare-and-set: any number of
 * processes can run it, and one killed while asking leaves the payment to be claimed again.
 */
export function createPaymentSyncJob(deps: {
  db: Db;
  repo: PaymentsRepo;
  states: PaymentStates;
  connectors: ConnectorDirectory;
  clock: Clock;
  publicUrl: string;
  log: Logger;
  /** How long a claimed payment is left to the process that claimed it before another may ask (KOSH_SYNC_LEASE_MS). */
  leaseMs: number;
  batchSize?: number;
  idleIntervalMs?: number;
}): Job & { syncOne(payment: PaymentRow): Promise<PaymentRow | undefined> } {
  const { db, repo, states, connectors, clock, publicUrl, log } = deps;

  async function syncOne(payment: PaymentRow): Promise<PaymentRow | undefined> {
    let answer: StatusResult;
    try {
      const connector = await connectors.forPayment(payment);
      answer = await connector.status(toConnectorPayment(payment, publicUrl));
    } catch (error) {
      // A call made where it must not be is Kosh's bug, not the provider's silence.
      if (error instanceof CallInTransactionError) throw error;
      log.warn(
        { err: error, payment_id: payment.id, connector: payment.connector },
        'payment status call failed',
      );
      answer = { outcome: 'unknown', reason: error instanceof Error ? error.message : String(error) };
    }
    return states.apply(payment.id, answer, { asked: true, seen: payment });
  }

  return {
    name: 'payment-sync',
    idleIntervalMs: deps.idleIntervalMs ?? 1_000,
    syncOne,
    async run() {
      const now = clock.now();
      const claimed = await repo.claimDueForSync(
        db,
        now,
        new Date(now.getTime() + deps.leaseMs),
        deps.batchSize ?? SYNC_BATCH_SIZE,
      );
      const results = await Promise.allSettled(claimed.map((payment) => syncOne(payment)));
      for (const result of results) {
        // The lease is set: the payment is asked again when it ends.
        if (result.status === 'rejected')
          log.error({ err: result.reason }, 'applying a payment status failed');
      }
      return claimed.length;
    },
  };
}
