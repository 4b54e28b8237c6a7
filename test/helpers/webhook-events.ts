import type { Mode } from '../../src/domain/scope.js';
import type { EventType } from '../../src/modules/events/events.service.js';
import type { Harness, TestAccount } from './harness.js';

/** A payload shaped like the payments module's: the payment and its order. */
export function samplePayload(n = 1): Record<string, unknown> {
  return {
    payment: { id: `pay_sample${n}`, entity: 'payment', amount: 5000, currency: 'INR', status: 'captured' },
    order: { id: `order_sample${n}`, entity: 'order', amount: 5000, status: 'paid' },
  };
}

/** Records an event the way a module does: inside a transaction, through the events service. */
export async function recordEvent(
  harness: Harness,
  account: TestAccount,
  options: { type?: EventType; mode?: Mode; data?: Record<string, unknown> } = {},
) {
  return harness.container.db.transaction((tx) =>
    harness.container.services.events.record(tx, {
      accountId: account.id,
      mode: options.mode ?? 'test',
      type: options.type ?? 'payment.captured',
      data: options.data ?? samplePayload(),
    }),
  );
}

/** Runs fan-out and delivery until nothing is due at the current (test) time. */
export async function drain(harness: Harness): Promise<void> {
  while ((await harness.container.services.webhooks.fanOut(500)) > 0) {}
  while ((await harness.container.webhookDelivery.runOnce()) > 0) {}
}
