import { describe, expect, it } from 'vitest';
import {
  checkUrlShape,
  isAllowedAddress,
  type Resolver,
  validateWebhookUrl,
} from '../../src/modules/webhooks/url-safety.js';

const PUBLIC = '93.184.215.14';

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

const DNS = resolver({
  'internal.example.com': ['10.1.2.3'],
  'mixed.example.com': [PUBLIC, '192.168.0.10'],
  'metadata.example.com': ['169.254.169.254'],
  'v6-private.example.com': ['fd00::1'],
  'nowhere.example.com': [],
});

const UNSAFE_LIVE: [string, string][] = [
  ['http, not https', 'http://hooks.example.com/kosh'],
  ['ftp scheme', 'ftp://hooks.example.com/kosh'],
  ['javascript scheme', 'javascript:alert(1)'],
  ['not a URL', 'hooks.example.com/kosh'],
  ['loopback IPv4', 'https://127.0.0.1/kosh'],
  ['loopback elsewhere in 127/8', 'https://127.10.20.30/kosh'],
  ['short loopback form', 'https://127.1/kosh'],
  ['localhost', 'https://localhost/kosh'],
  ['a .localhost name', 'https://app.localhost/kosh'],
  ['private 10/8', 'https://10.0.0.1/kosh'],
  ['private 172.16/12, low end', 'https://172.16.0.1/kosh'],
  ['private 172.16/12, high end', 'https://172.31.255.254/kosh'],
  ['private 192.168/16', 'https://192.168.1.1/kosh'],
  ['link-local', 'https://169.254.1.1/kosh'],
  ['cloud metadata', 'https://169.254.169.254/latest/meta-data/'],
  ['CGNAT 100.64/10', 'https://100.64.0.1/kosh'],
  ['unspecified 0.0.0.0', 'https://0.0.0.0/kosh'],
  ['broadcast', 'https://255.255.255.255/kosh'],
  ['multicast', 'https://224.0.0.1/kosh'],
  ['IPv6 loopback', 'https://[::1]/kosh'],
  ['IPv6 unspecified', 'https://[::]/kosh'],
  ['IPv6 unique local fc00::/7', 'https://[fc00::1]/kosh'],
  ['IPv6 unique local fd..', 'https://[fd12:3456:789a::1]/kosh'],
  ['IPv6 link-local fe80::/10', 'https://[fe80::1]/kosh'],
  ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/kosh'],
  ['IPv4-mapped metadata', 'https://[::ffff:169.254.169.254]/kosh'],
  ['decimal IP', 'https://2130706433/kosh'],
  ['octal IP', 'https://0177.0.0.1/kosh'],
  ['hexadecimal IP', 'https://0x7f.0.0.1/kosh'],
  ['credentials', 'https://user:secret@hooks.example.com/kosh'],
  ['user name only', 'https://user@hooks.example.com/kosh'],
  ['SSH port', 'https://hooks.example.com:22/kosh'],
  ['SMTP port', 'https://hooks.example.com:25/kosh'],
  ['single-label host', 'https://intranet/kosh'],
  ['.internal name', 'https://metadata.google.internal/computeMetadata/v1/'],
  ['name resolving to a private address', 'https://internal.example.com/kosh'],
  ['name with one private address among public ones', 'https://mixed.example.com/kosh'],
  ['name resolving to the metadata address', 'https://metadata.example.com/kosh'],
  ['name resolving to a private IPv6 address', 'https://v6-private.example.com/kosh'],
  ['name that does not resolve', 'https://nowhere.example.com/kosh'],
];

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
