import ipaddr from 'ipaddr.js';

/**
 * Address blocks Kosh never sends a live webhook to: every entry of the IANA IPv4 and IPv6
 * Special-Purpose Address Registries (RFC 6890 and its updates), multicast, and the deprecated
 * IPv4-compatible IPv6 block. Whole blocks are refused, including those that embed an IPv4 address
 * (IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo): what they embed might be private, and a
 * webhook receiver has no reason to live there.
 */
export const SPECIAL_PURPOSE_BLOCKS: readonly { cidr: string; name: string }[] = [
  // IPv4 (iana.org/assignments/iana-ipv4-special-registry)
  { cidr: '0.0.0.0/8', name: 'this network' },
  { cidr: '10.0.0.0/8', name: 'private use' },
  { cidr: '100.64.0.0/10', name: 'shared address space (CGNAT)' },
  { cidr: '127.0.0.0/8', name: 'loopback' },
  { cidr: '169.254.0.0/16', name: 'link local (cloud metadata)' },
  { cidr: '172.16.0.0/12', name: 'private use' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments' },
  { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)' },
  { cidr: '192.31.196.0/24', name: 'AS112-v4' },
  { cidr: '192.52.193.0/24', name: 'AMT' },
  { cidr: '192.88.99.0/24', name: 'deprecated 6to4 relay anycast' },
  { cidr: '192.168.0.0/16', name: 'private use' },
  { cidr: '192.175.48.0/24', name: 'direct delegation AS112 service' },
  { cidr: '198.18.0.0/15', name: 'benchmarking' },
  { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)' },
  { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)' },
  { cidr: '224.0.0.0/4', name: 'multicast' },
  { cidr: '240.0.0.0/4', name: 'reserved (and limited broadcast)' },
  // IPv6 (iana.org/assignments/iana-ipv6-special-registry)
  { cidr: '::/128', name: 'unspecified' },
  { cidr: '::1/128', name: 'loopback' },
  { cidr: '::/96', name: 'IPv4-compatible (deprecated)' },
  { cidr: '::ffff:0:0/96', name: 'IPv4-mapped' },
  { cidr: '64:ff9b::/96', name: 'IPv4/IPv6 translation (NAT64)' },
  { cidr: '64:ff9b:1::/48', name: 'local-use IPv4/IPv6 translation' },
  { cidr: '100::/64', name: 'discard-only' },
  { cidr: '100:0:0:1::/64', name: 'dummy prefix' },
  { cidr: '2001::/23', name: 'IETF protocol assignments (Teredo 2001::/32 among them)' },
  { cidr: '2001:db8::/32', name: 'documentation' },
  { cidr: '2002::/16', name: '6to4' },
  { cidr: '2620:4f:8000::/48', name: 'direct delegation AS112 service' },
  { cidr: '3fff::/20', name: 'documentation' },
  { cidr: '5f00::/16', name: 'segment routing (SRv6) SIDs' },
  { cidr: 'fc00::/7', name: 'unique local' },
  { cidr: 'fe80::/10', name: 'link-local unicast' },
  { cidr: 'fec0::/10', name: 'site-local (deprecated)' },
  { cidr: 'ff00::/8', name: 'multicast' },
];

const PARSED = SPECIAL_PURPOSE_BLOCKS.map((block) => ({ ...block, range: ipaddr.parseCIDR(block.cidr) }));

/** The special-purpose block an address is in, or undefined for an ordinary public address. */
export function specialPurposeBlock(
  address: ipaddr.IPv4 | ipaddr.IPv6,
): { cidr: string; name: string } | undefined {
  return PARSED.find(({ range }) => address.kind() === range[0].kind() && address.match(range));
}

/** True for 127.0.0.0/8 and ::1, the only addresses a developer's own machine is reached at. */
export function isLoopback(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  return address.range() === 'loopback';
}
