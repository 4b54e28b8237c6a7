import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { liveVisitor } from '../helpers/dashboard-visitor.js';
import { basicAuth, describeEachDatabase, type Harness, type TestAccount } from '../helpers/harness.js';
import { BANK, merchantBody, proprietorBody, uploadDocument } from '../helpers/onboarding.js';

const BASE = '/v1/api-portal';
const DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-onboarding-flow-'));
afterAll(() => fs.rmSync(DATA_DIR, { recursive: true, force: true }));

interface EventRow {
  type: string;
  mode: string;
  payload: { merchant: { id: string; status: string; bank_account: { account_number: string } | null } };
}

async function eventsOf(harness: Harness, partnerId: string, merchantId: string): Promise<EventRow[]> {
  const rows = await harness.container.db.query<EventRow>(
    `SELECT type, mode, payload FROM events WHERE account_id = $1 AND payload->'merchant'->>'id' = $2 ORDER BY created_at, id`,
    [partnerId, merchantId],
  );
  return rows;
}

/** Everything a merchant must provide, in the order a partner would send it. */
async function completeRequirements(
  harness: Harness,
  partner: TestAccount,
  mid: string,
  documents: string[],
) {
  const bank = await harness.request('POST', `${BASE}/merchants/bank-details/${mid}/`, {
    auth: partner,
    json: BANK,
  });
  expect(bank.statusCode).toBe(200);
  for (const type of documents) {
    const upload = await uploadDocument(harness, partner, mid, type);
    expect(upload.statusCode).toBe(200);
  }
  return (await harness.request('GET', `${BASE}/merchants/${mid}/`, { auth: partner })).json().data;
}

describeEachDatabase(
  'merchant onboarding, creation to live key',
  (harness) => {
    let secrets: string[] = [];

    it('walks a live-mode merchant from creation through review and activation to a live key', async () => {
      const partner = await harness().liveKey(await harness().partner('Platform'));
      secrets.push(partner.credentials.secret_key);
      const created = await harness().request('POST', `${BASE}/merchants/`, {
        auth: partner,
        json: merchantBody(),
      });
      expect(created.statusCode).toBe(200);
      const merchant = created.json().data;
      secrets.push(merchant.credentials.secret_key);
      expect(merchant).toMatchObject({ mode: 'live', status: 'created' });

      const early = await harness().request('POST', `${BASE}/merchants/${merchant.id}/keys/`, {
        auth: partner,
        json: { mode: 'live' },
      });
      expect(early.statusCode).toBe(403);
      expect(early.json().error.code).toBe('account_not_activated');

      const vpa = await harness().request('POST', `${BASE}/generate-vpa/${merchant.id}/`, { auth: partner });
      expect(vpa.json().data.status).toBe('pending');
      // The body is optional, also from a client that labels every request JSON and sends none.
      const labelled = await harness().request('POST', `${BASE}/generate-vpa/${merchant.id}/`, {
        auth: partner,
        json: '',
        headers: { 'content-type': 'application/json' },
      });
      expect(labelled.statusCode, labelled.body).toBe(200);

      harness().clock.advance(1_000);
      const reviewed = await completeRequirements(harness(), partner, merchant.id, [
        'pan',
        'address_proof',
        'incorporation_certificate',
        'gst_certificate',
      ]);
      expect(reviewed.status).toBe('under_review');
      expect(reviewed.requirements.currently_due).toEqual([]);
      // Live mode has no penny-drop connector: the reviewer's activation verifies the account.
      expect(reviewed.bank_account.status).toBe('pending');

      const changeBank = await harness().request('POST', `${BASE}/merchants/bank-details/${merchant.id}/`, {
        auth: partner,
        json: BANK,
      });
      expect(changeBank.statusCode).toBe(409);

      harness().clock.advance(1_000);
      const activated = await harness().container.services.merchants.operate(merchant.id, 'activate');
      expect(activated.status).toBe('activated');
      expect(activated.bank_account?.status).toBe('verified');
      expect(activated.activated_at).toEqual(expect.any(Number));
      const documents = (
        await harness().request('GET', `${BASE}/merchants/${merchant.id}/kyc-documents/`, { auth: partner })
      ).json().data;
      expect(documents.map((document: { status: string }) => document.status)).toEqual(
        Array(4).fill('verified'),
      );
      const vpas = (
        await harness().request('GET', `${BASE}/merchants/${merchant.id}/vpas/`, { auth: partner })
      ).json().data;
      expect(vpas.map((item: { status: string }) => item.status)).toEqual(['active', 'active']);

      const keys = await harness().request('POST', `${BASE}/merchants/${merchant.id}/keys/`, {
        auth: partner,
        json: { mode: 'live' },
      });
      expect(keys.statusCode).toBe(200);
      const live = keys.json().data;
      secrets.push(live.secret_key);
      expect(live.api_key).toMatch(/^key_live_/);
      const liveMethods = await harness().request('GET', '/v1/payments/methods/', { auth: basicAuth(live) });
      expect(liveMethods.statusCode).toBe(200);

      // The merchant's own test key still takes test-mode orders.
      const order = await harness().request('POST', '/v1/orders/', {
        auth: basicAuth(merchant.credentials),
        json: { amount: 5000, currency: 'INR', receipt: 'first-order' },
      });
      expect(order.statusCode).toBe(200);
      expect(order.json().data).toMatchObject({ status: 'created', amount: 5000 });

      const events = await eventsOf(harness(), partner.id, merchant.id);
      expect(events.map((event) => event.type)).toEqual([
        'merchant.created',
        'merchant.under_review',
        'merchant.activated',
      ]);
      expect(events.every((event) => event.mode === 'live')).toBe(true);
      expect(events[2]!.payload.merchant.status).toBe('activated');
      expect(events[2]!.payload.merchant.bank_account!.account_number).toBe('XXXXXXXX7890');
    });

    it('activates a test-mode merchant by itself once everything is in, and keeps it to test keys', async () => {
      const partner = await harness().partner('Sandbox platform');
      const merchant = (
        await harness().request('POST', `${BASE}/merchants/`, { auth: partner, json: proprietorBody() })
      ).json().data;
      secrets.push(merchant.credentials.secret_key);
      const afterBank = await harness().request('POST', `${BASE}/merchants/bank-details/${merchant.id}/`, {
        auth: partner,
        json: BANK,
      });
      expect(afterBank.json().data.status).toBe('created');
      const done = await completeRequirements(harness(), partner, merchant.id, ['pan', 'address_proof']);
      expect(done.status).toBe('activated');
      const types = (await eventsOf(harness(), partner.id, merchant.id)).map((event) => event.type);
      // under_review and activated are written in one transaction at one instant: compare as a set.
      expect(types.sort()).toEqual(['merchant.activated', 'merchant.created', 'merchant.under_review']);

      const live = await harness().request('POST', `${BASE}/merchants/${merchant.id}/keys/`, {
        auth: partner,
        json: { mode: 'live' },
      });
      expect(live.statusCode).toBe(403);
      expect(live.json().error.code).toBe('account_not_activated');
      const test = await harness().request('POST', `${BASE}/merchants/${merchant.id}/keys/`, {
        auth: partner,
        json: { mode: 'test' },
      });
      expect(test.statusCode).toBe(200);
      secrets.push(test.json().data.secret_key);
      expect(test.json().data.api_key).toMatch(/^key_test_/);

      // However the live key is asked for: the merchant's own dashboard in live mode, an admin
      // command, or SQL. The database refuses it.
      const visitor = await liveVisitor(harness, merchant.id, '198.51.100.77');
      const fromDashboard = await visitor.submit('/dashboard/keys/', '/dashboard/keys/');
      expect(fromDashboard.statusCode).toBe(403);
      expect(fromDashboard.body).toContain('can hold only test keys');
      expect(fromDashboard.body).not.toMatch(/sk_live_/);
      await expect(harness().container.services.accounts.issueKey(merchant.id, 'live')).rejects.toMatchObject(
        {
          code: 'account_not_activated',
        },
      );
      await expect(
        harness().container.db.query(
          `INSERT INTO api_keys (api_key, account_id, mode, secret_hash) VALUES ('key_live_forged', $1, 'live', '\\x00')`,
          [merchant.id],
        ),
      ).rejects.toMatchObject({ code: '23514', constraint: 'api_keys_live_only_for_live_merchants' });
      const liveKeys = await harness().container.db.query(
        `SELECT api_key FROM api_keys WHERE account_id = $1 AND mode = 'live'`,
        [merchant.id],
      );
      expect(liveKeys).toEqual([]);
    });

    it('reads the merchant status after the lock: bank details racing the activation never change an activated merchant', async () => {
      const partner = await harness().partner('Racing platform');
      for (let round = 0; round < 4; round++) {
        const merchant = (
          await harness().request('POST', `${BASE}/merchants/`, { auth: partner, json: proprietorBody() })
        ).json().data;
        secrets.push(merchant.credentials.secret_key);
        for (const type of ['pan', 'address_proof']) {
          expect((await uploadDocument(harness(), partner, merchant.id, type)).statusCode).toBe(200);
        }
        // One request completes the requirements (and activates); the other fails the penny drop.
        const [good, bad] = await Promise.all([
          harness().request('POST', `${BASE}/merchants/bank-details/${merchant.id}/`, {
            auth: partner,
            json: { ...BANK, account_type: 'savings', beneficiary_name: 'Asha Sharma' },
          }),
          harness().request('POST', `${BASE}/merchants/bank-details/${merchant.id}/`, {
            auth: partner,
            json: { ...BANK, account_number: '009999999999', beneficiary_name: 'MISMATCH Tiffins' },
          }),
        ]);
        expect(good.statusCode).toBe(200);
        const after = (
          await harness().request('GET', `${BASE}/merchants/${merchant.id}/`, { auth: partner })
        ).json().data;
        if (bad.statusCode === 200) {
          // The failing one came first; the good one then activated the merchant.
          expect(bad.json().data.status).toBe('created');
          expect(good.json().data.status).toBe('activated');
        } else {
          expect(bad.statusCode).toBe(409);
          expect(bad.json().error.code).toBe('state_conflict');
        }
        expect(after.status).toBe('activated');
        expect(after.bank_account).toMatchObject({ last4: '7890', status: 'verified' });
        expect(after.requirements.currently_due).toEqual([]);
      }
    });

    it('suspends a merchant (its keys stop working, VPAs too) and re-activates it', async () => {
      const partner = await harness().partner('Suspender');
      const merchant = (
        await harness().request('POST', `${BASE}/merchants/`, { auth: partner, json: proprietorBody() })
      ).json().data;
      secrets.push(merchant.credentials.secret_key);
      const refused = harness().container.services.merchants.operate(merchant.id, 'activate');
      await expect(refused).rejects.toMatchObject({ code: 'state_conflict' });
      await expect(refused).rejects.toThrow(/bank_details/);

      await completeRequirements(harness(), partner, merchant.id, ['pan', 'address_proof']);
      await harness().request('POST', `${BASE}/generate-vpa/${merchant.id}/`, { auth: partner });
      const auth = basicAuth(merchant.credentials);
      expect((await harness().request('GET', '/v1/payments/methods/', { auth })).statusCode).toBe(200);

      harness().clock.advance(1_000);
      const suspended = await harness().container.services.merchants.operate(merchant.id, 'suspend');
      expect(suspended.status).toBe('suspended');
      const blocked = await harness().request('GET', '/v1/payments/methods/', { auth });
      expect(blocked.statusCode).toBe(403);
      const vpas = (
        await harness().request('GET', `${BASE}/merchants/${merchant.id}/vpas/`, { auth: partner })
      ).json().data;
      expect(vpas[0].status).toBe('suspended');
      // A key issued now could never be used: it is refused, and none is made.
      const keysBefore = await harness().container.db.query(
        'SELECT api_key FROM api_keys WHERE account_id = $1',
        [merchant.id],
      );
      const newKey = await harness().request('POST', `${BASE}/merchants/${merchant.id}/keys/`, {
        auth: partner,
        json: { mode: 'test' },
      });
      expect(newKey.statusCode).toBe(409);
      expect(newKey.json().error).toMatchObject({
        code: 'state_conflict',
        message: 'A suspended merchant cannot get a new key.',
      });
      expect(
        await harness().container.db.query('SELECT api_key FROM api_keys WHERE account_id = $1', [
          merchant.id,
        ]),
      ).toEqual(keysBefore);
      const again = harness().container.services.merchants.operate(merchant.id, 'suspend');
      await expect(again).rejects.toMatchObject({ code: 'state_conflict' });

      harness().clock.advance(1_000);
      await harness().container.services.merchants.operate(merchant.id, 'activate');
      expect((await harness().request('GET', '/v1/payments/methods/', { auth })).statusCode).toBe(200);
      const types = (await eventsOf(harness(), partner.id, merchant.id)).map((event) => event.type);
      expect(types.slice(-2)).toEqual(['merchant.suspended', 'merchant.activated']);
    });

    it('never activates a merchant with requirements due, even from a suspension', async () => {
      const partner = await harness().liveKey(await harness().partner('Suspended early'));
      const merchant = (
        await harness().request('POST', `${BASE}/merchants/`, { auth: partner, json: proprietorBody() })
      ).json().data;
      const operate = harness().container.services.merchants.operate;
      expect((await operate(merchant.id, 'suspend')).status).toBe('suspended');
      const refused = operate(merchant.id, 'activate');
      await expect(refused).rejects.toMatchObject({ code: 'state_conflict' });
      await expect(refused).rejects.toThrow(/still due: bank_details, kyc_document\.pan/);
      const keys = await harness().request('POST', `${BASE}/merchants/${merchant.id}/keys/`, {
        auth: partner,
        json: { mode: 'live' },
      });
      expect(keys.statusCode).toBe(409);
      expect(keys.json().error.code).toBe('state_conflict');
      const fetched = await harness().request('GET', `${BASE}/merchants/${merchant.id}/`, { auth: partner });
      expect(fetched.json().data.status).toBe('suspended');
      await expect(refused).rejects.toThrow(/it stays suspended/);
    });

    it('asks a merchant under review for clarification, then returns it to review on the next upload', async () => {
      const partner = await harness().liveKey(await harness().partner('Clarifier'));
      const merchant = (
        await harness().request('POST', `${BASE}/merchants/`, { auth: partner, json: proprietorBody() })
      ).json().data;
      secrets.push(merchant.credentials.secret_key);
      harness().clock.advance(1_000);
      await completeRequirements(harness(), partner, merchant.id, ['pan', 'address_proof']);
      const operate = harness().container.services.merchants.operate;
      await expect(operate(merchant.id, 'clarify', '  ')).rejects.toMatchObject({ code: 'missing_field' });

      harness().clock.advance(1_000);
      const asked = await operate(merchant.id, 'clarify', 'The address proof is older than three months.');
      expect(asked.status).toBe('needs_clarification');
      const seen = (
        await harness().request('GET', `${BASE}/merchants/${merchant.id}/`, { auth: partner })
      ).json().data;
      expect(seen.requirements.errors).toEqual([
        {
          requirement: 'review',
          code: 'needs_clarification',
          reason: 'The address proof is older than three months.',
        },
      ]);

      harness().clock.advance(1_000);
      expect((await uploadDocument(harness(), partner, merchant.id, 'address_proof')).statusCode).toBe(200);
      const back = (
        await harness().request('GET', `${BASE}/merchants/${merchant.id}/`, { auth: partner })
      ).json().data;
      expect(back.status).toBe('under_review');
      expect(back.requirements.errors).toEqual([]);
      const types = (await eventsOf(harness(), partner.id, merchant.id)).map((event) => event.type);
      expect(types).toEqual([
        'merchant.created',
        'merchant.under_review',
        'merchant.needs_clarification',
        'merchant.under_review',
      ]);
    });

    it('writes no full account number and no secret to any log line', () => {
      const logs = harness().logs();
      expect(logs.length).toBeGreaterThan(0);
      expect(logs).toContain('"bank_account":"XXXXXXXX7890"');
      expect(logs).not.toContain(BANK.account_number);
      for (const secret of secrets) expect(logs).not.toContain(secret);
      expect(logs.toLowerCase()).not.toContain('authorization": "basic');
      secrets = [];
    });
  },
  { KOSH_DATA_DIR: DATA_DIR },
);

describe('onboarding state machine data', () => {
  it('lets each action leave only the statuses it names', async () => {
    const { MERCHANT_TRANSITIONS, canTransition } = await import(
      '../../src/modules/merchants/transitions.js'
    );
    const statuses = ['created', 'under_review', 'needs_clarification', 'activated', 'suspended'] as const;
    const table = Object.fromEntries(
      Object.keys(MERCHANT_TRANSITIONS).map((action) => [
        action,
        statuses.filter((status) => canTransition(action as keyof typeof MERCHANT_TRANSITIONS, status)),
      ]),
    );
    expect(table).toEqual({
      submit: ['created', 'needs_clarification'],
      activate: ['under_review', 'needs_clarification', 'suspended'],
      clarify: ['under_review'],
      suspend: ['created', 'under_review', 'needs_clarification', 'activated'],
    });
  });
});
