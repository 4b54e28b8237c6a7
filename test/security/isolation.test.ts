import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { proprietorBody } from '../helpers/onboarding.js';
import { tenantDigest } from './fuzz.js';
import { SecretLedger } from './secrets.js';
import { type CreatedObject, PORTAL_MERCHANT_ACTIONS, TENANT_RESOURCES } from './tenant-resources.js';

describeEachDatabase('security: tenant and mode isolation', (harness) => {
  const ledger = new SecretLedger();
  let owner: TestAccount;
  let ownerLive: TestAccount;
  let stranger: TestAccount;
  let strangerLive: TestAccount;
  beforeAll(async () => {
    owner = await harness().merchant('Owner');
    ownerLive = await harness().liveKey(owner);
    stranger = await harness().merchant('Stranger');
    strangerLive = await harness().liveKey(stranger);
    ledger.add(owner, ownerLive, stranger, strangerLive);
  });

  /** The error body without its request id, to compare two 404s. */
  function errorOf(body: string) {
    const { request_id: _ignored, ...error } = JSON.parse(body).error;
    return error;
  }

  for (const resource of TENANT_RESOURCES) {
    describe(resource.name, () => {
      const cases: [string, () => TestAccount, () => TestAccount][] = [
        ["another merchant's test key on a test object", () => owner, () => stranger],
        ["another merchant's live key on a live object", () => ownerLive, () => strangerLive],
        ['the same merchant’s test key on its live object', () => ownerLive, () => owner],
        ['the same merchant’s live key on its test object', () => owner, () => ownerLive],
        ["another merchant's live key on a test object", () => owner, () => strangerLive],
      ];

      it.each(cases)('%s: 404 exactly as for a missing one, and no data', async (_name, creator, reader) => {
        const created = await resource.create(harness(), creator());
        const { id, marker } = created;
        for (const secret of created.secrets ?? []) ledger.addValue(secret);
        const own = await harness().request('GET', resource.fetchUrl(id), { auth: creator() });
        expect(own.statusCode).toBe(200);
        expect(own.body).toContain(marker);

        const theirs = await harness().request('GET', resource.fetchUrl(id), { auth: reader() });
        const missing = await harness().request('GET', resource.fetchUrl(resource.missingId), {
          auth: reader(),
        });
        expect(theirs.statusCode).toBe(404);
        expect(missing.statusCode).toBe(404);
        expect(theirs.body).not.toContain(marker);
        expect(errorOf(theirs.body).code).toBe('resource_not_found');
        // Same answer as a missing object except the id it names: existence does not leak.
        expect(JSON.stringify(errorOf(theirs.body)).replaceAll(id, '<id>')).toBe(
          JSON.stringify(errorOf(missing.body)).replaceAll(resource.missingId, '<id>'),
        );

        if (resource.listUrl) {
          const list = await harness().request('GET', resource.listUrl, { auth: reader() });
          expect(list.statusCode).toBe(200);
          expect(list.body).not.toContain(marker);
          expect(list.body).not.toContain(id);
        }
      });

      for (const action of resource.actions ?? []) {
        it.each(cases)(
          `${action.name} (${action.method}): %s gets 404 as for a missing one and changes nothing`,
          async (_name, creator, reader) => {
            const created = await resource.create(harness(), creator());
            for (const secret of created.secrets ?? []) ledger.addValue(secret);
            const missing: CreatedObject = {
              id: resource.missingId,
              marker: '',
              related: Object.fromEntries(
                Object.entries(created.related ?? {}).map(([key]) => [key, resource.missingId]),
              ),
            };
            const before = await tenantDigest(harness(), creator().id);
            const request = (object: CreatedObject) =>
              harness().request(action.method, action.url(object), {
                auth: reader(),
                ...(action.json === undefined ? {} : { json: action.json }),
              });
            const theirs = await request(created);
            const unknown = await request(missing);
            expect(theirs.statusCode, theirs.body).toBe(404);
            expect(unknown.statusCode, unknown.body).toBe(404);
            expect(theirs.body).not.toContain(created.marker);
            expect(errorOf(theirs.body).code).toBe(errorOf(unknown.body).code);
            expect(errorOf(theirs.body).field).toBe(errorOf(unknown.body).field);
            expect(await tenantDigest(harness(), creator().id)).toBe(before);
            // The owner still sees the object as it was.
            const own = await harness().request('GET', resource.fetchUrl(created.id), { auth: creator() });
            expect(own.statusCode).toBe(200);
            expect(own.body).toContain(created.marker);
          },
        );
      }

      if (resource.listUrl) {
        it('a cursor taken from another tenant’s object pages only the caller’s own objects', async () => {
          const { id, marker } = await resource.create(harness(), owner);
          const list = await harness().request('GET', `${resource.listUrl}?cursor=${id}`, { auth: stranger });
          expect([200, 400]).toContain(list.statusCode);
          expect(list.body).not.toContain(marker);
        });
      }
    });
  }

  it('keeps Idempotency-Key records apart: a key reused by another tenant replays nothing of the first', async () => {
    const body = { amount: 5000, currency: 'INR', receipt: 'private-receipt' };
    const first = await harness().request('POST', '/v1/orders/', {
      auth: owner,
      json: body,
      headers: { 'idempotency-key': 'isolation-key' },
    });
    for (const other of [stranger, ownerLive]) {
      const reply = await harness().request('POST', '/v1/orders/', {
        auth: other,
        json: body,
        headers: { 'idempotency-key': 'isolation-key' },
      });
      expect(reply.statusCode).toBe(200);
      expect(reply.headers['idempotent-replayed']).toBeUndefined();
      expect(reply.json().data.id).not.toBe(first.json().data.id);
    }
  });

  it("redelivers nothing to another merchant's webhook endpoint named by id", async () => {
    const endpoint = TENANT_RESOURCES.find((resource) => resource.name === 'webhook endpoint');
    const event = TENANT_RESOURCES.find((resource) => resource.name === 'event');
    if (!endpoint || !event) throw new Error('tables changed');
    const theirs = await endpoint.create(harness(), stranger);
    for (const secret of theirs.secrets ?? []) ledger.addValue(secret);
    const own = await event.create(harness(), owner);
    const before = await tenantDigest(harness(), stranger.id);
    const reply = await harness().request('POST', `/v1/events/${own.id}/redeliver/`, {
      auth: owner,
      json: { endpoint_id: theirs.id },
    });
    const unknown = await harness().request('POST', `/v1/events/${own.id}/redeliver/`, {
      auth: owner,
      json: { endpoint_id: endpoint.missingId },
    });
    expect(reply.statusCode, reply.body).toBe(404);
    expect(errorOf(reply.body).code).toBe(errorOf(unknown.body).code);
    expect(reply.body).not.toContain(theirs.marker);
    expect(await tenantDigest(harness(), stranger.id)).toBe(before);
    const deliveries = await harness().container.db.query(
      'SELECT 1 FROM webhook_deliveries WHERE endpoint_id = $1',
      [theirs.id],
    );
    expect(deliveries).toEqual([]);
  });

  describe("a partner on another partner's merchants", () => {
    let partnerA: TestAccount;
    let partnerB: TestAccount;
    let mid: string;
    const marker = 'Private Partner Shop';
    beforeAll(async () => {
      partnerA = await harness().partner('Partner A');
      partnerB = await harness().partner('Partner B');
      ledger.add(partnerA, partnerB);
      const created = await harness().request('POST', '/v1/api-portal/merchants/', {
        auth: partnerA,
        json: proprietorBody({ display_name: marker }),
      });
      mid = created.json().data.id;
      ledger.addValue(created.json().data.credentials.secret_key);
    });

    it.each(PORTAL_MERCHANT_ACTIONS)(
      '%s: 404 as for a missing merchant, nothing changed',
      async (_name, call) => {
        const before = await tenantDigest(harness(), partnerA.id);
        const theirs = await call(harness(), partnerB, mid);
        const missing = await call(harness(), partnerB, 'mid_00000000000000000000000000');
        expect(theirs.statusCode, theirs.body).toBe(404);
        expect(missing.statusCode).toBe(404);
        expect(errorOf(theirs.body).code).toBe(errorOf(missing.body).code);
        expect(theirs.body).not.toContain(marker);
        expect(await tenantDigest(harness(), partnerA.id)).toBe(before);
      },
    );

    it("lists none of them, and a cursor from one pages only the caller's own", async () => {
      for (const url of ['/v1/api-portal/merchants/', `/v1/api-portal/merchants/?cursor=${mid}`]) {
        const list = await harness().request('GET', url, { auth: partnerB });
        expect([200, 400]).toContain(list.statusCode);
        expect(list.body).not.toContain(mid);
        expect(list.body).not.toContain(marker);
      }
    });
  });

  it('logs no secret, no Authorization value', () => {
    ledger.expectCleanLogs(harness());
  });
});
