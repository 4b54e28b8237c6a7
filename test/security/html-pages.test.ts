import { beforeAll, expect, it } from 'vitest';
import { MISLEADING_CHARACTERS } from '../../src/domain/text.js';
import { basicAuth, describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { proprietorBody } from '../helpers/onboarding.js';
import { choose, createOrder, paymentBody } from '../helpers/payments.js';
import { HOSTILE_STRINGS } from './hostile-inputs.js';
import { SecretLedger } from './secrets.js';

/**
 * The only HTML Kosh serves (the S2S `html_content`, the sandbox authentication page, the return
 * form and the error page) carries merchant and customer values. Every hostile value must reach the
 * browser as text: escaped where it is printed, and never as markup or script.
 */

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
  '&#96;': '`',
};
const decodeEntities = (text: string) =>
  text.replace(/&(amp|lt|gt|quot|#39|#96);/g, (entity) => ENTITIES[entity]!);

/** No script but Kosh's own (nonce-bound, or the fixed auto-submit of html_content), no injected tag. */
function expectInert(html: string, value: string): void {
  if (/[<>"'&`]/.test(value)) expect(html).not.toContain(value);
  const scripts = html.match(/<script[^>]*>/g) ?? [];
  for (const tag of scripts) expect(tag).toMatch(/^<script( nonce="[^"]+")?>$/);
  expect(scripts.length).toBeLessThanOrEqual(1);
  expect(html).not.toMatch(/<(img|svg|iframe)/i);
}

describeEachDatabase('security: HTML pages escape every caller value', (harness) => {
  const ledger = new SecretLedger();
  let partner: TestAccount;
  beforeAll(async () => {
    partner = await harness().partner('Pages');
    ledger.add(partner);
  });

  /** A merchant onboarded through the api-portal with the hostile value in its display name. */
  async function merchantNamed(displayName: string): Promise<TestAccount> {
    const reply = await harness().request('POST', '/v1/api-portal/merchants/', {
      auth: partner,
      json: proprietorBody({ display_name: displayName }),
    });
    expect(reply.statusCode, reply.body).toBe(200);
    const credentials = reply.json().data.credentials;
    const account = {
      id: credentials.account_id ?? reply.json().data.id,
      credentials,
      auth: basicAuth(credentials),
    };
    ledger.add(account);
    // The return form is signed with this secret; the signature may be logged, the secret never.
    const secret = await harness().request('GET', '/v1/payments/return-signing-secret/', { auth: account });
    ledger.addValue(secret.json().data.secret);
    return account;
  }

  it.each(HOSTILE_STRINGS)(
    '%j in the merchant name, customer name, description and return_url query',
    async (value) => {
      // A merchant's name refuses control characters and direction marks (tested in onboarding).
      const merchantName = MISLEADING_CHARACTERS.test(value) ? 'Shop' : `Shop ${value}`;
      const merchant = await merchantNamed(merchantName);
      // Spaces, control characters and backslashes are refused in a return_url (tested in
      // unsafe-urls), so those arrive percent-encoded; quotes, brackets and the rest as they are.
      const returnUrl = `https://merchant.example/return?q=${value.replace(/[\s\\\p{Cc}]/gu, encodeURIComponent)}`;
      const orderId = await createOrder(harness(), merchant);
      const created = await harness().request('POST', '/v1/payments/create/s2s/', {
        auth: merchant,
        json: paymentBody(orderId, {
          // Control characters are refused in these two (tested in payments); the rest is text.
          name: value.includes('\r') ? 'Asha' : `Asha ${value}`,
          description: value.includes('\r') ? 'Notes' : `Notes ${value}`,
          metadata: { note: value },
          return_url: returnUrl,
        }),
      });
      expect(created.statusCode, created.body).toBe(200);
      const { payment_id: paymentId, next } = created.json();
      expectInert(next[0].html_content, value);

      const page = await harness().request('GET', `/v1/payments/${paymentId}/authentication/`);
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expectInert(page.body, value);
      // The merchant's name is shown, as text.
      const shown = /<dd id="merchant">([^<]*)<\/dd>/.exec(page.body)?.[1];
      expect(decodeEntities(shown ?? '')).toBe(merchantName.trim());

      const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1] as string;
      const returned = await choose(harness(), paymentId, token, 'success');
      expect(returned.statusCode).toBe(200);
      expectInert(returned.body, value);
      // The form posts back to exactly the URL the merchant gave: escaped, not rewritten.
      const action = /<form id="kosh-return" method="POST" action="([^"]*)">/.exec(returned.body)?.[1];
      expect(decodeEntities(action ?? '')).toBe(returnUrl);
      // And the page lets the form go to that URL's scheme (and the redirects after it), as a browser reads it.
      const formAction = /form-action ([^;]*);/.exec(String(returned.headers['content-security-policy']));
      expect(formAction?.[1]?.split(' ').at(-1)).toBe(new URL(returnUrl).protocol);
    },
  );

  it.each(HOSTILE_STRINGS)(
    '%j as the payment id of the authentication page: an escaped error page',
    async (value) => {
      const page = await harness().request(
        'GET',
        `/v1/payments/${encodeURIComponent(value)}/authentication/`,
      );
      expect(page.statusCode).toBeGreaterThanOrEqual(400);
      expect(page.statusCode).toBeLessThan(500);
      if (String(page.headers['content-type']).startsWith('text/html')) expectInert(page.body, value);
      else expect(page.headers['content-type']).toMatch(/^application\/json/);
    },
  );

  it('logs no secret, no Authorization value', () => {
    ledger.expectCleanLogs(harness());
  });
});
