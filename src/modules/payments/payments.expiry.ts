import type { Db } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import type { Job } from '../../jobs/runner.js';
import type { PaymentsRepo } from './payments.repo.js';
import type { PaymentStates } from './payments.states.js';

export const EXPIRY_BATCH_SIZE = 100;

/** The failure recorded on an expired payment, by the sweep or by a late visit to its page. */
export function expiryFailure(expirySeconds: number) {
  return {
    errorCode: 'payment_expired',
    errorReason: `The customer did not complete the payment within ${expirySeconds} seconds.`,
  };
}

export function isExpired(createdAt: Date, now: Date, expirySeconds: number): boolean {
  return now.getTime() - createdAt.getTime() > expirySeconds * 1000;
}

/**
 * Fails `created` payments nobody touched within the expiry time (`payment_expired`). Each batch
 * claims its rows with FOR UPDATE SKIP LOCKED, so any number of processes can sweep at once
 * without two of them expiring the same payment; the compare-and-set in `move` is the second guard.
 */
export function createPaymentExpiryJob(deps: {
  db: Db;
  repo: PaymentsRepo;
  states: PaymentStates;
  clock: Clock;
  expirySeconds: number;
  batchSize?: number;
  idleIntervalMs?: number;
}): Job {
  const { db, repo, states, clock, expirySeconds } = deps;
  const batchSize = deps.batchSize ?? EXPIRY_BATCH_SIZE;
  return {
    name: 'payment-expiry',
    idleIntervalMs: deps.idleIntervalMs ?? 5_000,
    async run() {
      const cutoff = new Date(clock.now().getTime() - expirySeconds * 1000);
      return db.transaction(async (tx) => {
        const claimed = await repo.claimExpired(tx, cutoff, batchSize);
        let expired = 0;
        for (const payment of claimed) {
          const moved = await states.move(tx, payment, 'expired', expiryFailure(expirySeconds));
          if (moved) expired++;
        }
        return expired;
      });
    },
  };
}
