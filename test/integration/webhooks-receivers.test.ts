import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, it } from 'vitest';
import { RETRY_DELAYS_MS } from '../../src/modules/webhooks/retry-schedule.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { drain, recordEvent } from '../helpers/webhook-events.js';
import { TestReceiver } from '../helpers/webhook-receiver.js';

const TIMEOUT_MS = 2_000;
const SLOTS = 4;

/**
 * What a receiver can do to delivery, and what it must not: hang (it holds back no other account),
 * answer a NUL byte or a body that never ends (its status still counts), and be disabled or
 * redelivered while a request to it is in flight (the request's outcome does not undo that). The
 * sender here has 4 slots and a 2-second timeout.
 */
describeEachDatabase(
  'webhook receivers',
  (harness) => {
    const closers: (() => Promise<void>)[] = [];
    afterAll(async () => {
      await Promise.all(closers.map((close) => close()));
    });

    async function receiver(): Promise<TestReceiver> {
      const started = await TestReceiver.start(() => harness().clock.now());
      closers.push(() => started.close());
      return started;
    }

    async function endpoint(account: TestAccount, url: string): Promise<string> {
      const response = await harness().request('POST', '/v1/webhooks/', { auth: account, json: { url } });
      expect(response.statusCode, response.body).toBe(200);
      return response.json().data.id;
    }

    async function deliveryOf(account: TestAccount, eventId: string) {
      const response = await harness().request('GET', `/v1/events/${eventId}/deliveries/`, { auth: account });
      expect(response.statusCode).toBe(200);
      const [delivery] = response.json().data;
      return delivery;
    }

    it('a receiver that never answers holds back no other account: the sender takes a slot again as one ends, and gives one account half of them', async () => {
      const stalling = await harness().merchant('Stalling');
      const waiting = await harness().merchant('Waiting');
      const hanging = await receiver();
      hanging.hold = true;
      const healthy = await receiver();
      const stalled: string[] = [];
      for (let i = 0; i < 6; i++) stalled.push(await endpoint(stalling, hanging.url(`/hang/${i}`)));
      await endpoint(waiting, healthy.url());
      await recordEvent(harness(), stalling);
      await recordEvent(harness(), waiting);
      while ((await harness().container.services.webhooks.fanOut(500)) > 0) {}

      const worker = harness().container.webhookDelivery;
      const controller = new AbortController();
      const job = (async () => {
        while (!controller.signal.aborted) if ((await worker.pump(controller.signal)) === 0) await sleep(10);
      })();
      const started = Date.now();
      while (healthy.received.length === 0 && Date.now() - started < TIMEOUT_MS * 2) await sleep(10);
      const waited = Date.now() - started;
      controller.abort();
      await job;
      // Delivered while the hanging requests were still open, not after their timeout.
      expect(healthy.received).toHaveLength(1);
      expect(waited).toBeLessThan(TIMEOUT_MS / 2);
      // Of the six due for the stalling account, it held half the slots.
      expect(hanging.received).toHaveLength(SLOTS / 2);
      await worker.drain();
      // The stalling account's deliveries end here, not in the next tests.
      for (const id of stalled) {
        const off = { auth: stalling, json: { enabled: false } };
        expect((await harness().request('PATCH', `/v1/webhooks/${id}/`, off)).statusCode).toBe(200);
      }
    });

    it('records a receiver’s answer holding a NUL byte: the attempt is logged once and counts', async () => {
      const account = await harness().merchant('Nul Answer');
      const target = await receiver();
      target.responseBody = 'A\u0000B';
      await endpoint(account, target.url());
      const event = await recordEvent(harness(), account);
      await drain(harness());
      await drain(harness());
      expect(target.received).toHaveLength(1);
      const delivery = await deliveryOf(account, event.id);
      expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 1 });
      expect(delivery.attempts[0]).toMatchObject({ status_code: 200, response_body: 'AB', error: null });
    });

    it('counts a 2xx that came in time even when its body never ends', async () => {
      const account = await harness().merchant('Slow Body');
      const dripping = http.createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.write('ok');
        const drip = setInterval(() => response.write('.'), 200);
        response.on('close', () => clearInterval(drip));
      });
      await new Promise<void>((resolve) => dripping.listen(0, '127.0.0.1', resolve));
      closers.push(async () => {
        dripping.closeAllConnections();
        await new Promise<void>((resolve) => dripping.close(() => resolve()));
      });
      const port = (dripping.address() as AddressInfo).port;
      await endpoint(account, `http://127.0.0.1:${port}/drip`);
      const event = await recordEvent(harness(), account);
      await drain(harness());
      const delivery = await deliveryOf(account, event.id);
      expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 1 });
      expect(delivery.attempts[0]).toMatchObject({ status_code: 200, error: null, succeeded: true });
      expect(delivery.attempts[0].response_body).toMatch(/^ok\.*$/);
    });

    it('keeps a delivery failed when its endpoint is disabled while a request to it is open, and sends it again only when asked', async () => {
      const account = await harness().merchant('Disabled Mid Request');
      const target = await receiver();
      target.hold = true;
      const id = await endpoint(account, target.url());
      const event = await recordEvent(harness(), account);
      while ((await harness().container.services.webhooks.fanOut(500)) > 0) {}
      const sending = harness().container.webhookDelivery.runOnce();
      while (target.received.length === 0) await sleep(10);
      const disabled = await harness().request('PATCH', `/v1/webhooks/${id}/`, {
        auth: account,
        json: { enabled: false },
      });
      expect(disabled.statusCode, disabled.body).toBe(200);
      await sending;
      expect(await deliveryOf(account, event.id)).toMatchObject({ status: 'failed', next_attempt_at: null });

      target.hold = false;
      const enabled = await harness().request('PATCH', `/v1/webhooks/${id}/`, {
        auth: account,
        json: { enabled: true },
      });
      expect(enabled.statusCode).toBe(200);
      harness().clock.advance(3_600_000);
      await drain(harness());
      expect(target.received).toHaveLength(1);
      expect((await deliveryOf(account, event.id)).status).toBe('failed');
    });

    it('gives a redelivered pending delivery a fresh retry schedule', async () => {
      const account = await harness().merchant('Redelivered Pending');
      const target = await receiver();
      target.status = 500;
      const id = await endpoint(account, target.url());
      const event = await recordEvent(harness(), account);
      await drain(harness());
      harness().clock.advance(RETRY_DELAYS_MS[0]! * 1.21);
      await drain(harness());
      expect(await deliveryOf(account, event.id)).toMatchObject({ status: 'pending', attempt_count: 2 });

      const redelivered = await harness().request('POST', `/v1/events/${event.id}/redeliver/`, {
        auth: account,
        json: { endpoint_id: id },
      });
      expect(redelivered.statusCode, redelivered.body).toBe(200);
      await drain(harness());
      const now = Math.floor(harness().clock.now().getTime() / 1000);
      const delivery = await deliveryOf(account, event.id);
      // The first attempt of a fresh schedule: the next is the schedule's first delay away.
      expect(delivery).toMatchObject({ status: 'pending', attempt_count: 1 });
      expect(delivery.next_attempt_at - now).toBeLessThanOrEqual(
        Math.ceil((RETRY_DELAYS_MS[0]! * 1.2) / 1000),
      );
      expect(target.received).toHaveLength(3);
    });

    it('logs a delivery it cannot sign as a failed attempt on the schedule, without sending it', async () => {
      const account = await harness().merchant('Unsignable');
      const target = await receiver();
      const id = await endpoint(account, target.url());
      await harness().container.db.query(
        "UPDATE webhook_endpoints SET secret = 'not a sealed secret' WHERE id = $1",
        [id],
      );
      const event = await recordEvent(harness(), account);
      await drain(harness());
      await drain(harness());
      expect(target.connections).toBe(0);
      const delivery = await deliveryOf(account, event.id);
      expect(delivery).toMatchObject({ status: 'pending', attempt_count: 1 });
      expect(delivery.attempts).toHaveLength(1);
      expect(delivery.attempts[0]).toMatchObject({
        status_code: null,
        succeeded: false,
        error: 'not sent: its signing secret could not be read',
      });
    });
  },
  {
    KOSH_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    KOSH_WEBHOOK_LEASE_MS: String(TIMEOUT_MS + 2_000),
    KOSH_WEBHOOK_BATCH_SIZE: String(SLOTS),
  },
);
