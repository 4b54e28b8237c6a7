import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { KoshError } from '../../domain/errors.js';
import type { Mode } from '../../domain/scope.js';
import { isLoopbackName, isPrivateName, literalAddress } from '../../domain/urls.js';
import { isLoopback, specialPurposeBlock } from './special-addresses.js';

/**
 * Where webhook requests may go. A webhook URL is chosen by the caller, so without these rules a key
 * holder could make Kosh call its own network (databases, cloud metadata at 169.254.169.254).
 *
 * Live mode: https only, and every address the host resolves to must be public unicast, outside
 * every block of the IANA special-purpose registries (special-addresses.ts). Test mode: the same,
 * except that http is allowed and, where the operator allows it, loopback, so a developer can
 * receive webhooks on their own machine. The address check runs at registration AND when connecting
 * (see `guardedLookup`), so a DNS answer that changes after registration cannot slip through.
 */

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** DNS as a port: tests replace it to play a name whose answer changes. */
export interface Resolver {
  lookup(hostname: string): Promise<ResolvedAddress[]>;
}

export const systemResolver: Resolver = {
  lookup: (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true }),
};

/** Ports below 1024 are system services; only the web's own ports are allowed among them. */
const ALLOWED_LOW_PORTS = new Set([80, 443]);
const MAX_URL_LENGTH = 2048;

export class UnsafeUrlError extends KoshError {
  constructor(reason: string) {
    super('invalid_webhook_url', `The webhook url is not allowed: ${reason}.`, 'url');
  }
}

/** Loopback, also written as IPv4-mapped IPv6 (`::ffff:127.0.0.1`), as a local resolver may answer. */
function isLoopbackAddress(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    return isLoopback((address as ipaddr.IPv6).toIPv4Address());
  }
  return isLoopback(address);
}

/**
 * Whether Kosh may connect to this address: an ordinary public unicast address, in no block of the
 * IANA special-purpose registries; in test mode also loopback, when the operator allows it
 * (`KOSH_ALLOW_LOOPBACK_WEBHOOKS`). Live mode never reaches loopback.
 */
export function isAllowedAddress(address: string, mode: Mode, allowLoopback = true): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (mode === 'test' && allowLoopback && isLoopbackAddress(parsed)) return true;
  return parsed.range() === 'unicast' && specialPurposeBlock(parsed) === undefined;
}

/**
 * Who the URL is for: the mode of the key that registered it, and whether the operator lets test
 * mode reach this machine's loopback (`KOSH_ALLOW_LOOPBACK_WEBHOOKS`). A bare mode means loopback
 * allowed in test mode (the embedded sandbox's default).
 */
export interface WebhookUrlPolicy {
  mode: Mode;
  allowLoopback: boolean;
}

function policyOf(target: Mode | WebhookUrlPolicy): WebhookUrlPolicy {
  return typeof target === 'string' ? { mode: target, allowLoopback: true } : target;
}

/**
 * The checks that need no network: scheme, credentials, port, host shape and literal addresses.
 * Returns the parsed URL and, for an IP-literal host, its address.
 */
export function checkUrlShape(
  raw: string,
  target: Mode | WebhookUrlPolicy,
): { url: URL; literal: string | undefined } {
  const { mode, allowLoopback } = policyOf(target);
  const developerMachine = mode === 'test' && allowLoopback;
  if (raw.length > MAX_URL_LENGTH) throw new UnsafeUrlError(`longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError('not an absolute URL');
  }
  const allowedProtocols = mode === 'live' ? ['https:'] : ['https:', 'http:'];
  if (!allowedProtocols.includes(url.protocol)) {
    throw new UnsafeUrlError(mode === 'live' ? 'live mode needs an https URL' : 'use an http or https URL');
  }
  if (url.username || url.password) throw new UnsafeUrlError('credentials in the URL are not allowed');
  const hostname = url.hostname.toLowerCase();
  if (!hostname) throw new UnsafeUrlError('the URL has no host');
  const literal = literalAddress(hostname);
  const loopback = literal ? isLoopbackAddress(literal) : isLoopbackName(hostname);
  if (url.port !== '') {
    const port = Number(url.port);
    const developerLoopback = developerMachine && loopback;
    if (!developerLoopback && port < 1024 && !ALLOWED_LOW_PORTS.has(port)) {
      throw new UnsafeUrlError(`port ${port} is not allowed`);
    }
  }
  if (literal) {
    const address = literal.toString();
    if (!isAllowedAddress(address, mode, allowLoopback)) {
      throw new UnsafeUrlError(
        mode === 'test' && isLoopbackAddress(literal)
          ? `${hostname} is this machine, and this Kosh does not send test webhooks to it (KOSH_ALLOW_LOOPBACK_WEBHOOKS)`
          : `${hostname} is not a public address`,
      );
    }
    return { url, literal: address };
  }
  if (loopback) {
    if (developerMachine) return { url, literal: undefined };
    throw new UnsafeUrlError(
      mode === 'test'
        ? `${hostname} is this machine, and this Kosh does not send test webhooks to it (KOSH_ALLOW_LOOPBACK_WEBHOOKS)`
        : `${hostname} is not a public host`,
    );
  }
  if (isPrivateName(hostname)) {
    throw new UnsafeUrlError(`${hostname} is not a public host name`);
  }
  return { url, literal: undefined };
}

async function resolveChecked(
  hostname: string,
  policy: WebhookUrlPolicy,
  resolver: Resolver,
): Promise<ResolvedAddress[]> {
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolver.lookup(hostname);
  } catch {
    throw new UnsafeUrlError(`${hostname} could not be resolved`);
  }
  if (addresses.length === 0) throw new UnsafeUrlError(`${hostname} could not be resolved`);
  const blocked = addresses.find(
    (entry) => !isAllowedAddress(entry.address, policy.mode, policy.allowLoopback),
  );
  if (blocked) throw new UnsafeUrlError(`${hostname} resolves to ${blocked.address}, not a public address`);
  return addresses;
}

/** The full registration check: shape, then every resolved address. Returns the normalised URL. */
export async function validateWebhookUrl(
  raw: string,
  target: Mode | WebhookUrlPolicy,
  resolver: Resolver,
): Promise<string> {
  const policy = policyOf(target);
  const { url, literal } = checkUrlShape(raw, policy);
  if (!literal) await resolveChecked(url.hostname.replace(/^\[|\]$/g, ''), policy, resolver);
  return url.toString();
}

/**
 * A `lookup` for `http.request`: resolves through the resolver and refuses to hand the socket any
 * address that is not allowed, so the check applies to the address actually connected to.
 * (Node skips `lookup` for IP-literal hosts; `checkUrlShape` covers those before connecting.)
 */
export function guardedLookup(target: Mode | WebhookUrlPolicy, resolver: Resolver): LookupFunction {
  const policy = policyOf(target);
  return (hostname, options, callback) => {
    resolveChecked(hostname, policy, resolver).then(
      (addresses) => {
        const wanted = addresses.filter((entry) => !options.family || entry.family === options.family);
        const usable = wanted.length > 0 ? wanted : addresses;
        if (options.all) {
          (callback as unknown as (error: null, addresses: ResolvedAddress[]) => void)(null, usable);
        } else {
          const first = usable[0] as ResolvedAddress;
          callback(null, first.address, first.family);
        }
      },
      (error: Error) => {
        const refused = Object.assign(new Error(error.message), { code: 'EADDRNOTALLOWED' });
        callback(refused as NodeJS.ErrnoException, '', 0);
      },
    );
  };
}
