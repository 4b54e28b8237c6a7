import type { Job } from '../../jobs/runner.js';
import type { DeliveryWorker } from './delivery-worker.js';
import type { WebhooksService } from './webhooks.service.js';

const FAN_OUT_BATCH = 200;
/**
 * After a batch of fewer than FAN_OUT_BATCH events, the fan-out waits this long (at most its poll
 * interval) before the next: under load, events gather into fewer, larger batches (a batch costs
 * three or four round trips however many events it holds), and an event waits at most this much
 * longer for its deliveries.
 */
const FAN_OUT_GATHER_MS = 50;

/** The two background jobs of webhook delivery: events → deliveries, then deliveries → HTTP. */
export function webhookJobs(
  webhooks: WebhooksService,
  worker: DeliveryWorker,
  idleIntervalMs: number,
): Job[] {
  return [
    {
      name: 'webhook-fan-out',
      idleIntervalMs,
      gather: { size: FAN_OUT_BATCH, pauseMs: Math.min(FAN_OUT_GATHER_MS, idleIntervalMs) },
      run: () => webhooks.fanOut(FAN_OUT_BATCH),
    },
    {
      name: 'webhook-delivery',
      idleIntervalMs,
      run: (signal) => worker.pump(signal),
      stop: () => worker.drain(),
    },
  ];
}
