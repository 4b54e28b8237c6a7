import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { recordEvent } from '../helpers/webhook-events.js';
import {
  bodiesFrom,
  encodings,
  expectListShape,
  FUZZ_RUNS,
  fuzzLists,
  fuzzRoute,
  idempotencyHeaders,
  listQueries,
  secretsIn,
  shortText,
} from './fuzz.js';
import { SecretLedger } from './secrets.js';
import { PUBLIC_ADDRESS, UNSAFE_WEBHOOK_URLS_LIVE, WEBHOOK_DNS_ANSWERS } from './url-tables.js';

const EVENT_TYPES = [
  '*',
  'payment.pending',
  'payment.captured',
  'payment.failed',
  'order.paid',
  'merchant.activated',
];
const MISSING_ENDPOINT = 'whk_00000000000000000000000000';
const MISSING_EVENT = 'evt_00000000000000000000000000';
const BAD_IDS = ['x', "whk_'--", '%00', '..%2F..%2F', 'evt_zzzzzzzzzzzzzzzzzzzzzzzzzz'];

/** Webhook URLs that are fine in test mode, and the unsafe table's, near the line between them. */
const validUrl = fc.constantFrom(
  'http://127.0.0.1:9/hook',
  'http://localhost:8080/kosh?x=1',
  'https://hooks.example.com/kosh',
  'https://hooks.example.com/k?q="><script>',
);
const nearUrls = [
  ...UNSAFE_WEBHOOK_URLS_LIVE.map(([, url]) => url),
  'http://10.0.0.1/',
  'file:///etc/passwd',
  '',
];

const validEndpoint = fc.record(
  {
    url: validUrl,
    enabled_events: fc.uniqueArray(fc.constantFrom(...EVENT_TYPES), { minLength: 1, maxLength: 4 }),
    description: shortText(500),
    enabled: fc.boolean(),
  },
  { requiredKeys: ['url'] },
);
const endpointNear: Record<string, unknown[]> = {
  url: nearUrls,
  enabled_events: [[], ['payment.*'], ['*', '*'], ['order.paid', 'ORDER.PAID'], 'payment.pending', [1]],
  enabled: ['true', 1, null],
  description: ['x'.repeat(501), null],
};
const ENDPOINT_FIELDS = ['url', 'enabled_events', 'description', 'enabled', 'secret'];

describeEachDatabase('security: fuzzing webhooks and events', (harness) => {
  const ledger = new SecretLedger();
  let merchant: TestAccount;
  let endpoints: string[];
  let events: string[];
  const keepSecrets = (body: string) => {
    for (const secret of secretsIn(body)) ledger.addValue(secret);
  };
  beforeAll(async () => {
    merchant = await harness().merchant('Fuzz webhooks');
    ledger.add(merchant);
    harness().container.resolver.lookup = async (hostname) =>
      (WEBHOOK_DNS_ANSWERS[hostname] ?? [PUBLIC_ADDRESS]).map((address) => ({
        address,
        family: address.includes(':') ? 6 : 4,
      }));
    endpoints = [];
    for (const url of ['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b']) {
      const reply = await harness().request('POST', '/v1/webhooks/', { auth: merchant, json: { url } });
      keepSecrets(reply.body);
      endpoints.push(reply.json().data.id);
    }
    events = [];
    for (let i = 0; i < 3; i++) events.push((await recordEvent(harness(), merchant)).id);
  });

  it(`POST /v1/webhooks/: ${FUZZ_RUNS} generated requests, JSON and form`, async () => {
    const statuses = await fuzzRoute(harness(), {
      method: 'POST',
      url: fc.constantFrom('/v1/webhooks/', '/v1/webhooks'),
      account: merchant,
      body: encodings(bodiesFrom(validEndpoint, ENDPOINT_FIELDS, endpointNear)),
      headers: idempotencyHeaders,
      onSuccess(reply) {
        const { data } = reply.json();
        expect(data.id).toMatch(/^whk_/);
        expect(data.secret).toMatch(/^whsec_/);
        keepSecrets(reply.body);
      },
    });
    expect(statuses.get(200) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(FUZZ_RUNS / 5);
  }, 300_000);

  it(`PATCH /v1/webhooks/<id>/: ${FUZZ_RUNS} generated requests, JSON and form`, async () => {
    const patch = fc.record(
      {
        url: validUrl,
        enabled_events: fc.uniqueArray(fc.constantFrom(...EVENT_TYPES), { minLength: 1, maxLength: 4 }),
        description: fc.oneof(shortText(500), fc.constant(null)),
        enabled: fc.boolean(),
      },
      { requiredKeys: [] },
    );
    const statuses = await fuzzRoute(harness(), {
      method: 'PATCH',
      url: fc
        .oneof(
          { weight: 8, arbitrary: fc.constantFrom(...endpoints) },
          { weight: 1, arbitrary: fc.constantFrom(MISSING_ENDPOINT, ...BAD_IDS) },
        )
        .map((id) => `/v1/webhooks/${id}/`),
      account: merchant,
      body: encodings(bodiesFrom(patch, ENDPOINT_FIELDS, endpointNear)),
      onSuccess(reply) {
        expect(reply.json().data.id).toMatch(/^whk_/);
        expect(reply.json().data.secret).toBeUndefined();
      },
    });
    expect(statuses.get(200) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(FUZZ_RUNS / 5);
    expect(statuses.get(404) ?? 0).toBeGreaterThan(0);
  }, 300_000);

  it(`POST /v1/events/<id>/redeliver/: ${FUZZ_RUNS} generated requests`, async () => {
    const redeliver = fc.record(
      { endpoint_id: fc.constantFrom(...endpoints, MISSING_ENDPOINT) },
      { requiredKeys: [] },
    );
    const statuses = await fuzzRoute(harness(), {
      method: 'POST',
      url: fc
        .oneof(
          { weight: 8, arbitrary: fc.constantFrom(...events) },
          { weight: 1, arbitrary: fc.constantFrom(MISSING_EVENT, ...BAD_IDS) },
        )
        .map((id) => `/v1/events/${id}/redeliver/`),
      account: merchant,
      body: fc.oneof(
        { weight: 9, arbitrary: encodings(bodiesFrom(redeliver, ['endpoint_id'], { endpoint_id: BAD_IDS })) },
        // No body at all: every matching endpoint.
        { weight: 1, arbitrary: fc.constant({ payload: '' }) },
      ),
      headers: idempotencyHeaders,
      onSuccess(reply) {
        expectListShape(reply);
      },
    });
    expect(statuses.get(200) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(statuses.get(404) ?? 0).toBeGreaterThan(0);
  }, 300_000);

  it(`GET /v1/webhooks/, /v1/events/ and /v1/events/<id>/deliveries/: ${FUZZ_RUNS} generated queries each`, async () => {
    const urls = [
      listQueries([], [MISSING_ENDPOINT]).map((query) => `/v1/webhooks/?${query}`),
      listQueries(['type', 'delivery_success'], [...EVENT_TYPES, MISSING_EVENT]).map(
        (query) => `/v1/events/?${query}`,
      ),
      fc
        .tuple(fc.constantFrom(...events, MISSING_EVENT, ...BAD_IDS), listQueries([]))
        .map(([id, query]) => `/v1/events/${id}/deliveries/?${query}`),
    ];
    await fuzzLists(harness(), merchant, urls);
  }, 300_000);

  it('logs no secret, no Authorization value', () => {
    ledger.expectCleanLogs(harness());
  });
});
