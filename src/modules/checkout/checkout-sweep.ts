import type { Job } from '../../jobs/runner.js';
import type { CheckoutService } from './checkout.service.js';

export const CHECKOUT_SWEEP_BATCH_SIZE = 100;

/**
 * Moves open checkout sessions on, exactly once each: completed when their order is paid (with the
 * captured payment), expired at `expires_at`. Each batch is one transaction that claims its rows
 * with FOR UPDATE SKIP LOCKED and moves them by compare-and-set from `open`, with the event, so
 * any number of processes (and a merchant's fetch) can settle sessions at once.
 */
export function createCheckoutSweepJob(deps: {
  checkout: CheckoutService;
  batchSize?: number;
  idleIntervalMs?: number;
}): Job {
  const batchSize = deps.batchSize ?? CHECKOUT_SWEEP_BATCH_SIZE;
  return {
    name: 'checkout-sweep',
    idleIntervalMs: deps.idleIntervalMs ?? 5_000,
    run: () => deps.checkout.sweepDue(batchSize),
  };
}
