import type { Logger } from 'pino';
import type { Db } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import type { Job } from '../../jobs/runner.js';
import { SYNC_BATCH_SIZE } from '../payments/payment-sync.js';
import type { PaymentsLedger } from '../payments/payments.ledger.js';
import type { RefundExecution } from './refund-execution.js';
import type { RefundRow, RefundsRepo } from './refunds.repo.js';
import type { RefundsService } from './refunds.service.js';

/**
 * The refund reconciler (`refund-sync`). Each round it
 * 1. refunds, in full, every payment whose money is owed back (authorised by the bank after another
 *    payment paid its order) and not yet being refunded;
 * 2. claims the pending refunds whose time has come (a lease moves their next time on, FOR UPDATE
 *    SKIP LOCKED) and either sends them to the provider (never acknowledged: the request that made
 *    them died, or the answer was unreadable; the refund id keeps a resend from refunding twice) or
 *    asks the provider about them, applying the answer.
 * Any number of processes can run it; one killed mid-round leaves its claims to run out.
 */
export function createRefundSyncJob(deps: {
  db: Db;
  repo: RefundsRepo;
  payments: PaymentsLedger;
  refunds: RefundsService;
  execution: RefundExecution;
  clock: Clock;
  log: Logger;
  /** How long a claimed refund is left to the process that claimed it (KOSH_SYNC_LEASE_MS). */
  leaseMs: number;
  idleIntervalMs?: number;
  batchSize?: number;
}): Job & { syncOne(refund: RefundRow): Promise<RefundRow> } {
  const { db, repo, payments, refunds, execution, clock, log } = deps;
  const batch = deps.batchSize ?? SYNC_BATCH_SIZE;

  const syncOne = (refund: RefundRow) =>
    refund.submitted_at ? execution.sync(refund) : execution.submit(refund, true);

  const report = (results: PromiseSettledResult<unknown>[], what: string) => {
    for (const result of results) {
      if (result.status === 'rejected') log.error({ err: result.reason }, what);
    }
  };

  return {
    name: 'refund-sync',
    idleIntervalMs: deps.idleIntervalMs ?? 1_000,
    syncOne,
    async run() {
      const now = clock.now();
      const owed = await payments.owedBackWithoutRefund(db, now, batch);
      const made = await Promise.allSettled(owed.map((payment) => refunds.refundOwedBack(payment)));
      report(made, 'refunding a payment owed back failed');
      const claimed = await repo.claimDueForSync(db, now, new Date(now.getTime() + deps.leaseMs), batch);
      report(await Promise.allSettled(claimed.map(syncOne)), 'syncing a refund failed');
      // Only work done counts: a payment that could not be refunded now waits for the next round.
      return made.filter((result) => result.status === 'fulfilled' && result.value).length + claimed.length;
    },
  };
}
