import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LISTEN_DESCRIPTION, startWebhooksListen } from '../../src/cli/webhooks-listen.js';
import { createHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { drain, recordEvent } from '../helpers/webhook-events.js';
import { TestReceiver, verifyWebhook } from '../helpers/webhook-receiver.js';

/** `kosh webhooks listen` against a real listening Kosh; a local app receives the forwarded events. */
let harness: Harness;
let app: TestReceiver;
let apiUrl: string;
let merchant: TestAccount;

beforeAll(async () => {
  harness = await createHarness('pglite');
  await harness.app.listen({ port: 0, host: '127.0.0.1' });
  apiUrl = `http://127.0.0.1:${(harness.app.server.address() as AddressInfo).port}`;
  app = await TestReceiver.start();
  merchant = await harness.merchant();
});
afterAll(async () => {
  await app.close();
  await harness.close();
});

it('registers a test endpoint, prints and forwards each event, and reuses the endpoint next time', async () => {
  const lines: string[] = [];
  const options = {
    apiUrl,
    apiKey: merchant.credentials.api_key,
    secretKey: merchant.credentials.secret_key,
    forwardTo: app.url('/hook'),
    print: (line: string) => lines.push(line),
  };
  const first = await startWebhooksListen(options);
  expect(lines.join('\n')).toContain(first.secret);
  const event = await recordEvent(harness, merchant, { type: 'order.paid' });
  await drain(harness);
  expect(lines.some((line) => line.includes(`--> order.paid [${event.id}]`))).toBe(true);
  expect(lines.some((line) => line.includes('<-- 200'))).toBe(true);
  expect(app.received).toHaveLength(1);
  expect(app.received[0]!.headers['webhook-id']).toBe(event.id);
  expect(() => verifyWebhook(first.secret, app.received[0]!)).not.toThrow();
  await first.close();
  const closed = await harness.request('GET', `/v1/webhooks/${first.endpointId}/`, { auth: merchant });
  expect(closed.json().data).toMatchObject({ enabled: false, description: LISTEN_DESCRIPTION });

  // The local app failing makes Kosh retry, exactly as a real endpoint would.
  app.status = 500;
  const second = await startWebhooksListen(options);
  expect(second.endpointId).toBe(first.endpointId);
  const again = await recordEvent(harness, merchant, { type: 'payment.failed' });
  await drain(harness);
  expect(lines.some((line) => line.includes(`<-- 500 POST ${app.url('/hook')} [${again.id}]`))).toBe(true);
  const deliveries = await harness.request('GET', `/v1/events/${again.id}/deliveries/`, { auth: merchant });
  expect(deliveries.json().data[0]).toMatchObject({ status: 'pending', attempt_count: 1 });
  await second.close();
});

it('a second run takes the endpoint over, says so, and the first run stopping leaves it to the second', async () => {
  const shop = await harness.merchant('Two Terminals');
  const lines: string[] = [];
  const options = {
    apiUrl,
    apiKey: shop.credentials.api_key,
    secretKey: shop.credentials.secret_key,
    print: (line: string) => lines.push(line),
  };
  const first = await startWebhooksListen(options);
  const second = await startWebhooksListen(options);
  expect(second.endpointId).toBe(first.endpointId);
  expect(lines.join('\n')).toContain(
    `Taking over endpoint ${first.endpointId} from an earlier run (${first.url})`,
  );
  await first.close();
  const after = await harness.request('GET', `/v1/webhooks/${second.endpointId}/`, { auth: shop });
  expect(after.json().data).toMatchObject({ enabled: true, url: second.url });
  await second.close();
  const closed = await harness.request('GET', `/v1/webhooks/${second.endpointId}/`, { auth: shop });
  expect(closed.json().data).toMatchObject({ enabled: false });
});

it('refuses a live key', async () => {
  await expect(
    startWebhooksListen({ apiUrl, apiKey: 'key_live_x', secretKey: 'y', print: () => {} }),
  ).rejects.toThrow(/test-mode keys only/);
});
