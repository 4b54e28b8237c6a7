import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaultFixture, type FaultFixture } from './support/fixture.js';
import { chooseSuccess, paymentBody } from './support/payment-workload.js';
import { freePort } from './support/postgres-instance.js';
import { Service } from './support/service.js';
import { WebhookReceiver } from './support/webhook-receiver.js';
import { type Client, eventIdsOf, httpClient } from './support/workload.js';

const PAYMENT_EVENTS = ['payment.pending', 'payment.captured', 'payment.failed', 'order.paid'];
/** Charges started while the receiver is down: the first half refused, the second half answered 500. */
const CHARGES = 40;
const REFUSED_MS = 4_000;
const ERRORS_MS = 4_000;
/** After the receiver is back: time for the schedule's first retry (~5 s ± 20 %) before redelivery. */
const SCHEDULE_WAIT_MS = 8_000;
const DELIVERY_LIMIT_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Payment and order events of the key's account from the events API (every page); `filter` narrows them. */
const events = (client: Client, filter = '') => eventIdsOf(client, PAYMENT_EVENTS, filter);

const undelivered = (client: Client) => events(client, '&delivery_success=false');

describe('the webhook receiver down during a run', () => {
  let fixture: FaultFixture;
  let service: Service | undefined;
  let receiver: WebhookReceiver | undefined;

  beforeAll(async () => {
    fixture = await createFaultFixture('Webhook Merchant', {
      // The receiver listens on this machine.
      KOSH_ALLOW_LOOPBACK_WEBHOOKS: 'true',
      // Attempts against a dead receiver end quickly; the lease must stay above timeout + 2 s.
      KOSH_WEBHOOK_TIMEOUT_MS: '2000',
      KOSH_WEBHOOK_LEASE_MS: '5000',
      KOSH_WEBHOOK_POLL_INTERVAL_MS: '100',
    });
    service = new Service(await freePort(), fixture.env, ['--workers', '2']);
    await service.start();
  });

  afterAll(async () => {
    await receiver?.close();
    await service?.stop();
    fixture?.destroy();
  });

  it('delivers every event once the receiver is back (schedule first, redelivery for the rest)', async () => {
    const client = httpClient(() => service!.url, fixture.auth, 10_000);
    receiver = new WebhookReceiver(await freePort());
    const endpoint = await client.request('POST', '/v1/webhooks/', {
      url: receiver.url,
      enabled_events: PAYMENT_EVENTS,
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
    receiver.secret = endpoint.body.data.secret;

    // Charges (order → S2S → Success) spread over the outage: refused, then 500s.
    const started = Date.now();
    const charges: Promise<string | undefined>[] = [];
    for (let index = 0; index < CHARGES; index++) {
      if (index === CHARGES / 2) {
        await receiver.listen();
        receiver.state = 'error';
      }
      charges.push(
        (async () => {
          const order = await client.request('POST', '/v1/orders/', { amount: 5000, currency: 'INR' });
          expect(order.status).toBe(200);
          const created = await client.request(
            'POST',
            '/v1/payments/create/s2s/',
            paymentBody(order.body.data.id, 5000, index % 2 === 1),
          );
          expect(created.status).toBe(200);
          return chooseSuccess(client, created.body.payment_id);
        })(),
      );
      await sleep((REFUSED_MS + ERRORS_MS) / CHARGES);
    }
    const statuses = await Promise.all(charges);
    expect(statuses.filter((status) => status === 'captured')).toHaveLength(CHARGES);
    await sleep(Math.max(0, started + REFUSED_MS + ERRORS_MS - Date.now()));
    const attemptsWhileDown = receiver.attempts;

    // Back: the schedule's first retry (~5 s) delivers what failed once; what also failed its
    // first retry waits 5 min by the schedule, so it is sent again with the events API.
    receiver.state = 'up';
    await sleep(SCHEDULE_WAIT_MS);
    const bySchedule = receiver.delivered.size;
    const redelivered = await undelivered(client);
    for (const id of redelivered) {
      const response = await client.request('POST', `/v1/events/${id}/redeliver/`, {});
      expect(response.status, JSON.stringify(response.body)).toBe(200);
    }
    const recorded = await events(client);
    const deadline = Date.now() + DELIVERY_LIMIT_MS;
    while (recorded.some((id) => !receiver!.delivered.has(id)) && Date.now() < deadline) await sleep(200);

    const lost = recorded.filter((id) => !receiver!.delivered.has(id));
    process.stdout.write(
      `[webhook outage] events acknowledged ${recorded.length}, found ${recorded.length - lost.length}, lost ${lost.length}` +
        ` (attempts while down ${attemptsWhileDown}; delivered by the schedule ${bySchedule}, redelivered ${redelivered.length})\n`,
    );
    // Three events per charge: payment.pending, payment.captured, order.paid.
    expect(recorded).toHaveLength(CHARGES * 3);
    expect(attemptsWhileDown).toBeGreaterThan(0);
    expect(lost).toEqual([]);
    // Kosh marks a delivery succeeded once the 200 is back; the receiver counted it a moment earlier.
    let pending = await undelivered(client);
    while (pending.length > 0 && Date.now() < deadline + 5_000) {
      await sleep(200);
      pending = await undelivered(client);
    }
    expect(pending).toEqual([]);
  }, 90_000);
});
