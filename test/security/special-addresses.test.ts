import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createHttpSender } from '../../src/modules/webhooks/http-sender.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';

/**
 * Live webhook URLs in every block of the IANA special-purpose registries, including the IPv6
 * forms that embed an IPv4 address (IPv4-compatible, IPv4-mapped, NAT64, 6to4, Teredo): each is
 * refused when registered and when connecting, and a listener on this machine's every address, on
 * the port the URLs name, records no connection at all.
 */
let listener: net.Server;
let port = 0;
let connections = 0;

beforeAll(async () => {
  listener = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '::', resolve));
  port = (listener.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => listener.close(resolve));
});

/** Hosts (as written in a URL) in special-purpose blocks; `:PORT` is the listener's port. */
const HOSTS: [string, string][] = [
  ['this network 0.0.0.0/8', '0.0.0.0'],
  ['this network, not zero', '0.1.2.3'],
  ['private 10/8', '10.0.0.1'],
  ['shared address space 100.64/10', '100.64.0.1'],
  ['loopback', '127.0.0.1'],
  ['loopback elsewhere in 127/8', '127.53.0.9'],
  ['loopback short form', '127.1'],
  ['loopback as a decimal number', '2130706433'],
  ['loopback in hexadecimal', '0x7f000001'],
  ['loopback in octal', '0177.0.0.1'],
  ['link local / cloud metadata', '169.254.169.254'],
  ['private 172.16/12', '172.16.0.1'],
  ['IETF protocol assignments 192.0.0/24', '192.0.0.8'],
  ['documentation TEST-NET-1', '192.0.2.1'],
  ['AS112-v4', '192.31.196.1'],
  ['AMT', '192.52.193.1'],
  ['6to4 relay anycast', '192.88.99.1'],
  ['private 192.168/16', '192.168.0.1'],
  ['AS112 direct delegation', '192.175.48.1'],
  ['benchmarking 198.18/15', '198.19.255.1'],
  ['documentation TEST-NET-2', '198.51.100.1'],
  ['documentation TEST-NET-3', '203.0.113.1'],
  ['multicast', '224.0.0.1'],
  ['reserved 240/4', '240.0.0.1'],
  ['limited broadcast', '255.255.255.255'],
  ['IPv6 unspecified', '[::]'],
  ['IPv6 loopback', '[::1]'],
  ['IPv4-compatible loopback', '[::127.0.0.1]'],
  ['IPv4-compatible private', '[::10.0.0.1]'],
  ['IPv4-mapped loopback', '[::ffff:127.0.0.1]'],
  ['IPv4-mapped loopback in hexadecimal', '[::ffff:7f00:1]'],
  ['IPv4-mapped metadata', '[::ffff:169.254.169.254]'],
  ['IPv4-mapped public (the whole block is special)', '[::ffff:93.184.215.14]'],
  ['NAT64 embedding loopback', '[64:ff9b::7f00:1]'],
  ['NAT64 embedding private', '[64:ff9b::a00:1]'],
  ['local-use NAT64', '[64:ff9b:1::7f00:1]'],
  ['6to4 embedding loopback', '[2002:7f00:1::1]'],
  ['6to4 embedding private', '[2002:c0a8:1::1]'],
  ['Teredo embedding loopback', '[2001:0:4136:e378:8000:63bf:80ff:fffe]'],
  ['IETF protocol assignments 2001::/23', '[2001:2::1]'],
  ['ORCHIDv2', '[2001:20::1]'],
  ['documentation 2001:db8::/32', '[2001:db8::1]'],
  ['documentation 3fff::/20', '[3fff::1]'],
  ['discard-only 100::/64', '[100::1]'],
  ['segment routing 5f00::/16', '[5f00::1]'],
  ['unique local fc00::/7', '[fc00::1]'],
  ['unique local fd00::/8', '[fd12:3456::1]'],
  ['link local fe80::/10', '[fe80::1]'],
  ['site local fec0::/10', '[fec0::1]'],
  ['multicast ff00::/8', '[ff02::1]'],
];

/** Names whose DNS answer is in a special-purpose block (the answers a rebinding attacker gives). */
const DNS: Record<string, string> = {
  'compat.attacker.example': '::127.0.0.1',
  'nat64.attacker.example': '64:ff9b::7f00:1',
  'teredo.attacker.example': '2001:0:4136:e378:8000:63bf:80ff:fffe',
  'sixtofour.attacker.example': '2002:7f00:1::1',
  'mapped.attacker.example': '::ffff:10.0.0.1',
};

describe('the special-purpose table', () => {
  it(`has at least 40 forms (${HOSTS.length + Object.keys(DNS).length})`, () => {
    expect(HOSTS.length + Object.keys(DNS).length).toBeGreaterThanOrEqual(40);
  });

  it('allows loopback test webhooks by default only on the embedded database', () => {
    const key = Buffer.alloc(32, 1).toString('base64');
    expect(loadConfig({}).allowLoopbackWebhooks).toBe(true);
    expect(
      loadConfig({ DATABASE_URL: 'postgres://h/k', KOSH_ENCRYPTION_KEY: key }).allowLoopbackWebhooks,
    ).toBe(false);
    expect(
      loadConfig({
        DATABASE_URL: 'postgres://h/k',
        KOSH_ENCRYPTION_KEY: key,
        KOSH_ALLOW_LOOPBACK_WEBHOOKS: 'true',
      }).allowLoopbackWebhooks,
    ).toBe(true);
  });
});

describeEachDatabase('security: special-purpose addresses are never webhook targets', (harness) => {
  let live: TestAccount;
  beforeAll(async () => {
    live = await harness().liveKey(await harness().merchant('Special'));
    harness().container.resolver.lookup = async (hostname) => {
      const address = DNS[hostname] ?? '93.184.215.14';
      return [{ address, family: address.includes(':') ? 6 : 4 }];
    };
  });

  const urls = [
    ...HOSTS.map(([name, host]) => [name, `https://${host}:PORT/hook`] as const),
    ...Object.keys(DNS).map(
      (name) => [`a name resolving to ${DNS[name]}`, `https://${name}:PORT/hook`] as const,
    ),
  ];

  it.each(urls)('%s: refused when registered with a live key (%s)', async (_name, template) => {
    const url = template.replace('PORT', String(port));
    const reply = await harness().request('POST', '/v1/webhooks/', { auth: live, json: { url } });
    expect(reply.statusCode, reply.body).toBe(400);
    expect(reply.json().error).toMatchObject({ code: 'invalid_webhook_url', field: 'url' });
    expect(connections).toBe(0);
  });

  it('refuses every one of them at connect time too, and the listener saw no connection', async () => {
    const send = createHttpSender(harness().container.resolver, harness().container.db, {
      allowLoopback: true,
    });
    for (const [name, template] of urls) {
      const result = await send({
        url: template.replace('PORT', String(port)),
        mode: 'live',
        headers: {},
        body: '{}',
        timeoutMs: 2_000,
      });
      expect(result.statusCode, name).toBeUndefined();
      expect(result.error, name).toBeTruthy();
    }
    expect(connections).toBe(0);
  });
});

describeEachDatabase(
  'security: test-mode loopback webhooks when the operator does not allow them',
  (harness) => {
    it('refuses loopback in test mode, at registration and at connect time', async () => {
      const merchant = await harness().merchant('No loopback');
      for (const url of [
        `http://127.0.0.1:${port}/hook`,
        `http://localhost:${port}/hook`,
        `http://[::1]:${port}/hook`,
      ]) {
        const reply = await harness().request('POST', '/v1/webhooks/', { auth: merchant, json: { url } });
        expect(reply.statusCode, url).toBe(400);
        expect(reply.json().error.code).toBe('invalid_webhook_url');
        // The setting that would allow it is named, whether the URL names the host or its address.
        expect(reply.json().error.message, url).toContain(
          'is this machine, and this Kosh does not send test webhooks to it (KOSH_ALLOW_LOOPBACK_WEBHOOKS)',
        );
      }
      const send = createHttpSender(harness().container.resolver, harness().container.db, {
        allowLoopback: false,
      });
      const result = await send({
        url: `http://127.0.0.1:${port}/hook`,
        mode: 'test',
        headers: {},
        body: '{}',
        timeoutMs: 2_000,
      });
      expect(result.statusCode).toBeUndefined();
      expect(connections).toBe(0);
    });
  },
  { KOSH_ALLOW_LOOPBACK_WEBHOOKS: 'false' },
);
