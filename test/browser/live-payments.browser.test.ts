import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyReturn } from '../../src/modules/payments/return-signature.js';
import {
  BROWSER_TEST_TIMEOUT_MS,
  type LaunchedBrowser,
  launchBrowser,
  merchantReturn,
  saveScreenshot,
} from '../helpers/browser.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { fakepayAccount } from '../helpers/fakepay/connector.js';
import { Fakepay } from '../helpers/fakepay/server.js';
import { createHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { paymentBody } from '../helpers/payments.js';
import { freePort } from '../helpers/process.js';

/**
 * A live payment walked by a real browser: Kosh's authentication page hands the browser to the
 * provider (Fakepay) by an auto-submitting POST (net banking) or a redirect (wallet), the customer
 * decides on the provider's bank page, the provider sends the browser back to Kosh's callback, and
 * Kosh sends it on to the merchant's https return_url with the signed POST (caught in the browser:
 * the merchant's site is not on this machine).
 */
const RETURN_URL = 'https://merchant.example/return';

/**
 * Waits for one part of the teardown, and says on stderr which one is still closing after 20 s:
 * the hook's own timeout (60 s) would not name it.
 */
async function closing(what: string, close: () => Promise<unknown> | undefined): Promise<void> {
  const started = Date.now();
  const slow = setTimeout(
    () => console.error(`live payments teardown: ${what} is still closing after 20 s`),
    20_000,
  );
  try {
    await close();
  } finally {
    clearTimeout(slow);
    if (Date.now() - started > 20_000)
      console.error(`live payments teardown: ${what} closed after ${Date.now() - started} ms`);
  }
}

for (const kind of DATABASE_KINDS) {
  describe(`live payments in a real browser [${kind}]`, { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
    let fakepay: Fakepay;
    let harness: Harness;
    let browser: LaunchedBrowser;
    let context: BrowserContext;
    let merchant: TestAccount;

    beforeAll(async () => {
      fakepay = await Fakepay.start();
      const port = await freePort();
      const koshUrl = `http://127.0.0.1:${port}`;
      harness = await createHarness(
        kind,
        { KOSH_PUBLIC_URL: koshUrl },
        {
          liveConnector: fakepayAccount(fakepay, 'ca_fakepay_browser'),
        },
      );
      await harness.app.listen({ port, host: '127.0.0.1' });
      fakepay.webhookUrl = `${koshUrl}/v1/connectors/fakepay/webhooks/ca_fakepay_browser/`;
      merchant = await harness.liveKey(await harness.merchant('Live Notebook Shop'));
      const { methods } = harness.container.services;
      const live = {
        ...(await methods.get(merchant.id, 'test')),
        netbanking: { HDFC: 'HDFC Bank' },
        wallet: { payzapp: 'PayZapp' },
      };
      await harness.container.db.transaction((tx) => methods.set(tx, merchant.id, 'live', live));
      browser = await launchBrowser();
      context = browser.context;
    });

    afterAll(async () => {
      await closing('Chromium', () => browser?.close());
      await closing('Kosh', () => harness?.close());
      await closing('the fake provider', () => fakepay?.close());
    });

    const CASES = [
      {
        method: 'netbanking',
        overrides: { bank: 'HDFC' },
        action: 'html_form',
        choice: 'success',
        status: 'captured',
      },
      {
        method: 'wallet',
        overrides: { method: 'wallet', bank: undefined, wallet: 'PAYZAPP' },
        action: 'redirect',
        choice: 'success',
        status: 'captured',
      },
      {
        method: 'netbanking',
        overrides: { bank: 'HDFC' },
        action: 'html_form',
        choice: 'failure',
        status: 'failed',
      },
    ] as const;

    for (const testCase of CASES) {
      it(`${testCase.method} (${testCase.action}) → the provider's ${testCase.choice} → ${testCase.status}`, async () => {
        const order = await harness.request('POST', '/v1/orders/', {
          auth: merchant,
          json: { amount: 5000, currency: 'INR' },
        });
        const orderId = order.json().data.id as string;
        const created = await harness.request('POST', '/v1/payments/create/s2s/', {
          auth: merchant,
          json: paymentBody(orderId, { ...testCase.overrides, return_url: RETURN_URL }),
        });
        expect(created.statusCode, created.body).toBe(200);
        const { payment_id: paymentId, next } = created.json();
        expect(next[0].action).toBe(testCase.action);

        const page = await context.newPage();
        try {
          const returned = merchantReturn(page, RETURN_URL);
          // The merchant's site renders html_content, or sends the browser to the url.
          if (next[0].action === 'html_form') await page.setContent(next[0].html_content);
          else await page.goto(next[0].url);
          await page.waitForURL(`${fakepay.url}/bank/**`);
          await expect(page.locator('#amount').textContent()).resolves.toBe('5000 INR');
          if (testCase.choice === 'success') {
            await saveScreenshot(page, `live-${testCase.method}-provider-${kind}.png`);
          }
          await page.click(`button[value="${testCase.choice}"]`);
          const fields = await returned;
          expect(fields).toMatchObject({ payment_id: paymentId, order_id: orderId, status: testCase.status });
          const secret = await harness.container.services.payments.returnSigningSecret(merchant.id, 'live');
          expect(verifyReturn(secret, fields as never)).toBe(true);
          await expect(page.locator('#thanks').textContent()).resolves.toBe('Thank you');
        } finally {
          await page.close();
        }
        const payment = (
          await harness.request('GET', `/v1/payments/${paymentId}/`, { auth: merchant })
        ).json().data;
        expect(payment.status).toBe(testCase.status);
        if (testCase.status === 'failed') expect(payment.error_code).toBe('payment_declined');
        expect(fakepay.ordersFor(paymentId)).toHaveLength(1);
      });
    }
  });
}
