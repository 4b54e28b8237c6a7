import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapSandbox } from '../../src/cli/sandbox-credentials.js';
import {
  BROWSER_TEST_TIMEOUT_MS,
  type LaunchedBrowser,
  launchBrowser,
  STEP_TIMEOUT_MS,
  saveScreenshot,
} from '../helpers/browser.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { basicAuth, createHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { proprietorBody } from '../helpers/onboarding.js';
import { choose, createOrder, createPayment, openPage } from '../helpers/payments.js';
import { drain } from '../helpers/webhook-events.js';
import { TestReceiver } from '../helpers/webhook-receiver.js';

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const WIDTHS = [1280, 375] as const;
/**
 * The database the pages are photographed and audited on, and the one the API reference is tried
 * on. The markup does not depend on the database, and Chromium's rendering is the costliest work in
 * the suite: doing it twice only lengthened the run and starved the other browser tests of CPU.
 */
const RENDERED_ON = 'pglite';

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * The dashboard in Debian's headless Chromium on both databases: the sandbox merchant's login from
 * sandbox-credentials.json, a payment made through the API found by filters and search, its detail
 * with events and deliveries, Resend, Refund, key roll and revoke, the CSV export, and the partner's
 * pages. On one database (RENDERED_ON) every page is also photographed at 1280 and 375 px and
 * checked with axe-core, and the API reference's "Try it out" is run.
 */
for (const kind of DATABASE_KINDS) {
  describe(`the dashboard in a real browser [${kind}]`, { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
    let harness: Harness;
    let browser: LaunchedBrowser;
    let page: Page;
    let base: string;
    let dataDir: string;
    let receiver: TestReceiver;
    let sandbox: {
      merchant: {
        account_id: string;
        api_key: string;
        secret_key: string;
        dashboard: { email: string; password: string };
      };
      partner: {
        account_id: string;
        api_key: string;
        secret_key: string;
        dashboard: { email: string; password: string };
      };
    };
    let merchant: TestAccount;
    let partner: TestAccount;
    let paymentId: string;
    const photographed: string[] = [];

    /** Screenshots at both widths and an axe-core audit: no serious or critical violation. */
    async function check(name: string): Promise<void> {
      photographed.push(name);
      if (kind !== RENDERED_ON) return;
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: width === 375 ? 812 : 900 });
        await saveScreenshot(page, `dashboard-${name}-${width}-${kind}.png`, { fullPage: true });
        await page.evaluate(AXE_SOURCE);
        const violations = (await page.evaluate(async () => {
          const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe;
          return (await axe.run()).violations;
        })) as AxeViolation[];
        const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        expect(
          serious.map(
            (v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
          ),
          `${name} at ${width} px`,
        ).toEqual([]);
        // Nothing wider than the window at 375 px: the page scrolls down, not sideways (tables scroll in their box).
        if (width === 375) {
          const overflow = await page.evaluate(() => {
            const view = globalThis as unknown as {
              document: { documentElement: { scrollWidth: number } };
              innerWidth: number;
            };
            return view.document.documentElement.scrollWidth - view.innerWidth;
          });
          expect(overflow, `${name} is wider than 375 px`).toBeLessThanOrEqual(0);
        }
      }
      await page.setViewportSize({ width: 1280, height: 900 });
    }

    async function logIn(login: { email: string; password: string }): Promise<void> {
      await page.goto(`${base}/dashboard/`);
      await page.waitForURL(`${base}/dashboard/login/`);
      await page.fill('input[name="email"]', login.email);
      await page.fill('input[name="password"]', login.password);
      await page.click('button:has-text("Log in")');
      await page.waitForURL(`${base}/dashboard/`);
    }

    beforeAll(async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-dashboard-'));
      const { freePort } = await import('../helpers/process.js');
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      harness = await createHarness(kind, { KOSH_PUBLIC_URL: base, KOSH_DATA_DIR: dataDir });
      const created = await bootstrapSandbox(harness.container);
      expect(created?.file).toBe(path.join(dataDir, 'sandbox-credentials.json'));
      sandbox = JSON.parse(fs.readFileSync(path.join(dataDir, 'sandbox-credentials.json'), 'utf8'));
      merchant = {
        id: sandbox.merchant.account_id,
        credentials: { ...sandbox.merchant, mode: 'test' },
        auth: basicAuth(sandbox.merchant),
      };
      partner = {
        id: sandbox.partner.account_id,
        credentials: { ...sandbox.partner, mode: 'test' },
        auth: basicAuth(sandbox.partner),
      };
      await harness.app.listen({ port, host: '127.0.0.1' });
      receiver = await TestReceiver.start(() => harness.clock.now());
      const endpoint = await harness.request('POST', '/v1/webhooks/', {
        auth: merchant,
        json: { url: receiver.url('/hooks'), enabled_events: ['*'] },
      });
      expect(endpoint.statusCode, endpoint.body).toBe(200);
      // A payment made through the API, captured by the sandbox bank, its events delivered.
      const orderId = await createOrder(harness, merchant, 5000);
      paymentId = (await createPayment(harness, merchant, { email: 'meera@example.com' }, orderId)).paymentId;
      expect(
        (await choose(harness, paymentId, await openPage(harness, paymentId), 'success')).statusCode,
      ).toBe(200);
      for (const email of ['ravi@example.com', 'sara@example.com']) {
        const other = await createPayment(harness, merchant, { email });
        await choose(harness, other.paymentId, await openPage(harness, other.paymentId), 'failure');
      }
      await drain(harness);
      browser = await launchBrowser();
      page = await browser.context.newPage();
    });

    afterAll(async () => {
      await browser?.close();
      await receiver?.close();
      await harness?.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    // Defined for one database only (not skipped on the other): the reference page is the same.
    if (kind === RENDERED_ON)
      it(
        'runs "Try it out" on /docs from an address other than KOSH_PUBLIC_URL',
        async () => {
          // KOSH_PUBLIC_URL says 127.0.0.1; the reference is opened at localhost.
          const docs = base.replace('127.0.0.1', 'localhost');
          const reference = await browser.context.newPage();
          try {
            // Swagger UI builds the page in the browser from a 1.4 MB script and the whole OpenAPI
            // document it fetches: a second on an idle machine, far more beside two other test files
            // and their browsers. Its speed is not what this test checks; the document's answer is.
            const document = reference.waitForResponse((response) => response.url().endsWith('/docs/json'), {
              timeout: 3 * STEP_TIMEOUT_MS,
            });
            await reference.goto(`${docs}/docs/`, { timeout: 3 * STEP_TIMEOUT_MS });
            await expect(reference.title()).resolves.toBe('Kosh API reference');
            expect((await document).status()).toBe(200);
            await reference.locator('.btn.authorize').waitFor({ timeout: 3 * STEP_TIMEOUT_MS });
            await reference.click('.btn.authorize');
            await reference.fill('.auth-container input[type=text]', sandbox.merchant.api_key);
            await reference.fill('.auth-container input[type=password]', sandbox.merchant.secret_key);
            await reference.click('.auth-btn-wrapper .btn.modal-btn.auth.authorize');
            await reference.click('.btn-done');
            await reference.click('[id*="listPaymentMethods"] .opblock-summary');
            await reference.click('button.try-out__btn');
            await reference.click('button.execute');
            const status = reference.locator('.live-responses-table .response .response-col_status').first();
            await status.waitFor();
            await expect(status.textContent()).resolves.toBe('200');
            await expect(reference.locator('.request-url pre').first().textContent()).resolves.toBe(
              `${docs}/v1/payments/methods/`,
            );
          } finally {
            await reference.close();
          }
        },
        2 * BROWSER_TEST_TIMEOUT_MS,
      );

    it('logs the sandbox merchant in from sandbox-credentials.json; the home page shows the day’s volume', async () => {
      await page.goto(`${base}/dashboard/login/`);
      await check('login');
      await logIn(sandbox.merchant.dashboard);
      await expect(page.locator('[data-mode]').getAttribute('data-mode')).resolves.toBe('test');
      await expect(page.locator('[data-stat="today-amount"]').textContent()).resolves.toBe('₹50.00');
      await expect(page.locator('[data-stat="success-rate"]').textContent()).resolves.toBe('33.3 %');
      const cookies = await browser.context.cookies(`${base}/dashboard/`);
      const session = cookies.find((cookie) => cookie.name === 'kosh_session');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/dashboard/' });
      await check('home');
    });

    it('finds the payment by filters and search, and exports the filtered list as the API lists it', async () => {
      await page.click('nav >> text=Payments');
      await expect(page.locator(`a:has-text("${paymentId}")`).count()).resolves.toBe(1);
      await check('payments');
      await page.selectOption('select[name="status"]', 'captured');
      await page.click('button:has-text("Apply")');
      await page.waitForURL(/status=captured/);
      await expect(page.locator('tbody tr').count()).resolves.toBe(1);
      await page.fill('input[name="q"]', 'sara@example.com');
      await page.selectOption('select[name="status"]', '');
      await page.click('button:has-text("Apply")');
      await page.waitForURL(/q=sara/);
      await expect(page.locator('tbody tr').count()).resolves.toBe(1);
      await expect(page.locator('tbody').textContent()).resolves.toContain('sara@example.com');

      await page.goto(`${base}/dashboard/payments/?status=failed`);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('text=Export CSV')]);
      const csv = fs
        .readFileSync((await download.path()) as string, 'utf8')
        .trim()
        .split('\r\n');
      const api = await harness.request('GET', '/v1/payments/?status=failed&limit=100', { auth: merchant });
      expect(csv.slice(1).map((line) => line.split(',')[0])).toEqual(
        api.json().data.map((p: { id: string }) => p.id),
      );
      expect(csv).toHaveLength(3);
    });

    it('shows the payment’s events and deliveries; Resend makes a new attempt; Refund ends processed', async () => {
      await page.goto(`${base}/dashboard/payments/`);
      await page.click(`a:has-text("${paymentId}")`);
      await page.waitForURL(`${base}/dashboard/payments/${paymentId}/`);
      await expect(page.locator('.timeline').textContent()).resolves.toContain('payment.captured');
      await expect(page.locator('[data-delivery]').count()).resolves.toBeGreaterThan(0);
      await check('payment');

      const attempts = () => receiver.received.length;
      const before = attempts();
      await page
        .locator('li[data-event]', { hasText: 'payment.captured' })
        .locator('button:has-text("Resend")')
        .click();
      await page.waitForURL(/done=resent/);
      await drain(harness);
      expect(attempts()).toBe(before + 1);

      await page.fill('input[name="amount"]', '2000');
      await page.click('button:has-text("Refund")');
      await page.waitForURL(/done=refunded/);
      await expect(page.locator('[role="status"]').textContent()).resolves.toContain('Refund created.');
      harness.clock.advance(120_000);
      await harness.container.jobs.refundSync.run(new AbortController().signal);
      await page.reload();
      await expect(page.locator('table').first().textContent()).resolves.toContain('processed');
      await page.click('table >> a[href*="/refunds/rfnd_"]');
      await check('refund');
    });

    it('shows orders, refunds, webhooks and settings', async () => {
      for (const [link, name] of [
        ['Orders', 'orders'],
        ['Refunds', 'refunds'],
        ['Webhooks', 'webhooks'],
        ['Settings', 'settings'],
      ] as const) {
        await page.click(`nav >> text=${link}`);
        await page.waitForURL(`${base}/dashboard/${name}/`);
        await check(name);
      }
      // Resend from the webhooks page: one more attempt to that endpoint.
      await drain(harness);
      await page.click('nav >> text=Webhooks');
      const before = receiver.received.length;
      await page.locator('tr[data-delivery] button:has-text("Resend")').first().click();
      await page.waitForURL(`${base}/dashboard/webhooks/?done=resent`);
      await drain(harness);
      expect(receiver.received.length).toBe(before + 1);
      await page.click('nav >> text=Orders');
      await page.click('tbody a >> nth=0');
      await expect(page.locator('h1').textContent()).resolves.toMatch(/^Order order_/);
      await check('order');
    });

    it('rolls a key (the old one works for the overlap) and revokes one (refused at once); the secret shows once', async () => {
      const status = async (auth: string) =>
        (await harness.request('GET', '/v1/payments/methods/', { auth })).statusCode;
      await page.click('nav >> text=API keys');
      await check('keys');
      const row = page.locator(`tr[data-key="${sandbox.merchant.api_key}"]`);
      await row.locator('select').selectOption('3600');
      await row.locator('button:has-text("Roll")').click();
      const secret = (await page.locator('[data-secret]').textContent()) as string;
      const notice = (await page.locator('[role="status"]').textContent()) as string;
      const apiKey = /Key rolled: (key_test_\w+)/.exec(notice)?.[1] as string;
      expect(secret).toMatch(/^sk_test_/);
      const fresh = basicAuth({ api_key: apiKey, secret_key: secret });
      expect(await status(fresh)).toBe(200);
      expect(await status(merchant.auth)).toBe(200);
      harness.clock.advance(3_601_000);
      expect(await status(merchant.auth)).toBe(401);

      await logIn(sandbox.merchant.dashboard);
      await page.goto(`${base}/dashboard/keys/`);
      expect(await page.content()).not.toContain(secret);
      await page.locator(`tr[data-key="${apiKey}"] button:has-text("Revoke")`).click();
      await page.waitForURL(/done=revoked/);
      expect(await status(fresh)).toBe(401);
      await page.click('button:has-text("Log out")');
      await page.waitForURL(`${base}/dashboard/login/`);
    });

    it('shows the partner its merchants, one merchant’s detail and its keys', async () => {
      const onboarded = await harness.request('POST', '/v1/api-portal/merchants/', {
        auth: partner,
        json: proprietorBody(),
      });
      expect(onboarded.statusCode, onboarded.body).toBe(200);
      const merchantId = onboarded.json().data.id as string;
      await logIn(sandbox.partner.dashboard);
      await expect(page.locator(`a:has-text("${merchantId}")`).count()).resolves.toBe(1);
      await check('merchants');
      await page.click(`a:has-text("${merchantId}")`);
      await expect(page.locator('dl').textContent()).resolves.toContain(merchantId);
      await check('merchant');
      await page.click('nav >> text=API keys');
      await check('partner-keys');
      expect(photographed).toHaveLength(14);
    });
  });
}
