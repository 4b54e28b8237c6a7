import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/modules/webhooks/retry-schedule.js';
import { systemResolver } from '../../src/modules/webhooks/url-safety.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { drain, recordEvent, samplePayload } from '../helpers/webhook-events.js';
import { TestReceiver, verifyWebhook } from '../helpers/webhook-receiver.js';

const HOUR = 3_600_000;

describeEachDatabase('webhook delivery', (harness) => {
  const receivers: TestReceiver[] = [];
  let merchant: TestAccount;

  beforeAll(async () => {
    merchant = await harness().merchant();
  });
  afterEach(() => {
    harness().container.resolver.lookup = systemResolver.lookup;
  });
  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  async function receiver(): Promise<TestReceiver> {
    const started = await TestReceiver.start(() => harness().clock.now());
    receivers.push(started);
    return started;
  }

  async function endpoint(account: TestAccount, url: string, extra: Record<string, unknown> = {}) {
    const response = await harness().request('POST', '/v1/webhooks/', {
      auth: account,
      json: { url, ...extra },
    });
    expect(response.statusCode).toBe(200);
    return response.json().data as { id: string; secret: string };
  }

  async function deliveries(account: TestAccount, eventId: string) {
    const response = await harness().request('GET', `/v1/events/${eventId}/deliveries/`, { auth: account });
    expect(response.statusCode).toBe(200);
    return response.json().data;
  }

  it('delivers the documented body with Standard Webhooks headers that the official package verifies', async () => {
    const account = await harness().merchant('Signed');
    const target = await receiver();
    const { id, secret } = await endpoint(account, target.url());
    const event = await recordEvent(harness(), account, { type: 'order.paid' });
    await drain(harness());

    expect(target.received).toHaveLength(1);
    const [received] = target.received;
    const verified = verifyWebhook(secret, received!);
    expect(verified).toEqual({
      id: event.id,
      type: 'order.paid',
      mode: 'test',
      created_at: Math.floor(event.created_at.getTime() / 1000),
      data: samplePayload(),
    });
    expect(received!.headers['webhook-id']).toBe(event.id);
    expect(received!.headers['content-type']).toBe('application/json');
    expect(received!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);

    const [delivery] = await deliveries(account, event.id);
    expect(delivery).toMatchObject({
      endpoint_id: id,
      status: 'succeeded',
      attempt_count: 1,
      next_attempt_at: null,
    });
    expect(delivery.id).toMatch(/^msg_/);
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0]).toMatchObject({
      status_code: 200,
      response_body: 'ok',
      error: null,
      succeeded: true,
    });
    expect(delivery.attempts[0].id).toMatch(/^att_/);
    expect(delivery.attempts[0].latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('sends each endpoint only the types it asked for, and nothing to disabled endpoints', async () => {
    const account = await harness().merchant('Filters');
    const [paid, all, off] = [await receiver(), await receiver(), await receiver()];
    await endpoint(account, paid.url(), { enabled_events: ['order.paid'] });
    await endpoint(account, all.url());
    await endpoint(account, off.url(), { enabled: false });
    await recordEvent(harness(), account, { type: 'payment.pending' });
    await recordEvent(harness(), account, { type: 'order.paid' });
    // Another account's and the live mode's events never reach this account's endpoints.
    await recordEvent(harness(), merchant, { type: 'order.paid' });
    await recordEvent(harness(), account, { type: 'order.paid', mode: 'live' });
    await drain(harness());
    expect(paid.received.map((r) => JSON.parse(r.body).type)).toEqual(['order.paid']);
    expect(all.received.map((r) => JSON.parse(r.body).type).sort()).toEqual([
      'order.paid',
      'payment.pending',
    ]);
    expect(off.received).toHaveLength(0);
    expect(off.connections).toBe(0);
  });

  it('retries a receiver answering 500 until it answers 200: same webhook-id, every attempt logged', async () => {
    const account = await harness().merchant('Retries');
    const target = await receiver();
    target.responseBody = 'x'.repeat(5_000);
    target.status = (index) => (index < 4 ? 500 : 200);
    const { secret } = await endpoint(account, target.url());
    const events = [await recordEvent(harness(), account), await recordEvent(harness(), account)];
    await drain(harness());
    expect(target.received).toHaveLength(2);

    // Two retries each, then success: advance past each jittered delay (at most +20 %).
    for (const delay of RETRY_DELAYS_MS.slice(0, 2)) {
      const before = target.received.length;
      harness().clock.advance(Math.ceil(delay * 0.79));
      await drain(harness());
      expect(target.received.length).toBe(before);
      harness().clock.advance(Math.ceil(delay * 0.42));
      await drain(harness());
      expect(target.received.length).toBe(before + 2);
    }
    expect(target.received).toHaveLength(6);
    for (const received of target.received) {
      expect(() => verifyWebhook(secret, received)).not.toThrow();
    }
    for (const event of events) {
      const ids = target.received
        .filter((r) => JSON.parse(r.body).id === event.id)
        .map((r) => r.headers['webhook-id']);
      expect(ids).toEqual([event.id, event.id, event.id]);
      const [delivery] = await deliveries(account, event.id);
      expect(delivery.status).toBe('succeeded');
      expect(delivery.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 200]);
      expect(delivery.attempts[0].response_body).toHaveLength(2_048);
      expect(delivery.attempts[0].error).toBe('HTTP 500');
      const times = delivery.attempts.map((a: { attempted_at: number }) => a.attempted_at);
      expect(times[1] - times[0]).toBeGreaterThanOrEqual(4);
      expect(times[2] - times[1]).toBeGreaterThanOrEqual(240);
    }
  });

  it('signs with the old and the new secret for 24 hours after a rotation, then with the new one only', async () => {
    const account = await harness().merchant('Rotation');
    const target = await receiver();
    const { id, secret: oldSecret } = await endpoint(account, target.url());
    const rotated = await harness().request('POST', `/v1/webhooks/${id}/rotate-secret/`, { auth: account });
    const newSecret = rotated.json().data.secret as string;
    await recordEvent(harness(), account);
    await drain(harness());
    const during = target.received[0]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(() => verifyWebhook(oldSecret, during)).not.toThrow();
    expect(() => verifyWebhook(newSecret, during)).not.toThrow();

    harness().clock.advance(24 * HOUR + 1_000);
    await recordEvent(harness(), account);
    await drain(harness());
    const after = target.received[1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => verifyWebhook(newSecret, after)).not.toThrow();
    expect(() => verifyWebhook(oldSecret, after)).toThrow(/signature/);
  });

  it('410 disables the endpoint and fails its delivery; no more deliveries are made for it', async () => {
    const account = await harness().merchant('Gone');
    const target = await receiver();
    target.status = 410;
    const { id } = await endpoint(account, target.url());
    const event = await recordEvent(harness(), account);
    await drain(harness());
    const fetched = await harness().request('GET', `/v1/webhooks/${id}/`, { auth: account });
    expect(fetched.json().data).toMatchObject({ enabled: false, disabled_reason: 'gone' });
    expect((await deliveries(account, event.id))[0]).toMatchObject({ status: 'failed', attempt_count: 1 });
    await recordEvent(harness(), account);
    harness().clock.advance(HOUR);
    await drain(harness());
    expect(target.received).toHaveLength(1);
  });

  it('honours Retry-After, clamped to 10 hours, never sooner than the schedule', async () => {
    const account = await harness().merchant('Retry-After');
    const target = await receiver();
    target.status = 503;
    await endpoint(account, target.url());
    const cases: [string, number][] = [
      ['3600', 3_600],
      ['999999', 10 * 3_600],
      ['1', 5],
    ];
    for (const [header, expected] of cases) {
      target.responseHeaders = { 'retry-after': header };
      const event = await recordEvent(harness(), account);
      await drain(harness());
      const [delivery] = await deliveries(account, event.id);
      const wait = delivery.next_attempt_at - delivery.last_attempt_at;
      if (header === '1') {
        expect(wait).toBeGreaterThanOrEqual(3);
        expect(wait).toBeLessThanOrEqual(7);
      } else {
        expect(wait).toBe(expected);
      }
    }
  });

  it('fails a delivery after the last retry, and disables an endpoint failing for 5 days', async () => {
    const account = await harness().merchant('Failing');
    const target = await receiver();
    target.status = 500;
    const { id } = await endpoint(account, target.url());
    const event = await recordEvent(harness(), account);
    await drain(harness());
    for (let i = 1; i < MAX_ATTEMPTS; i++) {
      harness().clock.advance(12 * HOUR);
      await drain(harness());
    }
    const [delivery] = await deliveries(account, event.id);
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: MAX_ATTEMPTS, next_attempt_at: null });
    expect(delivery.attempts).toHaveLength(MAX_ATTEMPTS);
    expect(
      (await harness().request('GET', `/v1/webhooks/${id}/`, { auth: account })).json().data.enabled,
    ).toBe(true);

    harness().clock.advance(5 * 24 * HOUR);
    await recordEvent(harness(), account);
    await drain(harness());
    const fetched = await harness().request('GET', `/v1/webhooks/${id}/`, { auth: account });
    expect(fetched.json().data).toMatchObject({ enabled: false, disabled_reason: 'failing' });
  });

  it('a delivery claimed by a worker that died is delivered once after its lease runs out', async () => {
    const account = await harness().merchant('Crash');
    const target = await receiver();
    await endpoint(account, target.url());
    const event = await recordEvent(harness(), account);
    await harness().container.services.webhooks.fanOut(500);
    // A worker claims (and commits the claim), then is killed before sending.
    const abandoned = await harness().container.webhookDelivery.claim(500);
    expect(abandoned.claimed.map((delivery) => delivery.event_id)).toContain(event.id);
    await drain(harness());
    expect(target.received).toHaveLength(0);
    harness().clock.advance(harness().container.config.webhooks.leaseMs + 1_000);
    await drain(harness());
    expect(target.received).toHaveLength(1);
    expect(target.received[0]!.headers['webhook-id']).toBe(event.id);
  });

  it('a worker shutting down between claim and send releases its claims for the next worker', async () => {
    const account = await harness().merchant('Shutdown');
    const target = await receiver();
    await endpoint(account, target.url());
    const event = await recordEvent(harness(), account);
    await harness().container.services.webhooks.fanOut(500);
    const stopping = new AbortController();
    stopping.abort();
    expect(await harness().container.webhookDelivery.runOnce(stopping.signal)).toBeGreaterThan(0);
    expect(target.received).toHaveLength(0);
    // No lease to wait for: the next run sends at once.
    await drain(harness());
    expect(target.received.map((r) => r.headers['webhook-id'])).toEqual([event.id]);
  });

  it('live mode: a name re-resolving to loopback is refused at connect time; the listener sees 0 connections', async () => {
    const live = await harness().liveKey(await harness().merchant('Live'));
    const listener = await receiver();
    harness().container.resolver.lookup = async () => [{ address: '93.184.215.14', family: 4 }];
    await endpoint(live, `https://hooks.example.com:${listener.port}/hook`);
    // The DNS answer changes after registration (DNS rebinding).
    harness().container.resolver.lookup = async () => [{ address: '127.0.0.1', family: 4 }];
    const event = await recordEvent(harness(), live, { mode: 'live' });
    // A row from before a rule change, with a literal loopback address, is refused too.
    await harness().container.db.query(
      `INSERT INTO webhook_endpoints (id, account_id, mode, url, enabled_events, secret, created_at, updated_at)
       VALUES ($1, $2, 'live', $3, '["*"]', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', now(), now())`,
      [harness().container.ids.next('whk'), live.id, `https://127.0.0.1:${listener.port}/hook`],
    );
    await drain(harness());
    expect(listener.connections).toBe(0);
    const attempts = (await deliveries(live, event.id)).flatMap((d: { attempts: unknown[] }) => d.attempts);
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts as { status_code: number | null; error: string }[]) {
      expect(attempt.status_code).toBeNull();
      expect(attempt.error).toMatch(/not (a )?public/);
    }
  });

  describe('events API', () => {
    it('lists, filters by type and by delivery_success, fetches, shows deliveries, redelivers', async () => {
      const account = await harness().merchant('Events');
      const target = await receiver();
      target.status = 500;
      const { id: endpointId, secret } = await endpoint(account, target.url());
      const captured = await recordEvent(harness(), account, { type: 'payment.captured' });
      harness().clock.advance(1_000);
      const paid = await recordEvent(harness(), account, { type: 'order.paid' });
      await drain(harness());

      const all = (await harness().request('GET', '/v1/events/', { auth: account })).json();
      expect(all.data.map((e: { id: string }) => e.id)).toEqual([paid.id, captured.id]);
      const byType = (
        await harness().request('GET', '/v1/events/?type=order.paid', { auth: account })
      ).json();
      expect(byType.data.map((e: { id: string }) => e.id)).toEqual([paid.id]);
      // A type Kosh never sends (a typo) is refused by name, not answered with an empty page.
      for (const type of ['payment.capture', 'order.*', '*', 'PAYMENT.CAPTURED']) {
        const refused = await harness().request('GET', `/v1/events/?type=${encodeURIComponent(type)}`, {
          auth: account,
        });
        expect(refused.statusCode, type).toBe(400);
        expect(refused.json().error).toMatchObject({ code: 'invalid_field', field: 'type' });
        expect(refused.json().error.message).toContain('payment.captured');
      }
      const merchantType = await harness().request('GET', '/v1/events/?type=merchant.activated', {
        auth: account,
      });
      expect(merchantType.statusCode).toBe(200);
      const page = (await harness().request('GET', '/v1/events/?limit=1', { auth: account })).json();
      expect(page).toMatchObject({ has_more: true, next_cursor: paid.id });
      const next = (
        await harness().request('GET', `/v1/events/?limit=1&cursor=${page.next_cursor}`, { auth: account })
      ).json();
      expect(next.data.map((e: { id: string }) => e.id)).toEqual([captured.id]);

      const unsuccessful = await harness().request('GET', '/v1/events/?delivery_success=false', {
        auth: account,
      });
      expect(unsuccessful.json().data).toHaveLength(2);

      const fetched = await harness().request('GET', `/v1/events/${paid.id}/`, { auth: account });
      expect(fetched.json().data).toEqual({
        id: paid.id,
        type: 'order.paid',
        mode: 'test',
        created_at: Math.floor(paid.created_at.getTime() / 1000),
        data: samplePayload(),
      });

      // The receiver recovers; a redelivery goes out at once with the same webhook-id.
      target.status = 200;
      // Less than the first retry delay, so the other event's retry is not yet due.
      harness().clock.advance(1_000);
      const redelivered = await harness().request('POST', `/v1/events/${paid.id}/redeliver/`, {
        auth: account,
      });
      expect(redelivered.statusCode).toBe(200);
      expect(redelivered.json().data[0]).toMatchObject({ endpoint_id: endpointId, status: 'pending' });
      await drain(harness());
      const last = target.received.at(-1)!;
      expect(last.headers['webhook-id']).toBe(paid.id);
      expect(() => verifyWebhook(secret, last)).not.toThrow();
      const [delivery] = await deliveries(account, paid.id);
      expect(delivery.status).toBe('succeeded');
      expect(delivery.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 200]);

      const stillFailing = await harness().request('GET', '/v1/events/?delivery_success=false', {
        auth: account,
      });
      expect(stillFailing.json().data.map((e: { id: string }) => e.id)).toEqual([captured.id]);
      const succeeded = await harness().request('GET', '/v1/events/?delivery_success=true', {
        auth: account,
      });
      expect(succeeded.json().data.map((e: { id: string }) => e.id)).toEqual([paid.id]);

      // Redelivery to one named endpoint; a disabled one is refused.
      const single = await harness().request('POST', `/v1/events/${captured.id}/redeliver/`, {
        auth: account,
        json: { endpoint_id: endpointId },
      });
      expect(single.statusCode).toBe(200);
      await harness().request('PATCH', `/v1/webhooks/${endpointId}/`, {
        auth: account,
        json: { enabled: false },
      });
      const refused = await harness().request('POST', `/v1/events/${captured.id}/redeliver/`, {
        auth: account,
        json: { endpoint_id: endpointId },
      });
      expect(refused.statusCode).toBe(409);
      expect(refused.json().error.code).toBe('webhook_endpoint_disabled');
      const unknown = await harness().request('POST', `/v1/events/${captured.id}/redeliver/`, {
        auth: account,
        json: { endpoint_id: 'whk_nope' },
      });
      expect(unknown.statusCode).toBe(404);
    });

    it('another account or the other mode gets 404 for an event, its deliveries and redelivery', async () => {
      const owner = await harness().merchant('Owner');
      const stranger = await harness().merchant('Stranger');
      const event = await recordEvent(harness(), owner);
      for (const auth of [stranger, await harness().liveKey(owner)]) {
        for (const [method, url] of [
          ['GET', `/v1/events/${event.id}/`],
          ['GET', `/v1/events/${event.id}/deliveries/`],
          ['POST', `/v1/events/${event.id}/redeliver/`],
        ] as const) {
          const response = await harness().request(method, url, { auth });
          expect(response.statusCode, `${method} ${url} ${response.body}`).toBe(404);
          expect(response.json().error.code).toBe('resource_not_found');
        }
        const listed = await harness().request('GET', '/v1/events/', { auth });
        expect(listed.json().data.map((e: { id: string }) => e.id)).not.toContain(event.id);
      }
    });

    it('refuses bad query parameters', async () => {
      for (const [query, code] of [
        ['delivery_success=maybe', 'invalid_field'],
        ['limit=0', 'invalid_field'],
        ['cursor=abc', 'invalid_cursor'],
        ['typo=1', 'unknown_field'],
      ]) {
        const response = await harness().request('GET', `/v1/events/?${query}`, { auth: merchant });
        expect(response.statusCode, query).toBe(400);
        expect(response.json().error.code).toBe(code);
      }
    });
  });
});
