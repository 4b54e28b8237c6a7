import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMerchant } from '../../examples/merchant/app.js';
import { type LaunchedBrowser, launchBrowser } from '../helpers/browser.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { freePort } from '../helpers/process.js';

/**
 * The customer's whole journey in Debian's headless Chromium: the example shop, Kosh's html_form or
 * redirect, the sandbox bank or wallet page, the signed return POST, and the status the shop fetched.
 */
const CASES = [
  { code: 'ICIC', method: 'netbanking', action: 'html_form' },
  { code: 'HDFC', method: 'netbanking', action: 'redirect' },
  { code: 'airtelmoney', method: 'wallet', action: 'html_form' },
  { code: 'payzapp', method: 'wallet', action: 'redirect' },
] as const;

const CHOICES = [
  { button: 'Success', payment: 'captured', order: 'paid', error: '—' },
  { button: 'Failure', payment: 'failed', order: 'attempted', error: 'payment_declined' },
  { button: 'Cancel', payment: 'failed', order: 'attempted', error: 'payment_cancelled' },
] as const;

for (const kind of DATABASE_KINDS) {
  describe(`payments in a real browser [${kind}]`, () => {
    let harness: Harness;
    let browser: LaunchedBrowser;
    let context: BrowserContext;
    let shop: { url: string; close(): Promise<void> };
    let koshUrl: string;

    beforeAll(async () => {
      const port = await freePort();
      koshUrl = `http://127.0.0.1:${port}`;
      harness = await createHarness(kind, { KOSH_PUBLIC_URL: koshUrl });
      await harness.app.listen({ port, host: '127.0.0.1' });
      const merchant = await harness.merchant('Notebook Shop');
      shop = await startMerchant({
        baseUrl: koshUrl,
        apiKey: merchant.credentials.api_key,
        secretKey: merchant.credentials.secret_key,
      });
      // A fresh profile per run: nothing cached or remembered between runs.
      browser = await launchBrowser();
      context = browser.context;
    });

    afterAll(async () => {
      await browser?.close();
      await shop?.close();
      await harness?.close();
    });

    for (const testCase of CASES) {
      for (const choice of CHOICES) {
        it(`${testCase.code.toUpperCase()} (${testCase.action}) → ${choice.button}`, async () => {
          const page = await context.newPage();
          try {
            await page.goto(shop.url);
            const field = testCase.method === 'netbanking' ? '#bank' : '#wallet';
            await page.selectOption(field, testCase.code);
            const started = Date.now();
            await page.click(`#pay-${testCase.method}`);

            if (testCase.action === 'html_form') {
              // The shop rendered Kosh's html_content: it waits about 1000 ms, then submits by GET.
              await page.waitForURL(`${koshUrl}/v1/payments/*/authentication/?*`);
              expect(Date.now() - started).toBeGreaterThanOrEqual(900);
              const query = new URL(page.url()).searchParams;
              expect(query.get('paymentMode')).toBe(
                testCase.method === 'netbanking' ? 'NET_BANKING' : 'WALLET',
              );
              expect(query.get(testCase.method === 'netbanking' ? 'bankCode' : 'walletCode')).toBe(
                testCase.code,
              );
            } else {
              await page.waitForURL(`${koshUrl}/v1/payments/*/authentication/`);
            }
            await expect(page.locator('#merchant').textContent()).resolves.toContain('Notebook Shop');
            await expect(page.locator('#amount').textContent()).resolves.toBe('₹50.00');

            await page.click(`button:has-text("${choice.button}")`);
            await page.waitForURL(`${shop.url}/return`);
            await expect(page.locator('#payment-status').textContent()).resolves.toBe(choice.payment);
            await expect(page.locator('#order-status').textContent()).resolves.toBe(choice.order);
            await expect(page.locator('#error-code').textContent()).resolves.toBe(choice.error);
            await expect(page.locator('#signature').textContent()).resolves.toBe('verified');

            // Going back to the bank page changes nothing and returns the browser to the shop again.
            const paymentId = await page.locator('#payment-id').textContent();
            await page.goto(`${koshUrl}/v1/payments/${paymentId}/authentication/`);
            await page.waitForURL(`${shop.url}/return`);
            await expect(page.locator('#payment-status').textContent()).resolves.toBe(choice.payment);
          } finally {
            await page.close();
          }
        });
      }
    }
  });
}
