import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upiMethods } from '../../src/modules/methods/methods.js';
import { auditPage, BROWSER_TEST_TIMEOUT_MS } from '../helpers/browser.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { decodeQr } from '../helpers/qr.js';
import { type ShopInBrowser, startShopInBrowser } from '../helpers/shop-in-browser.js';

/**
 * The database the walks run on: the pages and what they do do not depend on it (every UPI flow,
 * choice and deadline is proven over HTTP on both databases in test/integration/payments-upi*.test.ts),
 * and Chromium is the costliest work in the suite (docs/testing.md, "Browser tests on two cores").
 */
const RENDERED_ON = 'pglite';

/**
 * UPI in Debian's headless Chromium: the example shop offers UPI, the browser lands on Kosh's UPI
 * page (the QR code on a wide screen, the "Open UPI app" button on a phone), the customer pays in
 * the sandbox UPI app in a second page (as on a second device), and Kosh's page, which the customer
 * never touches again, follows the payment and posts the signed return to the shop.
 */
for (const kind of DATABASE_KINDS.filter((candidate) => candidate === RENDERED_ON)) {
  describe(`UPI in a real browser [${kind}]`, { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
    let context: BrowserContext;
    let shop: { url: string; close(): Promise<void> };
    let koshUrl: string;
    let setup: ShopInBrowser;

    beforeAll(async () => {
      // The real clock: the page counts down to expires_at in the browser's own time.
      setup = await startShopInBrowser(kind, {
        realClock: true,
        // Collect too, as a partner would turn it on (PATCH …/methods/ {"upi": {"collect": true}}).
        prepare: async (h, merchant) => {
          const { methods } = h.container.services;
          const current = await methods.get(merchant.id, 'test');
          await methods.set(h.container.db, merchant.id, 'test', { ...current, upi: upiMethods(true, true) });
        },
      });
      ({ context, shop, koshUrl } = setup);
    });

    afterAll(async () => {
      await setup?.close();
    });

    /** The shop's UPI checkout, at the width given: it lands on Kosh's UPI page. */
    async function checkout(page: Page, button: '#pay-upi' | '#pay-upi-collect'): Promise<string> {
      await page.goto(shop.url);
      if (button === '#pay-upi-collect') await page.fill('#vpa', 'asha@okaxis');
      await page.click(button);
      await page.waitForURL(`${koshUrl}/v1/payments/*/authentication/`);
      await expect(page.locator('h1').textContent()).resolves.toMatch(
        /^Pay ₹50\.00 to Notebook Shop( \d+)? with UPI$/,
      );
      await expect(page.locator('#state').textContent()).resolves.toBe('Waiting for your payment…');
      await expect(page.locator('#remaining').textContent()).resolves.toMatch(/^(10:00|9:[0-5]\d)$/);
      return new URL(page.url()).pathname.split('/')[3] as string;
    }

    /** The customer's UPI app, in a second page: chooses success. */
    async function payInApp(simulatorUrl: string, audited: boolean): Promise<void> {
      const app = await context.newPage();
      try {
        await app.goto(simulatorUrl);
        await expect(app.locator('h1').textContent()).resolves.toBe('Kosh sandbox UPI app');
        await expect(app.locator('#amount').textContent()).resolves.toBe('₹50.00');
        if (audited) await auditPage(app, 'upi-simulator');
        await app.locator('button[name="choice"][value="success"]').click();
        await expect(app.locator('#result').textContent()).resolves.toContain('The payment is now captured');
      } finally {
        await app.close();
      }
    }

    /** The shop's return page, reached by Kosh's UPI page alone: the signed return, verified. */
    async function returned(page: Page, paymentId: string): Promise<void> {
      await page.waitForURL(`${shop.url}/return`);
      await expect(page.locator('#payment-id').textContent()).resolves.toBe(paymentId);
      await expect(page.locator('#payment-status').textContent()).resolves.toBe('captured');
      await expect(page.locator('#order-status').textContent()).resolves.toBe('paid');
      await expect(page.locator('#signature').textContent()).resolves.toBe('verified');
    }

    it('shows the QR code on a wide screen and the app button on a phone, follows a payment made in a second page, and returns signed', async () => {
      const page = await context.newPage();
      try {
        await page.setViewportSize({ width: 1280, height: 900 });
        const paymentId = await checkout(page, '#pay-upi');
        const simulator = `${koshUrl}/v1/payments/${paymentId}/upi-simulator/`;
        // In test mode the QR code and the button open the sandbox UPI app (an https link in production).
        const qr = page.locator('.qr img');
        const openApp = page.locator('#open-app');
        expect(decodeQr((await qr.getAttribute('src')) as string)).toBe(simulator);
        await expect(openApp.getAttribute('href')).resolves.toBe(simulator);
        const shown = async (width: number) => {
          const wide = width > 640;
          await expect(qr.isVisible(), `QR at ${width} px`).resolves.toBe(wide);
          await expect(openApp.isVisible(), `app button at ${width} px`).resolves.toBe(!wide);
        };
        await shown(1280);
        await auditPage(page, 'upi-page', shown);
        await page.setViewportSize({ width: 1280, height: 900 });
        // A phone held sideways (a touch screen wider than 640 px): the app button, beside the QR.
        const sideways = await context.browser()?.newContext({
          viewport: { width: 915, height: 412 },
          hasTouch: true,
          isMobile: true,
        });
        try {
          const phone = await (sideways as typeof context).newPage();
          await phone.goto(page.url());
          await expect(phone.locator('#open-app').isVisible()).resolves.toBe(true);
          await expect(phone.locator('.qr img').isVisible()).resolves.toBe(true);
          await expect(phone.locator('time').textContent()).resolves.toMatch(/^\d\d:\d\d IST$/);
        } finally {
          await sideways?.close();
        }

        await payInApp(simulator, true);
        await returned(page, paymentId);
      } finally {
        await page.close();
      }
    });

    it('follows a collect request approved in the sandbox UPI app, on a phone', async () => {
      const page = await context.newPage();
      try {
        await page.setViewportSize({ width: 375, height: 812 });
        const paymentId = await checkout(page, '#pay-upi-collect');
        await expect(page.locator('main').textContent()).resolves.toContain(
          'We sent a payment request to as**@okaxis',
        );
        // No QR code and no app button: the request is in the customer's UPI app already.
        await expect(page.locator('.qr img').count()).resolves.toBe(0);
        await expect(page.locator('#open-app').count()).resolves.toBe(0);
        await auditPage(page, 'upi-collect');
        const simulator = await page
          .locator('a', { hasText: 'Open the sandbox UPI app' })
          .getAttribute('href');
        expect(simulator).toBe(`${koshUrl}/v1/payments/${paymentId}/upi-simulator/`);

        await payInApp(simulator as string, false);
        await returned(page, paymentId);
      } finally {
        await page.close();
      }
    });
  });
}
