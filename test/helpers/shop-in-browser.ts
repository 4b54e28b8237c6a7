import type { BrowserContext } from 'playwright-core';
import { startMerchant } from '../../examples/merchant/app.js';
import { type LaunchedBrowser, launchBrowser } from './browser.js';
import type { DatabaseKind } from './databases.js';
import { createHarness, type Harness, type TestAccount } from './harness.js';
import { freePort } from './process.js';

/** Kosh listening, a merchant, the example shop on that merchant's key, and a fresh browser. */
export interface ShopInBrowser {
  harness: Harness;
  koshUrl: string;
  merchant: TestAccount;
  shop: { url: string; close(): Promise<void> };
  browser: LaunchedBrowser;
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * What the browser tests of a customer's payment start from: Kosh on a free port (its
 * KOSH_PUBLIC_URL, so the pages' addresses are real), the merchant "Notebook Shop" (`prepare` may
 * change it, as a partner would, before the shop starts), the example shop and a fresh profile.
 * `realClock`: the pages count down in the browser's own time.
 */
export async function startShopInBrowser(
  kind: DatabaseKind,
  options: { realClock?: boolean; prepare?: (harness: Harness, merchant: TestAccount) => Promise<void> } = {},
): Promise<ShopInBrowser> {
  const port = await freePort();
  const koshUrl = `http://127.0.0.1:${port}`;
  const harness = await createHarness(
    kind,
    { KOSH_PUBLIC_URL: koshUrl },
    { realClock: options.realClock ?? false },
  );
  let shop: ShopInBrowser['shop'] | undefined;
  try {
    await harness.app.listen({ port, host: '127.0.0.1' });
    const merchant = await harness.merchant('Notebook Shop');
    await options.prepare?.(harness, merchant);
    shop = await startMerchant({
      baseUrl: koshUrl,
      apiKey: merchant.credentials.api_key,
      secretKey: merchant.credentials.secret_key,
    });
    const browser = await launchBrowser();
    const started = shop;
    return {
      harness,
      koshUrl,
      merchant,
      shop: started,
      browser,
      context: browser.context,
      async close() {
        await browser.close();
        await started.close();
        await harness.close();
      },
    };
  } catch (error) {
    await shop?.close();
    await harness.close();
    throw error;
  }
}
