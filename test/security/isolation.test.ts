import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { SecretLedger } from './secrets.js';
import { TENANT_RESOURCES } from './tables.js';

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
        const { id, marker } = await resource.create(harness(), creator());
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

  it('logs no secret, no Authorization value', () => {
    ledger.expectCleanLogs(harness());
  });
});
