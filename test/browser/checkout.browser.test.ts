import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditPage, BROWSER_TEST_TIMEOUT_MS, overflowWidth } from '../helpers/browser.js';
import { CUSTOMER } from '../helpers/checkout.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import type { Harness, TestAccount } from '../helpers/harness.js';
import { createOrder } from '../helpers/payments.js';
import { decodeQr } from '../helpers/qr.js';
import { type ShopInBrowser, startShopInBrowser } from '../helpers/shop-in-browser.js';

/**
 * The database the walks run on: the page and what it does do not depend on it (every choice,
 * refusal and state is proven over HTTP on both databases in test/integration/checkout-page.test.ts),
 * and Chromium is the costliest work in the suite (docs/testing.md, "Browser tests on two cores").
 */
const RENDERED_ON = 'pglite';

/** A phone's browser, as Kosh's page tells a phone from a desktop (the UPI flow it starts). */
const PHONE_USER_AGENT =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36';

/** Presses Tab until `selector` has the focus; fails when 60 presses do not reach it. */
async function tabTo(page: Page, selector: string): Promise<void> {
  for (let press = 0; press < 60; press++) {
    await page.keyboard.press('Tab');
    const focused = `document.activeElement?.matches(${JSON.stringify(selector)}) ?? false`;
    if (await page.evaluate<boolean>(focused)) return;
  }
  throw new Error(`${selector} cannot be reached with the Tab key`);
}

/**
 * Kosh Checkout in Debian's headless Chromium: the example shop's "Pay with Kosh Checkout" button
 * opens a session, the customer gives their details and pays by UPI (in the sandbox UPI app, as on
 * a second device), by an html_form bank, by a redirect bank found with the search, or by a
 * wallet; a failed attempt comes back to the page and a second one pays; the shop receives the
 * signed return each time. An expired link refuses.
 */
for (const kind of DATABASE_KINDS.filter((candidate) => candidate === RENDERED_ON)) {
  describe(`Kosh Checkout in a real browser [${kind}]`, { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
    let harness: Harness;
    let context: BrowserContext;
    let shop: { url: string; close(): Promise<void> };
    let koshUrl: string;
    let merchant: TestAccount;
    let setup: ShopInBrowser;

    beforeAll(async () => {
      // The real clock: the UPI page counts down to expires_at in the browser's own time.
      setup = await startShopInBrowser(kind, { realClock: true });
      ({ harness, context, shop, koshUrl, merchant } = setup);
    });

    afterAll(async () => {
      await setup?.close();
    });

    /** The shop's Kosh Checkout button, then the customer's details on Kosh's page. */
    async function openCheckout(page: Page): Promise<string> {
      await page.goto(shop.url);
      await page.click('#pay-hosted');
      await page.waitForURL(`${koshUrl}/checkout/*/`);
      await expect(page.locator('.merchant').textContent()).resolves.toMatch(/^Notebook Shop/);
      await expect(page.locator('h1').textContent()).resolves.toBe('₹50.00');
      await page.fill('#name', CUSTOMER.name);
      await page.fill('#email', CUSTOMER.email);
      await page.fill('#contact', CUSTOMER.contact);
      return new URL(page.url()).pathname.split('/')[2] as string;
    }

    /** The sandbox bank or wallet page: the customer's choice there. */
    async function bankChooses(page: Page, choice: 'success' | 'failure', instrument: string): Promise<void> {
      await expect(page.locator('#instrument').textContent()).resolves.toBe(instrument);
      await page.locator(`button[name="choice"][value="${choice}"]`).click();
    }

    /** The shop's return page: the signed return, verified, and the status the shop fetched. */
    async function returned(page: Page, status = 'captured'): Promise<string> {
      await page.waitForURL(`${shop.url}/return`);
      await expect(page.locator('#signature').textContent()).resolves.toBe('verified');
      await expect(page.locator('#payment-status').textContent()).resolves.toBe(status);
      await expect(page.locator('#order-status').textContent()).resolves.toBe('paid');
      return (await page.locator('#payment-id').textContent()) as string;
    }

    async function session(id: string) {
      const response = await harness.request('GET', `/v1/checkout/sessions/${id}/`, { auth: merchant });
      return response.json().data as { status: string; payment_id: string | null; order_id: string };
    }

    it('pays by UPI: the QR code on a wide screen, paid in the sandbox UPI app, back to the shop signed', async () => {
      const page = await context.newPage();
      try {
        const id = await openCheckout(page);
        await expect(page.locator('#pay-upi').isChecked()).resolves.toBe(true);
        await auditPage(page, 'checkout-page');
        // The narrowest phones still in use: nothing wider than the screen at 320 px either.
        await page.setViewportSize({ width: 320, height: 640 });
        expect(await overflowWidth(page), 'the page is wider than 320 px').toBeLessThanOrEqual(0);
        await page.setViewportSize({ width: 1280, height: 900 });
        // biome-ignore lint/performance/useDomNodeTextContent: the visible words (CSS hides the other screen's)
        await expect(page.locator('label[for="pay-upi"]').innerText()).resolves.toBe(
          'Scan a QR code with any UPI app',
        );
        await page.click('#pay');
        await page.waitForURL(`${koshUrl}/v1/payments/*/authentication/`);
        const paymentId = new URL(page.url()).pathname.split('/')[3] as string;
        const simulator = decodeQr((await page.locator('.qr img').getAttribute('src')) as string);
        expect(simulator).toBe(`${koshUrl}/v1/payments/${paymentId}/upi-simulator/`);
        const app = await context.newPage();
        try {
          await app.goto(simulator as string);
          await app.locator('button[name="choice"][value="success"]').click();
          await expect(app.locator('#result').textContent()).resolves.toContain('captured');
        } finally {
          await app.close();
        }
        // Kosh's UPI page follows the payment by itself and posts the signed return.
        expect(await returned(page)).toBe(paymentId);
        expect(await session(id)).toMatchObject({ status: 'completed', payment_id: paymentId });
        // The link opened again: the order is paid, and the way back to the shop.
        await page.goto(`${koshUrl}/checkout/${id}/`);
        await expect(page.locator('h2').textContent()).resolves.toBe('This order is paid');
        await auditPage(page, 'checkout-paid');
        await page.setViewportSize({ width: 1280, height: 900 });
        await page.click('#return');
        expect(await returned(page)).toBe(paymentId);
      } finally {
        await page.close();
      }
    });

    it('pays by UPI on a phone with the keyboard alone: the app button, the sandbox UPI app, back to the shop signed', async () => {
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Emulation.setUserAgentOverride', { userAgent: PHONE_USER_AGENT });
      try {
        await page.setViewportSize({ width: 375, height: 812 });
        await page.goto(shop.url);
        await page.click('#pay-hosted');
        await page.waitForURL(`${koshUrl}/checkout/*/`);
        // From here on only the keyboard: Tab to each control, type, Enter.
        await tabTo(page, '#name');
        await page.keyboard.type(CUSTOMER.name);
        await tabTo(page, '#email');
        await page.keyboard.type(CUSTOMER.email);
        await tabTo(page, '#contact');
        await page.keyboard.type(CUSTOMER.contact);
        await tabTo(page, '#pay-upi');
        await page.keyboard.press('Space');
        await expect(page.locator('#pay-upi').isChecked()).resolves.toBe(true);
        await tabTo(page, '#pay');
        await page.keyboard.press('Enter');
        await page.waitForURL(`${koshUrl}/v1/payments/*/authentication/`);
        const paymentId = new URL(page.url()).pathname.split('/')[3] as string;
        // A phone starts the intent flow, and Kosh's UPI page shows the app button, not the QR code.
        const payment = await harness.request('GET', `/v1/payments/${paymentId}/`, { auth: merchant });
        expect(payment.json().data.upi).toMatchObject({ flow: 'intent' });
        await expect(page.locator('#open-app').isVisible()).resolves.toBe(true);
        await expect(page.locator('.qr img').isVisible()).resolves.toBe(false);
        await tabTo(page, '#open-app');
        const link = await page.locator('#open-app').getAttribute('href');
        expect(link).toBe(`${koshUrl}/v1/payments/${paymentId}/upi-simulator/`);
        // The customer's UPI app (the sandbox's, as on a second device), also by keyboard.
        const app = await context.newPage();
        try {
          await app.goto(link as string);
          await tabTo(app, 'button[name="choice"][value="success"]');
          await app.keyboard.press('Enter');
          await expect(app.locator('#result').textContent()).resolves.toContain('captured');
        } finally {
          await app.close();
        }
        expect(await returned(page)).toBe(paymentId);
      } finally {
        await cdp.detach();
        await page.close();
      }
    });

    it('pays by an html_form bank (ICICI) on a phone', async () => {
      const page = await context.newPage();
      try {
        await page.setViewportSize({ width: 375, height: 812 });
        await openCheckout(page);
        // biome-ignore lint/performance/useDomNodeTextContent: the visible words (CSS hides the other screen's)
        await expect(page.locator('label[for="pay-upi"]').innerText()).resolves.toBe(
          'Pay with a UPI app on this phone',
        );
        await page.check('#bank-ICIC');
        await page.click('#pay');
        // Kosh's own step to the bank: an auto-submitted GET with the bank's fields.
        await page.waitForURL(
          `${koshUrl}/v1/payments/*/authentication/?paymentMode=NET_BANKING&bankCode=ICIC`,
        );
        await bankChooses(page, 'success', 'ICICI Bank');
        await returned(page);
      } finally {
        await page.close();
      }
    });

    it('finds a redirect bank (HDFC) with the search box and pays by it', async () => {
      const page = await context.newPage();
      try {
        await openCheckout(page);
        await page.fill('#q', 'hdfc');
        await expect(page.locator('#bank-HDFC').isVisible()).resolves.toBe(true);
        await expect(page.locator('#bank-ICIC').isVisible()).resolves.toBe(false);
        await page.check('#bank-HDFC');
        await page.click('#pay');
        await page.waitForURL(`${koshUrl}/v1/payments/*/authentication/`);
        await bankChooses(page, 'success', 'HDFC Bank');
        await returned(page);
      } finally {
        await page.close();
      }
    });

    it('takes a failed attempt back to the page, where a wallet then pays: the order is captured once', async () => {
      const page = await context.newPage();
      try {
        const id = await openCheckout(page);
        await page.check('#bank-HDFC');
        await page.click('#pay');
        await page.waitForURL(`${koshUrl}/v1/payments/*/authentication/`);
        await bankChooses(page, 'failure', 'HDFC Bank');
        await page.waitForURL(`${koshUrl}/checkout/${id}/`);
        await expect(page.locator('#last-attempt').textContent()).resolves.toContain(
          'Your payment by HDFC Bank did not go through.',
        );
        // The details typed for the first attempt are still there.
        await expect(page.locator('#email').inputValue()).resolves.toBe(CUSTOMER.email);
        await auditPage(page, 'checkout-failed');
        await page.setViewportSize({ width: 1280, height: 900 });
        await page.check('#wallet-payzapp');
        await page.click('#pay');
        await page.waitForURL(`${koshUrl}/v1/payments/*/authentication/`);
        await bankChooses(page, 'success', 'PayZapp');
        const paid = await returned(page);
        const { order_id } = await session(id);
        const payments = await harness.request('GET', `/v1/orders/${order_id}/payments/`, { auth: merchant });
        const statuses = payments
          .json()
          .data.map((payment: { id: string; status: string }) => payment.status);
        expect(statuses.sort()).toEqual(['captured', 'failed']);
        expect(await session(id)).toMatchObject({ status: 'completed', payment_id: paid });
      } finally {
        await page.close();
      }
    });

    it('works with script off: the bank search reloads the page, a redirect bank pays, the return posts by its button', async () => {
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Emulation.setScriptExecutionDisabled', { value: true });
      try {
        await page.goto(shop.url);
        await page.click('#pay-hosted');
        await page.waitForURL(`${koshUrl}/checkout/*/`);
        // The search box submits its own GET form: the server narrows the list.
        await page.fill('#q', 'hdfc');
        await page.press('#q', 'Enter');
        await page.waitForURL(/\/checkout\/cs_\w+\/\?q=hdfc#banks$/);
        await expect(page.locator('#bank-ICIC').count()).resolves.toBe(0);
        await page.fill('#name', CUSTOMER.name);
        await page.fill('#email', CUSTOMER.email);
        await page.fill('#contact', CUSTOMER.contact);
        await page.check('#bank-HDFC');
        await page.click('#pay');
        await page.waitForURL(`${koshUrl}/v1/payments/*/authentication/`);
        await bankChooses(page, 'success', 'HDFC Bank');
        // Without script the signed return waits for the customer's click.
        await page.getByRole('button', { name: 'Continue to the merchant' }).click();
        await returned(page);
      } finally {
        await cdp.detach();
        await page.close();
      }
    });

    it('refuses an expired link with a clear page and no form', async () => {
      const orderId = await createOrder(harness, merchant);
      const created = await harness.request('POST', '/v1/checkout/sessions/', {
        auth: merchant,
        json: { order_id: orderId, return_url: `${shop.url}/return` },
      });
      const { id, url } = created.json().data as { id: string; url: string };
      // The session's time is up (the real clock runs here; its deadline is moved instead).
      await harness.container.db.query(
        `UPDATE checkout_sessions SET created_at = now() - interval '31 minutes', expires_at = now() - interval '1 minute' WHERE id = $1`,
        [id],
      );
      const page = await context.newPage();
      try {
        const response = await page.goto(url);
        expect(response?.status()).toBe(410);
        await expect(page.locator('h2').textContent()).resolves.toBe('This payment link has expired');
        await expect(page.locator('form').count()).resolves.toBe(0);
        await auditPage(page, 'checkout-expired');
        expect(await session(id)).toMatchObject({ status: 'expired', payment_id: null });
      } finally {
        await page.close();
      }
    });
  });
}
