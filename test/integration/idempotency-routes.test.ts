import { beforeAll, expect, it } from 'vitest';
import { registeredRoutes } from '../../src/http/route-registry.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { BANK, merchantBody } from '../helpers/onboarding.js';
import { recordEvent } from '../helpers/webhook-events.js';

/**
 * Every route whose work runs in the Idempotency-Key's transaction ('atomic'), called with a key:
 * all of its reads and writes must go through the handle the key's transaction hands it. On PGlite
 * (one session) a query sent on the pool instead waits for the transaction that waits for it, and
 * the request ends as a 503 after the connect timeout; on PostgreSQL it would run outside the
 * transaction. Each call answers as without a key, and the retry replays it byte for byte.
 */
describeEachDatabase('Idempotency-Key on every atomic route', (harness) => {
  let partner: TestAccount;
  let merchant: TestAccount;
  let mid: string;
  let endpointId: string;
  let eventId: string;
  let partnerKey: string;

  beforeAll(async () => {
    partner = await harness().partner('Keyed partner');
    merchant = await harness().merchant('Keyed merchant');
    const created = await harness().request('POST', '/v1/api-portal/merchants/', {
      auth: partner,
      json: merchantBody({ email: 'keyed@example.com' }),
    });
    expect(created.statusCode, created.body).toBe(200);
    mid = created.json().data.id;
    partnerKey = created.json().data.credentials.api_key;
    const endpoint = await harness().request('POST', '/v1/webhooks/', {
      auth: merchant,
      json: { url: 'http://localhost:4000/hooks' },
    });
    expect(endpoint.statusCode, endpoint.body).toBe(200);
    endpointId = endpoint.json().data.id;
    eventId = (await recordEvent(harness(), merchant)).id;
  });

  /** One call per atomic route (test mode): the account, the URL and a body it accepts. */
  function calls(): Record<string, { auth: TestAccount; url: string; json: unknown }> {
    return {
      'POST /v1/orders/': { auth: merchant, url: '/v1/orders/', json: { amount: 5000, currency: 'INR' } },
      'POST /v1/api-portal/merchants/': {
        auth: partner,
        url: '/v1/api-portal/merchants/',
        json: merchantBody({ email: 'keyed-two@example.com' }),
      },
      'POST /v1/api-portal/merchants/bank-details/:mid/': {
        auth: partner,
        url: `/v1/api-portal/merchants/bank-details/${mid}/`,
        json: BANK,
      },
      'POST /v1/api-portal/merchants/:mid/keys/': {
        auth: partner,
        url: `/v1/api-portal/merchants/${mid}/keys/`,
        json: { mode: 'test' },
      },
      'POST /v1/api-portal/generate-vpa/:mid/': {
        auth: partner,
        url: `/v1/api-portal/generate-vpa/${mid}/`,
        json: {},
      },
      'POST /v1/api-portal/merchants/:mid/keys/:key/roll/': {
        auth: partner,
        url: `/v1/api-portal/merchants/${mid}/keys/${partnerKey}/roll/`,
        json: { overlap_seconds: 60 },
      },
      'POST /v1/keys/:key/roll/': {
        auth: merchant,
        url: `/v1/keys/${merchant.credentials.api_key}/roll/`,
        json: { overlap_seconds: 3600 },
      },
      'POST /v1/webhooks/:id/rotate-secret/': {
        auth: merchant,
        url: `/v1/webhooks/${endpointId}/rotate-secret/`,
        json: {},
      },
      'POST /v1/events/:id/redeliver/': {
        auth: merchant,
        url: `/v1/events/${eventId}/redeliver/`,
        json: { endpoint_id: endpointId },
      },
    };
  }

  it('has a call for every atomic route (a new one must be added here)', () => {
    const atomic = registeredRoutes(harness().app)
      .filter((route) => route.config.idempotency === 'atomic')
      .map((route) => `${route.method} ${route.url}`)
      .filter((route) => route !== 'POST /v1/connector-accounts/'); // live keys only: see below
    expect(atomic.sort()).toEqual(Object.keys(calls()).sort());
  });

  it('answers each with a key as without one, and replays it', async () => {
    for (const [route, call] of Object.entries(calls())) {
      const key = `keyed-${route}`.slice(0, 200);
      const first = await harness().request('POST', call.url, {
        auth: call.auth,
        json: call.json,
        headers: { 'idempotency-key': key },
      });
      expect(first.statusCode, `${route}: ${first.body}`).toBe(200);
      const replay = await harness().request('POST', call.url, {
        auth: call.auth,
        json: call.json,
        headers: { 'idempotency-key': key },
      });
      expect(replay.statusCode, route).toBe(200);
      expect(replay.headers['idempotent-replayed'], route).toBe('true');
      expect(replay.body, route).toBe(first.body);
    }
  });

  it('adds a live connector account with a key', async () => {
    const live = await harness().liveKey(await harness().merchant('Keyed live'));
    const body = {
      connector: 'cashfree',
      credentials: { client_id: 'cf_keyed', client_secret: 'cfsk_keyed_secret_0000' },
    };
    const first = await harness().request('POST', '/v1/connector-accounts/', {
      auth: live,
      json: body,
      headers: { 'idempotency-key': 'keyed-connector' },
    });
    expect(first.statusCode, first.body).toBe(200);
    const replay = await harness().request('POST', '/v1/connector-accounts/', {
      auth: live,
      json: body,
      headers: { 'idempotency-key': 'keyed-connector' },
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
  });
});
