import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createIdGenerator, looksLikeId } from '../../src/domain/ids.js';
import { checkAmount, formatMajor } from '../../src/domain/money.js';
import { asciiLowerCase, shownNameProblem } from '../../src/domain/text.js';
import { TtlCache } from '../../src/domain/ttl-cache.js';

describe('ids', () => {
  it('are prefixed, opaque and sort by creation time', () => {
    let now = 1_700_000_000_000;
    const ids = createIdGenerator(() => now);
    const first = ids.next('order');
    now += 1;
    const second = ids.next('order');
    expect(first).toMatch(/^order_[0-9a-z]{26}$/);
    expect(looksLikeId('order', first)).toBe(true);
    expect(looksLikeId('pay', first)).toBe(false);
    expect(second > first).toBe(true);
    const many = new Set(Array.from({ length: 10_000 }, () => ids.next('pay')));
    expect(many.size).toBe(10_000);
  });
});

describe('money', () => {
  const limits = { INR: { minAmount: 100, maxAmount: 10_000_000_000 } };
  it('accepts amounts inside the bounds and names the field otherwise', () => {
    expect(checkAmount(100, 'INR', limits).code).toBe('INR');
    expect(() => checkAmount(99, 'INR', limits)).toThrow(
      expect.objectContaining({ code: 'amount_out_of_range', field: 'amount' }),
    );
    expect(() => checkAmount(100, 'USD', limits)).toThrow(
      expect.objectContaining({ code: 'currency_not_supported', field: 'currency' }),
    );
  });
  it('formats sub-units as rupees', () => {
    expect(formatMajor(5000, 'INR')).toBe('50.00');
    expect(formatMajor(12345678, 'INR')).toBe('1,23,456.78');
    expect(formatMajor(5, 'INR')).toBe('0.05');
  });
});

describe('configuration', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      publicUrl: 'http://localhost:3000',
    });
    expect(config.dataDir).toMatch(/\.kosh-data$/);
    expect(config.amountLimits.INR).toEqual({ minAmount: 100, maxAmount: 10_000_000_000 });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ KOSH_PUBLIC_URL: 'not a url' }, 'KOSH_PUBLIC_URL'],
    [{ KOSH_SECRET_PEPPER: 'short' }, 'KOSH_SECRET_PEPPER'],
    [{ KOSH_LOG_LEVEL: 'loud' }, 'KOSH_LOG_LEVEL'],
    [{ KOSH_MIN_AMOUNT_INR: '500', KOSH_MAX_AMOUNT_INR: '100' }, 'KOSH_MIN_AMOUNT_INR'],
    [{ KOSH_MAX_AMOUNT_INR: '50' }, 'KOSH_MAX_AMOUNT_INR'],
    [{ KOSH_MIN_AMOUNT_INR: '20000000000' }, 'KOSH_MIN_AMOUNT_INR'],
    [{ KOSH_SANDBOX_BOOTSTRAP: 'maybe' }, 'KOSH_SANDBOX_BOOTSTRAP'],
    [{ KOSH_SYNC_LEASE_MS: '2000' }, 'KOSH_SYNC_LEASE_MS'],
    [
      { KOSH_PAYMENT_EXPIRY_SECONDS: '300000', KOSH_LATE_AUTH_WINDOW_SECONDS: '259200' },
      'KOSH_LATE_AUTH_WINDOW_SECONDS',
    ],
    [
      { KOSH_PENDING_TIMEOUT_SECONDS: '600', KOSH_LATE_AUTH_WINDOW_SECONDS: '1500' },
      'KOSH_LATE_AUTH_WINDOW_SECONDS',
    ],
    [{ KOSH_PROVIDER_TIMEOUT_MS: '5000', KOSH_SYNC_LEASE_MS: '6000' }, 'KOSH_SYNC_LEASE_MS'],
  ])('refuses %o naming %s', (env, setting) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`Invalid setting ${setting}`));
  });

  it('leases reconciler claims for a minute unless told, never for less than a provider call', () => {
    expect(loadConfig({}).payments.syncLeaseMs).toBe(60_000);
    expect(
      loadConfig({ KOSH_PROVIDER_TIMEOUT_MS: '3000', KOSH_SYNC_LEASE_MS: '5000' }).payments.syncLeaseMs,
    ).toBe(5_000);
  });

  it('lets flags override the environment', () => {
    expect(loadConfig({ PORT: '4000' }, { port: '5000' }).port).toBe(5000);
  });
});

describe('TtlCache', () => {
  it('expires entries and stays bounded', () => {
    let now = 0;
    const cache = new TtlCache<number>(100, 2, () => now);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('c')).toBe(3);
    now = 101;
    expect(cache.get('c')).toBeUndefined();
  });
});

describe('shownNameProblem', () => {
  it('names what keeps a trimmed text from being shown as a name', () => {
    expect(shownNameProblem('Ab', 2, 100)).toBeNull();
    expect(shownNameProblem('A', 2, 100)).toBe('too_short');
    expect(shownNameProblem('x'.repeat(101), 2, 100)).toBe('too_long');
    expect(shownNameProblem('x'.repeat(5_000), 2)).toBeNull();
    expect(shownNameProblem('Shop\u202Eexe', 2, 100)).toBe('misleading');
    expect(shownNameProblem('Shop\nName', 2, 100)).toBe('misleading');
    expect(shownNameProblem('Shop\u001b[31m', 2, 100)).toBe('misleading');
  });
});

describe('asciiLowerCase', () => {
  it('lowers A to Z only, never mapping another letter onto ASCII', () => {
    expect(asciiLowerCase('KKBK')).toBe('kkbk');
    expect(asciiLowerCase('\u212aKBK')).toBe('\u212akbk');
    expect(asciiLowerCase('\u0130CIC')).toBe('\u0130cic');
    expect(asciiLowerCase('MobiKwik')).toBe('mobikwik');
  });
});
