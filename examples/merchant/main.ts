import fs from 'node:fs';
import path from 'node:path';
import { startMerchant } from './app.js';

/**
 * Runs the example shop against a local Kosh. Credentials come from KOSH_API_KEY/KOSH_SECRET_KEY,
 * or from the sandbox merchant Kosh wrote to .kosh-data/sandbox-credentials.json on first start.
 */
function credentials(): { apiKey: string; secretKey: string } {
  if (process.env.KOSH_API_KEY && process.env.KOSH_SECRET_KEY) {
    return { apiKey: process.env.KOSH_API_KEY, secretKey: process.env.KOSH_SECRET_KEY };
  }
  const file = path.resolve(process.env.KOSH_DATA_DIR ?? '.kosh-data', 'sandbox-credentials.json');
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    merchant: { api_key: string; secret_key: string };
  };
  return { apiKey: saved.merchant.api_key, secretKey: saved.merchant.secret_key };
}

const shop = await startMerchant({
  baseUrl: process.env.KOSH_URL ?? 'http://localhost:3000',
  ...credentials(),
  port: Number(process.env.MERCHANT_PORT ?? 4000),
  host: '127.0.0.1',
});
process.stdout.write(`Example shop at ${shop.url}\n`);
