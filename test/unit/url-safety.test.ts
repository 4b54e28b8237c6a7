import { describe, expect, it } from 'vitest';
import {
  checkUrlShape,
  isAllowedAddress,
  type Resolver,
  validateWebhookUrl,
} from '../../src/modules/webhooks/url-safety.js';
// The table lives with the security suite, which sends the same rows through POST /v1/webhooks/.
import { PUBLIC_ADDRESS, UNSAFE_WEBHOOK_URLS_LIVE, WEBHOOK_DNS_ANSWERS } from '../security/url-tables.js';

const PUBLIC = PUBLIC_ADDRESS;

/** Names resolve to a public address unless the table says otherwise. */
function resolver(answers: Record<string, string[]> = {}): Resolver {
  return {
    async lookup(hostname) {
      const addresses = answers[hostname] ?? [PUBLIC];
      if (addresses.length === 0) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    },
  };
}

const DNS = resolver(WEBHOOK_DNS_ANSWERS);
const UNSAFE_LIVE = UNSAFE_WEBHOOK_URLS_LIVE;

describe('webhook URL safety', () => {
  it(`has at least 20 unsafe live-mode URLs in its table (${UNSAFE_LIVE.length})`, () => {
    expect(UNSAFE_LIVE.length).toBeGreaterThanOrEqual(20);
  });

  it.each(UNSAFE_LIVE)('live mode refuses %s: %s', async (_name, url) => {
    await expect(validateWebhookUrl(url, 'live', DNS)).rejects.toMatchObject({
      code: 'invalid_webhook_url',
      field: 'url',
    });
  });

  it.each([
    'https://hooks.example.com/kosh',
    'https://hooks.example.com:8443/kosh?x=1',
    `https://${PUBLIC}/kosh`,
    'https://[2606:4700:4700::1111]/kosh',
  ])('live mode accepts %s', async (url) => {
    await expect(validateWebhookUrl(url, 'live', DNS)).resolves.toBe(new URL(url).toString());
  });

  it.each([
    'http://localhost:3000/hook',
    'http://127.0.0.1:3000/hook',
    'http://[::1]:3000/hook',
    'https://localhost/hook',
    'http://hooks.example.com/kosh',
  ])('test mode accepts the developer URL %s', async (url) => {
    await expect(validateWebhookUrl(url, 'test', DNS)).resolves.toBeTypeOf('string');
  });

  it.each([
    'http://10.0.0.1/hook',
    'http://169.254.169.254/latest',
    'http://[fe80::1]/hook',
    'http://user:pw@localhost:3000/hook',
    'http://internal.example.com/hook',
    'file:///etc/passwd',
  ])('test mode still refuses %s', async (url) => {
    await expect(validateWebhookUrl(url, 'test', DNS)).rejects.toMatchObject({ code: 'invalid_webhook_url' });
  });

  it('classifies addresses for the connect-time check', () => {
    expect(isAllowedAddress(PUBLIC, 'live')).toBe(true);
    expect(isAllowedAddress('127.0.0.1', 'live')).toBe(false);
    expect(isAllowedAddress('127.0.0.1', 'test')).toBe(true);
    expect(isAllowedAddress('::ffff:7f00:1', 'test')).toBe(true);
    expect(isAllowedAddress('::ffff:7f00:1', 'live')).toBe(false);
    expect(isAllowedAddress('10.0.0.1', 'test')).toBe(false);
    expect(isAllowedAddress('not-an-address', 'test')).toBe(false);
  });

  it('judges the literal address of a URL without DNS', () => {
    expect(checkUrlShape('https://2130706433/', 'test').literal).toBe('127.0.0.1');
    expect(() => checkUrlShape('https://2130706433/', 'live')).toThrow(/not a public address/);
  });
});
