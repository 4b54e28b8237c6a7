import type { Job } from '../../jobs/runner.js';
import type { DeliveryWorker } from './delivery-worker.js';
import type { WebhooksService } from './webhooks.service.js';

const FAN_OUT_BATCH = 200;

/** The two background jobs of webhook delivery: events → deliveries, then deliveries → HTTP. */
export function webhookJobs(
  webhooks: WebhooksService,
  worker: DeliveryWorker,
  idleIntervalMs: number,
): Job[] {
  return [
    { name: 'webhook-fan-out', idleIntervalMs, run: () => webhooks.fanOut(FAN_OUT_BATCH) },
    { name: 'webhook-delivery', idleIntervalMs, run: (signal) => worker.runOnce(signal) },
  ];
}
