import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

/** Every setting docs/configuration.md names in the first column of its tables. */
function documentedSettings(): string[] {
  const text = fs.readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  const names = [...text.matchAll(/^\| `(KOSH_[A-Z0-9_]+)` /gm)].map((match) => match[1]!);
  return [...new Set(names)];
}

describe('settings that are set but not read', () => {
  it('reads every documented setting, so none of them is ever named as ignored', () => {
    const names = documentedSettings();
    expect(names.length).toBeGreaterThan(40);
    // An empty value stands for "unset" in every setting, so each is read without being refused.
    const config = loadConfig(Object.fromEntries(names.map((name) => [name, ''])));
    expect(config.ignoredSettings).toEqual([]);
  });

  it('names a misspelt setting and an amount limit for a currency Kosh does not take', () => {
    const config = loadConfig({
      KOSH_RATE_LIMIT_LIVE_PER_SEC: '500',
      KOSH_MIN_AMOUNT_USD: '50',
      KOSH_MAX_AMOUNT_INR: '500000',
      KOSH_HOST: '0.0.0.0',
    });
    expect(config.rateLimits.perSecond.live).toBe(100);
    expect(config.amountLimits.INR?.maxAmount).toBe(500000);
    expect(config.ignoredSettings).toEqual([
      'KOSH_HOST is not a setting and is ignored: the listening address is HOST (or --host).',
      "KOSH_MIN_AMOUNT_USD is ignored: 'USD' is not a currency Kosh takes (INR).",
      'KOSH_RATE_LIMIT_LIVE_PER_SEC is not a setting and is ignored (docs/configuration.md lists every setting).',
    ]);
  });

  it('leaves alone what other programs read: the kosh client, the example shop, the test suite', () => {
    const config = loadConfig({
      KOSH_API_KEY: 'key_test_x',
      KOSH_SECRET_KEY: 'sk_test_x',
      KOSH_URL: 'http://localhost:3000',
      KOSH_TEST_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
      KOSH_FUZZ_RUNS: '1000',
      PATH: '/usr/bin',
    });
    expect(config.ignoredSettings).toEqual([]);
  });
});
