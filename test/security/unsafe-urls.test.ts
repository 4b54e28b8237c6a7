import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { merchantBody } from '../helpers/onboarding.js';
import { createOrder, paymentBody } from '../helpers/payments.js';
import { tenantDigest } from './fuzz.js';
import { SecretLedger } from './secrets.js';
import {
  ACCEPTED_WEBSITES,
  PUBLIC_ADDRESS,
  REFUSED_WEBSITES,
  RETURN_URL_CASES,
  UNSAFE_WEBHOOK_URLS_LIVE,
  WEBHOOK_DNS_ANSWERS,
} from './url-tables.js';

/** Every return_url case in each mode, with that mode's outcome. */
const RETURN_URL_ROWS = RETURN_URL_CASES.flatMap((row) =>
  (['test', 'live'] as const).map((mode) => ({ ...row, mode, outcome: row[mode] })),
);
type ReturnUrlRow = (typeof RETURN_URL_ROWS)[number];

/** The URL tables through HTTP: what the routes decide, not only what the URL checks decide. */
describeEachDatabase('security: unsafe URLs over HTTP', (harness) => {
  const ledger = new SecretLedger();
  let merchant: TestAccount;
  let live: TestAccount;
  let partner: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant('URLs');
    live = await harness().liveKey(merchant);
    partner = await harness().partner('URLs partner');
    ledger.add(merchant, live, partner);
    // The table's DNS, with no network: names not in it resolve to a public address.
    harness().container.resolver.lookup = async (hostname) =>
      (WEBHOOK_DNS_ANSWERS[hostname] ?? [PUBLIC_ADDRESS]).map((address) => ({
        address,
        family: address.includes(':') ? 6 : 4,
      }));
  });

  /**
   * Sends one row's return_url for a fresh order of the row's mode: a refusal is checked here (400
   * naming return_url, and nothing of the tenant changed); an accepted row's reply is returned.
   */
  const sendReturnUrl = async (
    { mode, outcome, code }: ReturnUrlRow,
    post: (account: TestAccount, orderId: string) => Promise<LightMyRequestResponse>,
  ): Promise<LightMyRequestResponse> => {
    const account = mode === 'live' ? live : merchant;
    const orderId = await createOrder(harness(), account);
    const before = await tenantDigest(harness(), account.id);
    const reply = await post(account, orderId);
    if (outcome === 'refused') {
      expect(reply.statusCode, reply.body).toBe(400);
      expect(reply.json().error).toMatchObject({ code: code ?? 'invalid_return_url', field: 'return_url' });
      expect(await tenantDigest(harness(), account.id)).toBe(before);
    }
    return reply;
  };

  describe('return_url', () => {
    it.each(RETURN_URL_ROWS)('$mode mode: $name ($outcome)', async (row) => {
      const { mode, outcome } = row;
      const reply = await sendReturnUrl(row, (account, orderId) =>
        harness().request('POST', '/v1/payments/create/s2s/', {
          auth: account,
          json: paymentBody(orderId, { return_url: row.url }),
        }),
      );
      if (outcome === 'refused') return;
      if (mode === 'test') {
        expect(reply.statusCode, reply.body).toBe(200);
      } else {
        // Live mode has no bank connector yet: an accepted return_url gets as far as that refusal.
        expect(reply.statusCode, reply.body).toBe(503);
        expect(reply.json().error.code).toBe('connector_unavailable');
      }
    });
  });

  describe('return_url of a checkout session', () => {
    it.each(RETURN_URL_ROWS)('$mode mode: $name ($outcome)', async (row) => {
      const { url, mode, outcome } = row;
      const reply = await sendReturnUrl(row, (account, orderId) =>
        harness().request('POST', '/v1/checkout/sessions/', {
          auth: account,
          json: { order_id: orderId, return_url: url },
        }),
      );
      if (outcome === 'refused') return;
      if (mode === 'test') {
        expect(reply.statusCode, reply.body).toBe(200);
        // Stored as sent: what the merchant wrote is where the browser goes.
        const [stored] = await harness().container.db.query<{ return_url: string }>(
          'SELECT return_url FROM checkout_sessions WHERE id = $1',
          [reply.json().data.id],
        );
        expect(stored?.return_url).toBe(url);
      } else {
        // Live mode has no method enabled yet: an accepted return_url gets as far as that refusal.
        expect(reply.json().error?.field, reply.body).not.toBe('return_url');
      }
    });
  });

  describe('website', () => {
    const PUBLIC_HOST = "The field 'website' must be an https URL with a public host name.";

    it.each(REFUSED_WEBSITES)('onboarding refuses %s: %j', async (_name, website, reason) => {
      const before = await tenantDigest(harness(), partner.id);
      const reply = await harness().request('POST', '/v1/api-portal/merchants/', {
        auth: partner,
        json: merchantBody({ website }),
      });
      expect(reply.statusCode, reply.body).toBe(400);
      expect(reply.json().error).toMatchObject({ code: 'invalid_field', field: 'website' });
      if (reason === 'host') expect(reply.json().error.message).toBe(PUBLIC_HOST);
      else expect(reply.json().error.message).toMatch(/^The field 'website' must /);
      expect(await tenantDigest(harness(), partner.id)).toBe(before);
    });

    it.each(ACCEPTED_WEBSITES)('onboarding accepts %j, as sent', async (website) => {
      const reply = await harness().request('POST', '/v1/api-portal/merchants/', {
        auth: partner,
        json: merchantBody({ website }),
      });
      expect(reply.statusCode, reply.body).toBe(200);
      ledger.addValue(reply.json().data.credentials.secret_key);
      expect(reply.json().data.website).toBe(website);
    });
  });

  describe('webhook url', () => {
    it('accepts a public https URL with a live key (the refusals below are about the URL)', async () => {
      const reply = await harness().request('POST', '/v1/webhooks/', {
        auth: live,
        json: { url: 'https://hooks.example.com/kosh' },
      });
      expect(reply.statusCode, reply.body).toBe(200);
      ledger.addValue(reply.json().data.secret);
    });

    it.each(UNSAFE_WEBHOOK_URLS_LIVE)('POST with a live key refuses %s: %s', async (_name, url) => {
      const before = await tenantDigest(harness(), live.id);
      const reply = await harness().request('POST', '/v1/webhooks/', { auth: live, json: { url } });
      expect(reply.statusCode, reply.body).toBe(400);
      expect(reply.json().error).toMatchObject({ code: 'invalid_webhook_url', field: 'url' });
      expect(reply.body).not.toContain('whsec_');
      expect(await tenantDigest(harness(), live.id)).toBe(before);
    });

    it.each(UNSAFE_WEBHOOK_URLS_LIVE)('PATCH with a live key refuses %s: %s', async (_name, url) => {
      const created = await harness().request('POST', '/v1/webhooks/', {
        auth: live,
        json: { url: 'https://hooks.example.com/patched' },
      });
      ledger.addValue(created.json().data.secret);
      const id = created.json().data.id;
      const before = await tenantDigest(harness(), live.id);
      const reply = await harness().request('PATCH', `/v1/webhooks/${id}/`, { auth: live, json: { url } });
      expect(reply.statusCode, reply.body).toBe(400);
      expect(reply.json().error).toMatchObject({ code: 'invalid_webhook_url', field: 'url' });
      expect(await tenantDigest(harness(), live.id)).toBe(before);
      const fetched = await harness().request('GET', `/v1/webhooks/${id}/`, { auth: live });
      expect(fetched.json().data.url).toBe('https://hooks.example.com/patched');
    });

    it.each([
      ['cloud metadata', 'http://169.254.169.254/latest/meta-data/'],
      ['a private address', 'http://10.0.0.1/kosh'],
      ['a name resolving to a private address', 'http://internal.example.com/kosh'],
      ['file:', 'file:///etc/passwd'],
      ['credentials', 'http://user:secret@127.0.0.1/kosh'],
    ])('POST with a test key also refuses %s: %s', async (_name, url) => {
      const reply = await harness().request('POST', '/v1/webhooks/', { auth: merchant, json: { url } });
      expect(reply.statusCode, reply.body).toBe(400);
      expect(reply.json().error).toMatchObject({ code: 'invalid_webhook_url', field: 'url' });
    });
  });

  it('logs no secret, no Authorization value', () => {
    ledger.expectCleanLogs(harness());
  });
});
