import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (installed by .ci/run), never a browser a test tool downloads. */
const EXECUTABLE = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * How long one browser step (a navigation, a click, a read of an element) may take. Below the
 * test's own 30 s limit, so that a slow step fails as itself — Playwright names what it waited
 * for ("waiting for navigation to …", "waiting for locator('#payment-status')") — instead of the
 * bare test timeout that says nothing.
 */
export const STEP_TIMEOUT_MS = 15_000;

/**
 * A browser test's whole limit (each browser file's outer `describe` sets it): several steps'
 * worth, so that when a test stalls, the step that stalled fails with its own message, and the
 * bare "Test timed out" is never what a browser test reports.
 */
export const BROWSER_TEST_TIMEOUT_MS = 4 * STEP_TIMEOUT_MS;

export interface LaunchedBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A headless Chromium with a fresh profile folder, removed on close. */
export async function launchBrowser(): Promise<LaunchedBrowser> {
  if (!fs.existsSync(EXECUTABLE)) {
    throw new Error(
      `Chromium was not found at ${EXECUTABLE}; install Debian's chromium package (.ci/run does).`,
    );
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: EXECUTABLE,
    headless: true,
    args: FLAGS,
  });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  context.setDefaultNavigationTimeout(STEP_TIMEOUT_MS);
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Catches the browser's POST to a merchant's return URL that is not on this machine (an https
 * shop): resolves with its fields, and answers a page whose `#thanks` says "Thank you".
 */
export function merchantReturn(page: Page, returnUrl: string): Promise<Record<string, string>> {
  return new Promise((resolve) => {
    void page.route(`${returnUrl}**`, async (route) => {
      resolve(Object.fromEntries(new URLSearchParams(route.request().postData() ?? '')));
      await route.fulfill({ status: 200, contentType: 'text/html', body: '<h1 id="thanks">Thank you</h1>' });
    });
  });
}

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now, one line each. */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run()).violations;
  })) as { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** How far the page is wider than the window, in CSS pixels (0 or less: it scrolls down, not sideways). */
export function overflowWidth(page: Page): Promise<number> {
  return page.evaluate(() => {
    const view = globalThis as unknown as {
      document: { documentElement: { scrollWidth: number } };
      innerWidth: number;
    };
    return view.document.documentElement.scrollWidth - view.innerWidth;
  });
}

/** Where the browser tests save their screenshots (docs/ copies the ones it shows). */
export const SCREENSHOTS = path.join('test', 'browser', 'screenshots');

/**
 * Saves a screenshot of the page as `SCREENSHOTS/<file>`. Chromium now and then refuses one capture
 * ("Unable to capture screenshot", a CDP protocol error, not a timeout) and takes the same picture
 * when asked again a moment later: that refusal is asked again, up to three times; any other error
 * fails at once.
 */
export async function saveScreenshot(page: Page, file: string, options: { fullPage?: boolean } = {}) {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  for (let attempt = 1; ; attempt++) {
    try {
      await page.screenshot({ path: path.join(SCREENSHOTS, file), fullPage: options.fullPage ?? false });
      return;
    } catch (error) {
      if (attempt >= 3 || !/Unable to capture screenshot/.test(String(error))) throw error;
      await page.waitForTimeout(250 * attempt);
    }
  }
}

/**
 * The page at 1280 and 375 px: a screenshot at each (`<name>-<width>.png`), axe-core with no serious
 * or critical violation, nothing wider than the screen; `atWidth` checks more at each width.
 */
export async function auditPage(
  page: Page,
  name: string,
  atWidth?: (width: number) => Promise<void>,
): Promise<void> {
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: width === 375 ? 812 : 900 });
    await saveScreenshot(page, `${name}-${width}.png`, { fullPage: true });
    const violations = await axeViolations(page);
    if (violations.length > 0) throw new Error(`${name} at ${width} px: ${violations.join('; ')}`);
    const overflow = await overflowWidth(page);
    if (overflow > 0) throw new Error(`${name} is ${overflow} px wider than ${width} px`);
    await atWidth?.(width);
  }
}
