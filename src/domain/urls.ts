import ipaddr from 'ipaddr.js';

/**
 * How Kosh reads a URL a caller gives it (a return_url, a merchant's website, a webhook URL), and
 * what it knows about host names. The checks of each field (who may be reached, which schemes)
 * live with the field; these are the parts they share.
 *
 * A URL is read by the WHATWG URL parser, as browsers and Node read it. That parser forgives a
 * great deal: it drops leading and trailing spaces and control characters and every tab and line
 * break, reads `\` as `/`, supplies a missing `//` (`https:evil.example`), decodes and maps the
 * host (`evil%2Eexample`, `evil。example`, `0x7f.1`). Text written that way means one thing to the
 * parser and another to anyone reading it, so `readWrittenUrl` accepts only text that already is
 * what the parser reads wherever it decides where the URL goes: `scheme://host…` with the `//`
 * and the host as written, and nothing the parser would drop or turn around.
 */

/** Whitespace, control characters (C0, DEL, C1) and the backslash: refused anywhere in a URL. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const UNWRITTEN = /[\s\\\u0000-\u001f\u007f-\u009f]/u;
/** `scheme://` and a non-empty authority, which ends at the first `/`, `?` or `#`. */
const ABSOLUTE = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]+)/i;

/**
 * `url` is how the WHATWG parser reads the text (undefined when it cannot); `problem` says, as the
 * rest of a sentence that starts with the field's name ("must …"), how the text differs from that
 * reading. With no problem, the text is the URL as written.
 */
export type WrittenUrl = { url: URL; problem?: undefined } | { url: URL | undefined; problem: string };

/** The host part of an authority as written: without user information and port. */
function writtenHost(authority: string): string {
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.indexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/** Reads `raw` as the WHATWG parser does, and says whether it is written as read. */
export function readWrittenUrl(raw: string): WrittenUrl {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (UNWRITTEN.test(raw)) {
    return {
      url,
      problem: 'must not contain spaces, control characters or backslashes (percent-encode them: %20, %5C)',
    };
  }
  const authority = ABSOLUTE.exec(raw)?.[1];
  if (authority === undefined) return { url, problem: 'must be an absolute URL written as scheme://host/…' };
  if (!url) return { url, problem: 'must be a valid absolute URL, written as scheme://host/…' };
  if (writtenHost(authority).toLowerCase() !== url.hostname.toLowerCase()) {
    return { url, problem: `must have its host written as a URL parser reads it: ${url.hostname}` };
  }
  return { url };
}

/**
 * The address of an IP-literal host as the WHATWG parser leaves it (dotted decimal, or IPv6 in
 * brackets), or undefined for a name.
 */
export function literalAddress(hostname: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (!ipaddr.isValid(bare)) return undefined;
  // WHATWG URL parsing has already turned 2130706433 and 0177.0.0.1 into dotted decimal, so only
  // canonical forms reach here; ipaddr's lenient forms are never trusted on their own.
  if (!ipaddr.IPv6.isValid(bare) && !ipaddr.IPv4.isValidFourPartDecimal(bare)) return undefined;
  return ipaddr.parse(bare);
}

/** Names that only ever mean a private network. */
const PRIVATE_NAME_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa', '.lan', '.intranet'];

/**
 * Special-use names (the IANA Special-Use Domain Names registry, RFC 6761 and later) that are never
 * a site on the public internet: testing, documentation, never-valid, Tor, alternative namespaces
 * and the infrastructure domain `.arpa`.
 */
const RESERVED_NAME_SUFFIXES = [
  '.test',
  '.example',
  '.example.com',
  '.example.net',
  '.example.org',
  '.invalid',
  '.onion',
  '.alt',
  '.arpa',
];

/** The name without the one trailing dot a fully qualified name may carry (`localhost.`). */
function withoutRootDot(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}

function underSuffix(name: string, suffixes: readonly string[]): boolean {
  return suffixes.some((suffix) => name.endsWith(suffix) || `.${name}` === suffix);
}

/** `localhost` and the names under it. */
export function isLoopbackName(hostname: string): boolean {
  const name = withoutRootDot(hostname);
  return name === 'localhost' || name.endsWith('.localhost');
}

/** A single-label name (`intranet`) or a name under a private-network suffix (`db.internal`). */
export function isPrivateName(hostname: string): boolean {
  const name = withoutRootDot(hostname);
  return !name.includes('.') || underSuffix(name, PRIVATE_NAME_SUFFIXES);
}

/**
 * Whether a host, as the URL parser leaves it, is a name that can be a site on the public
 * internet: not an IP address of any kind, not this machine, not a private-network or special-use
 * name. Nothing is resolved: this is about the name alone.
 */
export function isPublicHostName(hostname: string): boolean {
  if (hostname.startsWith('[') || literalAddress(hostname)) return false;
  const name = withoutRootDot(hostname);
  if (name === '' || name.split('.').some((label) => label === '')) return false;
  return !isLoopbackName(name) && !isPrivateName(name) && !underSuffix(name, RESERVED_NAME_SUFFIXES);
}
