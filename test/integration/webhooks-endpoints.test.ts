import SwaggerParser from '@apidevtools/swagger-parser';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemResolver } from '../../src/modules/webhooks/url-safety.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { recordEvent } from '../helpers/webhook-events.js';

const PUBLIC_ADDRESS = '93.184.215.14';

describeEachDatabase('webhook endpoints', (harness) => {
  let merchant: TestAccount;
  let other: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant();
    other = await harness().merchant('Other Merchant');
  });
  afterEach(() => {
    harness().container.resolver.lookup = systemResolver.lookup;
  });

  async function create(json: unknown, auth: TestAccount = merchant) {
    return harness().request('POST', '/v1/webhooks/', { auth, json });
  }

  describe('POST /v1/webhooks/', () => {
    it('creates an endpoint with a whsec_ secret shown once, every event type by default', async () => {
      const response = await create({ url: 'http://localhost:4000/hook', description: 'local' });
      expect(response.statusCode).toBe(200);
      const endpoint = response.json().data;
      expect(endpoint).toMatchObject({
        entity: 'webhook_endpoint',
        url: 'http://localhost:4000/hook',
        description: 'local',
        enabled_events: ['*'],
        enabled: true,
        disabled_reason: null,
        mode: 'test',
        previous_secret_expires_at: null,
      });
      expect(endpoint.id).toMatch(/^whk_[0-9a-z]{26}$/);
      expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(endpoint.secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);

      const fetched = await harness().request('GET', `/v1/webhooks/${endpoint.id}/`, { auth: merchant });
      expect(fetched.statusCode).toBe(200);
      expect(fetched.json().data.secret).toBeUndefined();
      const listed = await harness().request('GET', '/v1/webhooks/', { auth: merchant });
      expect(listed.json().data.map((item: { id: string }) => item.id)).toContain(endpoint.id);
      expect(JSON.stringify(listed.json())).not.toContain('whsec_');
    });

    it('accepts an event filter and a disabled start', async () => {
      const response = await create({
        url: 'http://127.0.0.1:4000/x',
        enabled_events: ['payment.captured', 'order.paid'],
        enabled: false,
      });
      expect(response.statusCode).toBe(200);
      expect(response.json().data).toMatchObject({
        enabled_events: ['payment.captured', 'order.paid'],
        enabled: false,
        disabled_reason: 'disabled_by_user',
      });
    });

    it('accepts a form body, with enabled_events as a comma-separated list', async () => {
      const response = await harness().request('POST', '/v1/webhooks/', {
        auth: merchant,
        form: 'url=http%3A%2F%2Flocalhost%3A4000%2Fform&enabled_events=order.paid,payment.failed&enabled=false',
      });
      expect(response.statusCode).toBe(200);
      expect(response.json().data).toMatchObject({
        url: 'http://localhost:4000/form',
        enabled_events: ['order.paid', 'payment.failed'],
        enabled: false,
      });
    });

    const invalid: [string, unknown, string, string][] = [
      ['url missing', { description: 'x' }, 'missing_field', 'url'],
      ['url not a URL', { url: 'not a url' }, 'invalid_webhook_url', 'url'],
      [
        'unknown event type',
        { url: 'http://localhost/h', enabled_events: ['payment.capturd'] },
        'invalid_field',
        'enabled_events.0',
      ],
      [
        'empty event list',
        { url: 'http://localhost/h', enabled_events: [] },
        'invalid_field',
        'enabled_events',
      ],
      [
        'a partner-only event on a merchant key',
        { url: 'http://localhost/h', enabled_events: ['payment.captured', 'merchant.activated'] },
        'invalid_field',
        'enabled_events.1',
      ],
      ['unknown field', { url: 'http://localhost/h', urll: 'x' }, 'unknown_field', 'urll'],
      [
        'secret set by caller',
        { url: 'http://localhost/h', secret: 'whsec_x' },
        'server_owned_field',
        'secret',
      ],
      ['ftp URL', { url: 'ftp://localhost/h' }, 'invalid_webhook_url', 'url'],
      ['credentials in URL', { url: 'http://a:b@localhost/h' }, 'invalid_webhook_url', 'url'],
      ['private address in test mode', { url: 'http://10.0.0.1/h' }, 'invalid_webhook_url', 'url'],
      [
        'metadata address in test mode',
        { url: 'http://169.254.169.254/latest' },
        'invalid_webhook_url',
        'url',
      ],
    ];
    it.each(invalid)('refuses %s', async (_name, json, code, field) => {
      const before = (await harness().request('GET', '/v1/webhooks/?limit=100', { auth: merchant })).json()
        .data.length;
      const response = await create(json);
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toMatchObject({ code, field });
      const after = (await harness().request('GET', '/v1/webhooks/?limit=100', { auth: merchant })).json()
        .data.length;
      expect(after).toBe(before);
    });

    it('names the event types when one is not known, and takes merchant events only on a partner key', async () => {
      const unknown = await create({ url: 'http://localhost/h', enabled_events: ['payment.done'] });
      expect(unknown.json().error.message).toBe(
        "The field 'enabled_events.0' is not an event type: payment.pending, payment.captured, payment.failed, payment.late_authorisation, order.paid, refund.created, refund.processed, refund.failed, checkout_session.completed, checkout_session.expired, merchant.<status>; or *.",
      );
      const partnerOnly = await create({ url: 'http://localhost/h', enabled_events: ['merchant.activated'] });
      expect(partnerOnly.json().error.message).toContain('an event sent only to partners');
      const partner = await harness().partner('Events partner');
      expect(
        (await create({ url: 'http://localhost/p', enabled_events: ['merchant.activated'] }, partner))
          .statusCode,
      ).toBe(200);
      const endpoint = (await create({ url: 'http://localhost/m' })).json().data;
      const patched = await harness().request('PATCH', `/v1/webhooks/${endpoint.id}/`, {
        auth: merchant,
        json: { enabled_events: ['merchant.suspended'] },
      });
      expect(patched.statusCode).toBe(400);
      expect(patched.json().error).toMatchObject({ code: 'invalid_field', field: 'enabled_events.0' });
    });

    it('live mode: refuses http and loopback, accepts a public https host, re-checks DNS', async () => {
      const live = await harness().liveKey(await harness().merchant('Live Merchant'));
      expect((await create({ url: 'http://localhost:4000/hook' }, live)).json().error.code).toBe(
        'invalid_webhook_url',
      );
      expect((await create({ url: 'https://127.0.0.1/hook' }, live)).json().error.code).toBe(
        'invalid_webhook_url',
      );

      harness().container.resolver.lookup = async () => [{ address: PUBLIC_ADDRESS, family: 4 }];
      const ok = await create({ url: 'https://hooks.example.com/kosh' }, live);
      expect(ok.statusCode).toBe(200);
      expect(ok.json().data.mode).toBe('live');

      harness().container.resolver.lookup = async () => [
        { address: PUBLIC_ADDRESS, family: 4 },
        { address: '10.1.2.3', family: 4 },
      ];
      const mixed = await create({ url: 'https://hooks.example.com/kosh' }, live);
      expect(mixed.statusCode).toBe(400);
      expect(mixed.json().error.message).toContain('10.1.2.3');
      const patched = await harness().request('PATCH', `/v1/webhooks/${ok.json().data.id}/`, {
        auth: live,
        json: { url: 'https://hooks.example.com/other' },
      });
      expect(patched.json().error.code).toBe('invalid_webhook_url');

      // Test and live data never meet: the test key does not see the live endpoint.
      const asTest = await harness().request('GET', `/v1/webhooks/${ok.json().data.id}/`, { auth: merchant });
      expect(asTest.statusCode).toBe(404);
    });

    it('lets a partner register an endpoint for merchant.* events', async () => {
      const partner = await harness().partner();
      const response = await create(
        { url: 'http://localhost:4000/p', enabled_events: ['merchant.activated'] },
        partner,
      );
      expect(response.statusCode).toBe(200);
    });

    it('needs credentials', async () => {
      const response = await harness().request('POST', '/v1/webhooks/', {
        json: { url: 'http://localhost/h' },
      });
      expect(response.statusCode).toBe(401);
    });
  });

  describe('PATCH, DELETE, rotate-secret', () => {
    it('updates fields and leaves the others', async () => {
      const id = (await create({ url: 'http://localhost:4000/a', description: 'first' })).json().data.id;
      const response = await harness().request('PATCH', `/v1/webhooks/${id}/`, {
        auth: merchant,
        json: { enabled_events: ['payment.failed'], enabled: false },
      });
      expect(response.statusCode).toBe(200);
      expect(response.json().data).toMatchObject({
        url: 'http://localhost:4000/a',
        description: 'first',
        enabled_events: ['payment.failed'],
        enabled: false,
        disabled_reason: 'disabled_by_user',
      });
      const again = await harness().request('PATCH', `/v1/webhooks/${id}`, {
        auth: merchant,
        json: { enabled: true, description: null, url: 'http://127.0.0.1:5000/b' },
      });
      expect(again.json().data).toMatchObject({
        url: 'http://127.0.0.1:5000/b',
        description: null,
        enabled: true,
        disabled_reason: null,
      });
      const bad = await harness().request('PATCH', `/v1/webhooks/${id}/`, {
        auth: merchant,
        json: { enabled: 'yes' },
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error).toMatchObject({ code: 'invalid_field', field: 'enabled' });
    });

    it('rotates the secret: a new one, shown once, the old one valid for 24 hours', async () => {
      const created = (await create({ url: 'http://localhost:4000/r' })).json().data;
      const rotated = await harness().request('POST', `/v1/webhooks/${created.id}/rotate-secret/`, {
        auth: merchant,
      });
      expect(rotated.statusCode).toBe(200);
      const data = rotated.json().data;
      expect(data.secret).toMatch(/^whsec_/);
      expect(data.secret).not.toBe(created.secret);
      const now = Math.floor(harness().clock.now().getTime() / 1000);
      expect(data.previous_secret_expires_at).toBe(now + 86_400);
    });

    it('deletes: the endpoint is gone for every call', async () => {
      const id = (await create({ url: 'http://localhost:4000/d' })).json().data.id;
      const deleted = await harness().request('DELETE', `/v1/webhooks/${id}/`, { auth: merchant });
      expect(deleted.statusCode).toBe(200);
      expect(deleted.json().data).toEqual({ id, deleted: true });
      for (const [method, url] of [
        ['GET', `/v1/webhooks/${id}/`],
        ['DELETE', `/v1/webhooks/${id}/`],
        ['POST', `/v1/webhooks/${id}/rotate-secret/`],
      ] as const) {
        expect((await harness().request(method, url, { auth: merchant })).statusCode).toBe(404);
      }
      const listed = await harness().request('GET', '/v1/webhooks/?limit=100', { auth: merchant });
      expect(listed.json().data.map((item: { id: string }) => item.id)).not.toContain(id);
    });
  });

  describe('another account', () => {
    it('gets 404 for every endpoint route and sees none in its list', async () => {
      const id = (await create({ url: 'http://localhost:4000/o' })).json().data.id;
      for (const [method, url, json] of [
        ['GET', `/v1/webhooks/${id}/`, undefined],
        ['PATCH', `/v1/webhooks/${id}/`, { enabled: false }],
        ['DELETE', `/v1/webhooks/${id}/`, undefined],
        ['POST', `/v1/webhooks/${id}/rotate-secret/`, undefined],
      ] as const) {
        const response = await harness().request(method, url, { auth: other, json });
        expect(response.statusCode, `${method} ${url}`).toBe(404);
        expect(response.json().error.code).toBe('resource_not_found');
      }
      const listed = await harness().request('GET', '/v1/webhooks/', { auth: other });
      expect(listed.json().data).toEqual([]);
      const still = await harness().request('GET', `/v1/webhooks/${id}/`, { auth: merchant });
      expect(still.json().data.enabled).toBe(true);
    });
  });

  it('pages the list with a cursor', async () => {
    const pager = await harness().merchant('Pager');
    for (let i = 0; i < 3; i++) await create({ url: `http://localhost:4000/${i}` }, pager);
    const first = (await harness().request('GET', '/v1/webhooks/?limit=2', { auth: pager })).json();
    expect(first.data).toHaveLength(2);
    expect(first.has_more).toBe(true);
    const second = (
      await harness().request('GET', `/v1/webhooks/?limit=2&cursor=${first.next_cursor}`, { auth: pager })
    ).json();
    expect(second.data).toHaveLength(1);
    expect(second.has_more).toBe(false);
    const bad = await harness().request('GET', '/v1/webhooks/?cursor=zzz', { auth: pager });
    expect(bad.json().error.code).toBe('invalid_cursor');
  });

  it('disabling or deleting an endpoint fails its pending deliveries; events meanwhile are not queued', async () => {
    const account = await harness().merchant('Pending');
    const ids = [];
    for (const path of ['a', 'b']) {
      ids.push((await create({ url: `http://127.0.0.1:9/${path}` }, account)).json().data.id);
    }
    const event = await recordEvent(harness(), account);
    await harness().container.services.webhooks.fanOut(500);
    await harness().request('PATCH', `/v1/webhooks/${ids[0]}/`, { auth: account, json: { enabled: false } });
    await harness().request('DELETE', `/v1/webhooks/${ids[1]}/`, { auth: account });
    const deliveries = await harness().request('GET', `/v1/events/${event.id}/deliveries/`, {
      auth: account,
    });
    expect(deliveries.json().data.map((d: { status: string }) => d.status)).toEqual(['failed', 'failed']);
    const later = await recordEvent(harness(), account);
    await harness().container.services.webhooks.fanOut(500);
    const none = await harness().request('GET', `/v1/events/${later.id}/deliveries/`, { auth: account });
    expect(none.json().data).toEqual([]);
  });

  it('documents every webhook and event route in a valid OpenAPI document', async () => {
    const document = (await harness().request('GET', '/v1/openapi.json')).json();
    await SwaggerParser.validate(structuredClone(document));
    for (const path of [
      '/v1/webhooks/',
      '/v1/webhooks/{id}/',
      '/v1/webhooks/{id}/rotate-secret/',
      '/v1/events/',
      '/v1/events/{id}/',
      '/v1/events/{id}/deliveries/',
      '/v1/events/{id}/redeliver/',
    ]) {
      expect(document.paths, path).toHaveProperty([path]);
    }
  });
});
