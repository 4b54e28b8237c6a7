import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pLimit from 'p-limit';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_TIMEOUT_MS, saveScreenshot } from '../helpers/browser.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import type { Harness, TestAccount } from '../helpers/harness.js';
import { createPayment } from '../helpers/payments.js';
import { type ShopInBrowser, startShopInBrowser } from '../helpers/shop-in-browser.js';
import { drain } from '../helpers/webhook-events.js';

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
  { value: 'success', button: 'Success', payment: 'captured', order: 'paid', error: '—' },
  { value: 'failure', button: 'Failure', payment: 'failed', order: 'attempted', error: 'payment_declined' },
  { value: 'cancel', button: 'Cancel', payment: 'failed', order: 'attempted', error: 'payment_cancelled' },
  // The outcomes real banks produce: the customer is back while the bank has not answered yet.
  {
    value: 'pending_success',
    button: 'Pending, then success',
    payment: 'pending',
    order: 'attempted',
    error: '—',
  },
  {
    value: 'pending_failure',
    button: 'Pending, then failure',
    payment: 'pending',
    order: 'attempted',
    error: '—',
  },
  { value: 'late_success', button: 'Late success', payment: 'pending', order: 'attempted', error: '—' },
] as const;

/** Every choice on an html_form bank and a redirect wallet; the plain three on the other codes too. */
const WALKED = new Set(['ICIC', 'payzapp']);

/**
 * Pages walked at once. Every page costs Chromium processes on two cores shared with two other test
 * files; at vitest's default of five, a walk that takes 3 s alone took up to 19 s while the CLI and
 * dashboard files ran beside it, and now and then more than the test's 30 s (docs/testing.md).
 * The bound is the file's own: vitest's `maxConcurrency` is fixed once per worker process, and its
 * workers run file after file.
 */
const PAGES_AT_ONCE = 3;

/** A merchant's endpoint on this machine (an IPv6 address too); `answer` gets the drained request. */
async function merchantEndpoint(
  host: '127.0.0.1' | '::1',
  answer: (request: http.IncomingMessage, response: http.ServerResponse) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => answer(request, response));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: host === '::1' ? `http://[::1]:${port}` : `http://${host}:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

for (const kind of DATABASE_KINDS) {
  // The cases are independent payments, each in its own page: they run at once (the browser and
  // the shop mostly wait: the shop's one-second auto-submit, the bank page, the return).
  describe.concurrent(`payments in a real browser [${kind}]`, { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
    let harness: Harness;
    let context: BrowserContext;
    let shop: { url: string; close(): Promise<void> };
    let koshUrl: string;
    let merchant: TestAccount;
    let setup: ShopInBrowser;

    beforeAll(async () => {
      setup = await startShopInBrowser(kind);
      ({ harness, context, shop, koshUrl, merchant } = setup);
    });

    afterAll(async () => {
      await setup?.close();
    });

    const pages = pLimit(PAGES_AT_ONCE);
    /** A walk in a page of its own, once one of the file's pages is free. */
    const walk = (steps: (page: Page) => Promise<void>) =>
      pages(async () => {
        const page = await context.newPage();
        try {
          await steps(page);
        } finally {
          await page.close();
        }
      });

    it('fulfils the order once while its order.paid webhook is delivered three times', () =>
      walk(async (page) => {
        await page.goto(shop.url);
        await page.selectOption('#bank', 'ICIC');
        await page.click('#pay-netbanking');
        await page.waitForURL(`${koshUrl}/v1/payments/*/authentication/?*`);
        await page.locator('button[name="choice"][value="success"]').click();
        await page.waitForURL(`${shop.url}/return`);
        await expect(page.locator('#payment-status').textContent()).resolves.toBe('captured');
        const orderId = (await page.locator('#order-id').textContent()) as string;

        // Kosh delivers the shop's order.paid webhook, then the merchant asks for it twice more.
        await drain(harness);
        const events = await harness.request('GET', '/v1/events/?type=order.paid&limit=100', {
          auth: merchant,
        });
        const event = events
          .json()
          .data.find((found: { data: { order: { id: string } } }) => found.data.order.id === orderId);
        expect(event).toBeDefined();
        for (let again = 0; again < 2; again++) {
          const redelivered = await harness.request('POST', `/v1/events/${event.id}/redeliver/`, {
            auth: merchant,
            json: {},
          });
          expect(redelivered.statusCode, redelivered.body).toBe(200);
          await drain(harness);
        }
        const state = (await (await fetch(`${shop.url}/fulfilments`)).json()) as {
          fulfilled: Record<string, { event: string }>;
          shipments: Record<string, number>;
          deliveries: Record<string, number>;
        };
        expect(state.deliveries[event.id]).toBe(3);
        expect(state.shipments[orderId]).toBe(1);
        expect(state.fulfilled[orderId]?.event).toBe(event.id);
      }));

    // The return's form leaves Kosh for the merchant, whose endpoint may redirect the browser on to
    // another of its hosts (post, then redirect), or be an IPv6 address: the page's CSP lets both through.
    if (kind === 'pglite') {
      it('returns the customer through a merchant endpoint that redirects to another origin, and to an IPv6 address', () =>
        walk(async (page) => {
          const landing = await merchantEndpoint('127.0.0.1', (_request, response) => {
            response.writeHead(200, { 'content-type': 'text/html' }).end('<h1 id="landed">Thank you</h1>');
          });
          const redirect = (_request: http.IncomingMessage, response: http.ServerResponse) => {
            response.writeHead(303, { location: `${landing.url}/done` }).end();
          };
          const endpoints = [
            await merchantEndpoint('127.0.0.1', redirect),
            await merchantEndpoint('::1', redirect),
          ];
          const blocked: string[] = [];
          page.on('console', (message) => {
            if (message.text().includes('Content Security Policy')) blocked.push(message.text());
          });
          try {
            for (const endpoint of endpoints) {
              const { paymentId } = await createPayment(harness, merchant, {
                return_url: `${endpoint.url}/return`,
              });
              await page.goto(`${koshUrl}/v1/payments/${paymentId}/authentication/`);
              await page.locator('button[name="choice"][value="success"]').click();
              await page.waitForURL(`${landing.url}/done`);
              await expect(page.locator('#landed').textContent()).resolves.toBe('Thank you');
            }
            expect(blocked).toEqual([]);
          } finally {
            await Promise.all([landing, ...endpoints].map((endpoint) => endpoint.close()));
          }
        }));
    }

    for (const testCase of CASES) {
      // The outcomes are the payment core's, proven over HTTP on both databases: PostgreSQL walks
      // each code's success and failure, PGlite every choice (docs/testing.md).
      const choices =
        kind === 'postgres' ? CHOICES.slice(0, 2) : WALKED.has(testCase.code) ? CHOICES : CHOICES.slice(0, 3);
      for (const choice of choices) {
        it(`${testCase.code.toUpperCase()} (${testCase.action}) → ${choice.button}`, () =>
          walk(async (page) => {
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

            if (choice.value === 'success' && testCase.code === 'ICIC') {
              await saveScreenshot(page, `sandbox-bank-${kind}.png`, { fullPage: true });
              await page.setViewportSize({ width: 375, height: 800 });
              await saveScreenshot(page, `sandbox-bank-375-${kind}.png`, { fullPage: true });
            }
            const button = page.locator(`button[name="choice"][value="${choice.value}"]`);
            await expect(button.textContent()).resolves.toBe(choice.button);
            await button.click();
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
          }));
      }
    }
  });
}
