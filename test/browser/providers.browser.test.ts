import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CASHFREE_ERRORS } from '../../src/connectors/cashfree/cashfree.tables.js';
import { RAZORPAY_ERRORS } from '../../src/connectors/razorpay/razorpay.tables.js';
import { verifyReturn } from '../../src/modules/payments/return-signature.js';
import {
  BROWSER_TEST_TIMEOUT_MS,
  type LaunchedBrowser,
  launchBrowser,
  merchantReturn,
  saveScreenshot,
} from '../helpers/browser.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { createHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { paymentBody } from '../helpers/payments.js';
import { freePort } from '../helpers/process.js';
import { FakeCashfree } from '../helpers/providers/cashfree-fake.js';
import { FakeRazorpay } from '../helpers/providers/razorpay-fake.js';

/**
 * A merchant's live provider account walked by a real browser, for each provider (its local fake):
 * the merchant adds the account with its live key; the customer's browser goes from Kosh's
 * authentication page to the provider's bank page (an auto-submitting POST or a redirect), decides
 * there, comes back through Kosh's callback, and is sent to the merchant's https return_url with
 * the signed POST (caught in the browser: the merchant's site is not on this machine).
 */
const RETURN_URL = 'https://merchant.example/return';

const cashfree = await FakeCashfree.start();
const razorpay = await FakeRazorpay.start();
afterAll(async () => {
  await cashfree.close();
  await razorpay.close();
});

const PROVIDERS = [
  {
    name: 'cashfree',
    credentials: { client_id: cashfree.clientId, client_secret: cashfree.clientSecret },
    origin: cashfree.origin,
    decline: CASHFREE_ERRORS.TRANSACTION_DECLINED?.code,
    setWebhookUrl: (url: string) => {
      cashfree.webhookUrl = url;
    },
  },
  {
    name: 'razorpay',
    credentials: {
      key_id: razorpay.keyId,
      key_secret: razorpay.keySecret,
      webhook_secret: razorpay.webhookSecret,
    },
    origin: razorpay.url,
    decline: RAZORPAY_ERRORS[razorpay.declineReason]?.code,
    setWebhookUrl: (url: string) => {
      razorpay.webhookUrl = url;
    },
  },
] as const;

for (const kind of DATABASE_KINDS) {
  describe(`live payments through Cashfree and Razorpay in a real browser [${kind}]`, {
    timeout: BROWSER_TEST_TIMEOUT_MS,
  }, () => {
    let harness: Harness;
    let browser: LaunchedBrowser;
    let context: BrowserContext;
    let koshUrl: string;

    beforeAll(async () => {
      const port = await freePort();
      koshUrl = `http://127.0.0.1:${port}`;
      harness = await createHarness(kind, {
        KOSH_PUBLIC_URL: koshUrl,
        KOSH_CASHFREE_BASE_URL: cashfree.url,
        KOSH_RAZORPAY_BASE_URL: razorpay.url,
      });
      await harness.app.listen({ port, host: '127.0.0.1' });
      browser = await launchBrowser();
      context = browser.context;
    });

    afterAll(async () => {
      await browser?.close();
      harness?.app.server.closeAllConnections();
      await harness?.close();
    });

    for (const provider of PROVIDERS) {
      describe(provider.name, () => {
        let merchant: TestAccount;

        beforeAll(async () => {
          merchant = await harness.liveKey(await harness.merchant(`${provider.name} notebook shop`));
          const { methods } = harness.container.services;
          const enabled = {
            ...(await methods.get(merchant.id, 'test')),
            netbanking: { HDFC: 'HDFC Bank' },
            wallet: { phonepe: 'PhonePe' },
          };
          await harness.container.db.transaction((tx) => methods.set(tx, merchant.id, 'live', enabled));
          const added = await harness.request('POST', '/v1/connector-accounts/', {
            auth: merchant,
            json: { connector: provider.name, credentials: provider.credentials },
          });
          expect(added.statusCode, added.body).toBe(200);
          provider.setWebhookUrl(added.json().data.webhook_url);
        });

        const CASES = [
          { method: 'netbanking', overrides: { bank: 'HDFC' }, choice: 'success', status: 'captured' },
          {
            method: 'wallet',
            overrides: { method: 'wallet', bank: undefined, wallet: 'phonepe' },
            choice: 'success',
            status: 'captured',
          },
          { method: 'netbanking', overrides: { bank: 'HDFC' }, choice: 'failure', status: 'failed' },
        ] as const;

        for (const testCase of CASES) {
          it(`${testCase.method} → the provider's ${testCase.choice} → ${testCase.status}`, async () => {
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

            const page = await context.newPage();
            try {
              const returned = merchantReturn(page, RETURN_URL);
              if (next[0].action === 'html_form') await page.setContent(next[0].html_content);
              else await page.goto(next[0].url);
              await page.waitForURL(`${provider.origin.replace(/\/pg$/, '')}/bank/**`);
              if (testCase.choice === 'success') {
                await saveScreenshot(page, `${provider.name}-${testCase.method}-bank-${kind}.png`);
              }
              await page.click(`button[value="${testCase.choice}"]`);
              const fields = await returned;
              expect(fields).toMatchObject({
                payment_id: paymentId,
                order_id: orderId,
                status: testCase.status,
              });
              const secret = await harness.container.services.payments.returnSigningSecret(
                merchant.id,
                'live',
              );
              expect(verifyReturn(secret, fields as never)).toBe(true);
              await expect(page.locator('#thanks').textContent()).resolves.toBe('Thank you');
            } finally {
              await page.close();
            }
            const payment = (
              await harness.request('GET', `/v1/payments/${paymentId}/`, { auth: merchant })
            ).json().data;
            expect(payment.status).toBe(testCase.status);
            if (testCase.status === 'failed') expect(payment.error_code).toBe(provider.decline);
          });
        }
      });
    }
  });
}
