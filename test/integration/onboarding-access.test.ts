import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { createVpasRepo } from '../../src/modules/merchants/vpas.repo.js';
import { createVpasService } from '../../src/modules/merchants/vpas.service.js';
import { describeEachDatabase, type Harness, type TestAccount } from '../helpers/harness.js';
import { BANK, proprietorBody, uploadDocument } from '../helpers/onboarding.js';

const BASE = '/v1/api-portal';
const MISSING = 'mid_00000000000000000000000000';

type Call = (harness: Harness, auth: TestAccount, mid: string) => Promise<LightMyRequestResponse>;

/** Every api-portal endpoint, called the way a partner would. */
const ENDPOINTS: [string, Call][] = [
  ['GET business-categories', (h, auth) => h.request('GET', `${BASE}/business-categories/`, { auth })],
  ['POST merchants', (h, auth) => h.request('POST', `${BASE}/merchants/`, { auth, json: proprietorBody() })],
  ['GET merchants', (h, auth) => h.request('GET', `${BASE}/merchants/`, { auth })],
  ['GET merchants/<mid>', (h, auth, mid) => h.request('GET', `${BASE}/merchants/${mid}/`, { auth })],
  [
    'POST bank-details',
    (h, auth, mid) => h.request('POST', `${BASE}/merchants/bank-details/${mid}/`, { auth, json: BANK }),
  ],
  ['POST kyc-document', (h, auth, mid) => uploadDocument(h, auth, mid, 'pan')],
  [
    'GET kyc-documents',
    (h, auth, mid) => h.request('GET', `${BASE}/merchants/${mid}/kyc-documents/`, { auth }),
  ],
  [
    'POST generate-vpa',
    (h, auth, mid) => h.request('POST', `${BASE}/generate-vpa/${mid}/`, { auth, json: {} }),
  ],
  ['GET vpas', (h, auth, mid) => h.request('GET', `${BASE}/merchants/${mid}/vpas/`, { auth })],
  [
    'POST keys',
    (h, auth, mid) => h.request('POST', `${BASE}/merchants/${mid}/keys/`, { auth, json: { mode: 'test' } }),
  ],
  [
    'PATCH methods',
    (h, auth, mid) =>
      h.request('PATCH', `${BASE}/merchants/${mid}/methods/`, {
        auth,
        json: { netbanking: { HDFC: false } },
      }),
  ],
];
const PER_MERCHANT = ENDPOINTS.filter(
  ([name]) => !['GET business-categories', 'POST merchants', 'GET merchants'].includes(name),
);

describeEachDatabase('api-portal access', (harness) => {
  let partnerA: TestAccount;
  let partnerB: TestAccount;
  let merchantKey: TestAccount;
  let mid: string;
  beforeAll(async () => {
    partnerA = await harness().partner('Partner A');
    partnerB = await harness().partner('Partner B');
    const created = await harness().request('POST', `${BASE}/merchants/`, {
      auth: partnerA,
      json: proprietorBody(),
    });
    mid = created.json().data.id;
    merchantKey = await harness().merchant('Plain merchant', { partnerId: partnerA.id });
  });

  it.each(ENDPOINTS)('%s: a merchant key gets 403 partner_key_required', async (_name, call) => {
    const response = await call(harness(), merchantKey, mid);
    expect(response.statusCode).toBe(403);
    expect(response.json().error).toMatchObject({ type: 'permission_error', code: 'partner_key_required' });
  });

  it.each(ENDPOINTS)('%s: no credentials get 401', async (_name, call) => {
    const response = await call(harness(), { auth: '' } as TestAccount, mid);
    expect(response.statusCode).toBe(401);
  });

  it.each(PER_MERCHANT)(
    "%s: partner B on partner A's merchant gets 404, exactly as for a missing one",
    async (_name, call) => {
      const theirs = await call(harness(), partnerB, mid);
      const missing = await call(harness(), partnerB, MISSING);
      expect(theirs.statusCode).toBe(404);
      expect(missing.statusCode).toBe(404);
      const strip = (response: LightMyRequestResponse) => {
        const { request_id: _id, message, ...rest } = response.json().error;
        return { ...rest, message: message.replace(mid, '<mid>').replace(MISSING, '<mid>') };
      };
      expect(strip(theirs)).toEqual(strip(missing));
    },
  );

  it('left partner A’s merchant untouched after all of that', async () => {
    const merchant = (await harness().request('GET', `${BASE}/merchants/${mid}/`, { auth: partnerA })).json()
      .data;
    expect(merchant.bank_account).toBeNull();
    const documents = await harness().request('GET', `${BASE}/merchants/${mid}/kyc-documents/`, {
      auth: partnerA,
    });
    expect(documents.json().data).toEqual([]);
    const vpas = await harness().request('GET', `${BASE}/merchants/${mid}/vpas/`, { auth: partnerA });
    expect(vpas.json().data).toEqual([]);
  });

  it("lets a partner set the methods of a merchant account made for it without onboarding, in its key's mode", async () => {
    const patch = (auth: TestAccount) =>
      harness().request('PATCH', `${BASE}/merchants/${merchantKey.id}/methods/`, {
        auth,
        json: { upi: { collect: true } },
      });
    // Partner B does not own it: 404, as for a missing merchant, and nothing changes.
    expect((await patch(partnerB)).statusCode).toBe(404);
    const methods = () =>
      harness()
        .request('GET', '/v1/payments/methods/', { auth: merchantKey })
        .then((r) => r.json().upi);
    expect(await methods()).toMatchObject({ intent: true, collect: false });
    const changed = await patch(partnerA);
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json().data.upi).toMatchObject({ intent: true, collect: true });
    expect(await methods()).toMatchObject({ intent: true, collect: true });
  });

  describe('VPAs', () => {
    it('generates `<descriptor>.<suffix>@kosh`, from the display name or the given descriptor', async () => {
      const url = `${BASE}/generate-vpa/${mid}/`;
      const derived = await harness().request('POST', url, { auth: partnerA });
      expect(derived.statusCode).toBe(200);
      expect(derived.json().data).toMatchObject({ entity: 'vpa', merchant_id: mid, status: 'pending' });
      expect(derived.json().data.address).toMatch(/^ashatiffins\.[a-z0-9]{6}@kosh$/);
      const chosen = await harness().request('POST', url, {
        auth: partnerA,
        json: { descriptor: 'asha2024' },
      });
      expect(chosen.json().data.address).toMatch(/^asha2024\.[a-z0-9]{6}@kosh$/);
      expect(chosen.json().data.id).toMatch(/^vpa_/);
    });

    it.each([
      ['upper case', { descriptor: 'Asha' }, 'invalid_field', 'descriptor'],
      ['too short', { descriptor: 'as' }, 'invalid_field', 'descriptor'],
      ['too long', { descriptor: 'a'.repeat(21) }, 'invalid_field', 'descriptor'],
      ['with a dot', { descriptor: 'asha.t' }, 'invalid_field', 'descriptor'],
      ['with an @', { descriptor: 'asha@x' }, 'invalid_field', 'descriptor'],
      ['an address', { address: 'asha@kosh' }, 'unknown_field', 'address'],
      ['a status', { status: 'active' }, 'server_owned_field', 'status'],
    ])('refuses a descriptor %s', async (_name, body, code, field) => {
      const response = await harness().request('POST', `${BASE}/generate-vpa/${mid}/`, {
        auth: partnerA,
        json: body,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toMatchObject({ code, field });
    });

    it('stays globally unique under concurrent requests', async () => {
      const responses = await Promise.all(
        Array.from({ length: 20 }, () =>
          harness().request('POST', `${BASE}/generate-vpa/${mid}/`, {
            auth: partnerA,
            json: { descriptor: 'rush' },
          }),
        ),
      );
      expect(responses.map((response) => response.statusCode)).toEqual(Array(20).fill(200));
      const addresses = responses.map((response) => response.json().data.address);
      expect(new Set(addresses).size).toBe(20);
    });

    it('retries with a new suffix when the database reports a collision', async () => {
      const draws = ['aaaaaa', 'aaaaaa', 'aaaaaa', 'bbbbbb'];
      const { container } = harness();
      const vpas = createVpasService({
        db: container.db,
        clock: container.clock,
        ids: container.ids,
        handle: 'kosh',
        merchants: container.services.merchants,
        repo: createVpasRepo(),
        suffix: () => draws.shift() ?? 'cccccc',
      });
      const principal = {
        accountId: partnerA.id,
        accountKind: 'partner' as const,
        accountName: 'Partner A',
        mode: 'test' as const,
        apiKey: partnerA.credentials.api_key,
      };
      const first = await vpas.generate(principal, mid, { descriptor: 'collide' });
      const second = await vpas.generate(principal, mid, { descriptor: 'collide' });
      expect(first.address).toBe('collide.aaaaaa@kosh');
      expect(second.address).toBe('collide.bbbbbb@kosh');
      expect(draws).toEqual([]);
    });
  });
});
