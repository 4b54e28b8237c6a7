import { beforeAll, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { recordEvent } from '../helpers/webhook-events.js';
import { HOSTILE_BODIES } from './hostile-inputs.js';
import { SecretLedger } from './secrets.js';

/** Generous for a loaded CI machine; a quadratic or unbounded path takes far longer than this. */
const BOUND_MS = 2_000;

describeEachDatabase('security: resource limits', (harness) => {
  const ledger = new SecretLedger();
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant('Limits');
    ledger.add(merchant);
  });

  async function orderCount(): Promise<number> {
    const [row] = await harness().container.db.query<{ count: string }>(
      'SELECT count(*) AS count FROM orders WHERE account_id = $1',
      [merchant.id],
    );
    return Number(row?.count);
  }

  it.each(HOSTILE_BODIES)('%s → %i %s in bounded time, nothing stored', async (_name, status, code, body) => {
    const before = await orderCount();
    const started = performance.now();
    const reply = await harness().request('POST', '/v1/orders/', {
      auth: merchant,
      ...(body.raw !== undefined
        ? { json: body.raw }
        : body.form !== undefined
          ? { form: body.form }
          : { json: body.json }),
    });
    const elapsed = performance.now() - started;
    expect(reply.statusCode, reply.body.slice(0, 300)).toBe(status);
    expect(reply.json().error.code).toBe(code);
    expect(reply.body.length).toBeLessThan(2_000);
    expect(elapsed).toBeLessThan(BOUND_MS);
    expect(await orderCount()).toBe(before);
  });

  it.each([
    ['a 10,000-character Idempotency-Key', { 'idempotency-key': 'k'.repeat(10_000) }, 400],
    ['a 10,000-character X-Request-Id (replaced, not echoed)', { 'x-request-id': 'r'.repeat(10_000) }, 200],
  ])('%s → %i in bounded time', async (_name, headers, status) => {
    const started = performance.now();
    const reply = await harness().request('POST', '/v1/orders/', {
      auth: merchant,
      json: { amount: 5000, currency: 'INR' },
      headers,
    });
    expect(reply.statusCode).toBe(status);
    expect(performance.now() - started).toBeLessThan(BOUND_MS);
    expect(String(reply.headers['x-request-id']).length).toBeLessThanOrEqual(64);
  });

  it.each([
    ['a 10,000-character cursor', `/v1/orders/?cursor=${'c'.repeat(10_000)}`],
    ['an enormous limit', `/v1/orders/?limit=${'9'.repeat(5_000)}`],
    ['a 10,000-character id', `/v1/orders/order_${'x'.repeat(10_000)}/`],
  ])('%s → a 4xx in bounded time', async (_name, url) => {
    const started = performance.now();
    const reply = await harness().request('GET', url, { auth: merchant });
    expect(reply.statusCode).toBeGreaterThanOrEqual(400);
    expect(reply.statusCode).toBeLessThan(500);
    expect(performance.now() - started).toBeLessThan(BOUND_MS);
  });

  it("pages an event's deliveries (one per endpoint, and endpoints have no fixed limit)", async () => {
    for (let i = 0; i < 120; i++) {
      const reply = await harness().request('POST', '/v1/webhooks/', {
        auth: merchant,
        json: { url: `http://127.0.0.1:9/hook-${i}` },
      });
      ledger.addValue(reply.json().data.secret);
    }
    const event = await recordEvent(harness(), merchant);
    const url = `/v1/events/${event.id}/redeliver/`;
    const again = await harness().request('POST', url, { auth: merchant });
    // 120 deliveries: the answer is the newest 100.
    expect(again.json()).toMatchObject({ has_more: true });
    expect(again.json().data).toHaveLength(100);
    const seen = new Set<string>();
    let cursor = '';
    for (let page = 0; page < 20; page++) {
      const reply = await harness().request(
        'GET',
        `/v1/events/${event.id}/deliveries/?limit=50${cursor ? `&cursor=${cursor}` : ''}`,
        { auth: merchant },
      );
      expect(reply.statusCode, reply.body).toBe(200);
      const body = reply.json();
      expect(body.data.length).toBeLessThanOrEqual(50);
      for (const delivery of body.data) seen.add(delivery.id);
      if (!body.has_more) break;
      cursor = body.next_cursor;
    }
    expect(seen.size).toBe(120);
    const first = await harness().request('GET', `/v1/events/${event.id}/deliveries/`, { auth: merchant });
    expect(first.json().data).toHaveLength(10);
  });

  it('logs no secret, no Authorization value', () => {
    ledger.expectCleanLogs(harness());
  });
});
