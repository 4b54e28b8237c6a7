import type { Container } from '../container.js';
import { webhookJobs } from '../modules/webhooks/webhook-jobs.js';
import type { Job } from './runner.js';

/** Every background job `kosh serve` (and `kosh worker`) runs. Add new jobs here. */
export function backgroundJobs(container: Container): Job[] {
  return [
    container.jobs.paymentExpiry,
    container.jobs.paymentSync,
    container.jobs.refundSync,
    container.jobs.checkoutSweep,
    container.services.idempotency.purgeJob(),
    container.services.dashboardUsers.purgeJob(),
    ...[container.services.limits.purgeJob()].filter((job) => job !== undefined),
    ...webhookJobs(
      container.services.webhooks,
      container.webhookDelivery,
      container.config.webhooks.pollIntervalMs,
    ),
  ];
}
