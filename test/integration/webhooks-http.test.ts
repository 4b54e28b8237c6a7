import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpSender, RESPONSE_BODY_LIMIT } from '../../src/modules/webhooks/http-sender.js';
import { systemResolver } from '../../src/modules/webhooks/url-safety.js';
import { TestReceiver } from '../helpers/webhook-receiver.js';

/** The HTTP side of one attempt against a real local server: no database involved. */
describe('webhook HTTP sender', () => {
  const send = createHttpSender(systemResolver, { assertNoTransaction: () => {} });
  let target: TestReceiver;
  let elsewhere: TestReceiver;
  beforeAll(async () => {
    target = await TestReceiver.start();
    elsewhere = await TestReceiver.start();
  });
  afterAll(async () => {
    await target.close();
    await elsewhere.close();
  });

  const request = (url: string, timeoutMs = 2_000) =>
    send({ url, mode: 'test', headers: { 'webhook-id': 'evt_x' }, body: '{"a":1}', timeoutMs });

  it('never follows a redirect: the 3xx is the answer', async () => {
    target.status = 307;
    target.responseHeaders = { location: elsewhere.url('/stolen') };
    const result = await request(target.url());
    expect(result.statusCode).toBe(307);
    expect(elsewhere.connections).toBe(0);
    target.responseHeaders = {};
  });

  it('keeps only the first 2 KiB of the answer, and the Retry-After header', async () => {
    target.status = 429;
    target.responseHeaders = { 'retry-after': '120' };
    target.responseBody = 'é'.repeat(10_000);
    const result = await request(target.url());
    expect(result).toMatchObject({ statusCode: 429, retryAfter: '120', error: undefined });
    expect(Buffer.byteLength(result.responseBody ?? '')).toBeLessThanOrEqual(RESPONSE_BODY_LIMIT + 2);
    expect(result.responseBody?.length).toBeGreaterThan(900);
    target.responseHeaders = {};
    target.responseBody = 'ok';
  });

  it('gives up after the timeout', async () => {
    target.hold = true;
    const result = await request(target.url(), 300);
    target.hold = false;
    expect(result.statusCode).toBeUndefined();
    expect(result.error).toMatch(/timed out after 300 ms/);
    expect(result.latencyMs).toBeGreaterThanOrEqual(290);
  });

  it('reports a refused connection as an error', async () => {
    const closed = await TestReceiver.start();
    const url = closed.url();
    await closed.close();
    const result = await request(url);
    expect(result.statusCode).toBeUndefined();
    expect(result.error).toMatch(/ECONNREFUSED/);
  });

  it('sends the body and headers as given, as JSON', async () => {
    target.status = 200;
    const before = target.received.length;
    await request(target.url());
    const received = target.received[before]!;
    expect(received.body).toBe('{"a":1}');
    expect(received.headers).toMatchObject({ 'webhook-id': 'evt_x', 'content-type': 'application/json' });
  });
});
