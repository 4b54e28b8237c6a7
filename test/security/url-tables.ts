/**
 * URL tables shared by the URL checks' unit tests and the security suite's HTTP tests (no imports:
 * a unit test can load it without the app).
 */

/** A public address the test DNS answers with. */
export const PUBLIC_ADDRESS = '93.184.215.14';

/** What the test DNS answers for the names in the webhook URL table; any other name is public. */
export const WEBHOOK_DNS_ANSWERS: Record<string, string[]> = {
  'internal.example.com': ['10.1.2.3'],
  'mixed.example.com': [PUBLIC_ADDRESS, '192.168.0.10'],
  'metadata.example.com': ['169.254.169.254'],
  'v6-private.example.com': ['fd00::1'],
  'nowhere.example.com': [],
};

/**
 * Webhook URLs live mode must refuse (SSRF: Kosh itself connects to them). Checked against the
 * URL check alone (test/unit/url-safety.test.ts) and through POST and PATCH /v1/webhooks/
 * (test/security/unsafe-urls.test.ts).
 */
export const UNSAFE_WEBHOOK_URLS_LIVE: [string, string][] = [
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
  ['.internal name with the root dot', 'https://metadata.google.internal./computeMetadata/v1/'],
  ['localhost with the root dot', 'https://localhost./kosh'],
  ['home.arpa itself', 'https://home.arpa/kosh'],
  ['name resolving to a private address', 'https://internal.example.com/kosh'],
  ['name with one private address among public ones', 'https://mixed.example.com/kosh'],
  ['name resolving to the metadata address', 'https://metadata.example.com/kosh'],
  ['name resolving to a private IPv6 address', 'https://v6-private.example.com/kosh'],
  ['name that does not resolve', 'https://nowhere.example.com/kosh'],
];

/**
 * return_url values and what each mode decides. The customer's browser, never Kosh, goes to a
 * return_url, so the rules stop script and data URLs, plaintext on the public internet and leaked
 * credentials; a private or loopback https host is the merchant's own business (no SSRF: Kosh never
 * connects to it) and is accepted in both modes (docs/payments.md).
 */
export const RETURN_URL_CASES: {
  name: string;
  url: string;
  test: 'accepted' | 'refused';
  live: 'accepted' | 'refused';
  /** The error when refused: invalid_return_url unless the schema refuses it first. */
  code?: string;
}[] = [
  { name: 'javascript: scheme', url: 'javascript:alert(document.cookie)', test: 'refused', live: 'refused' },
  { name: 'javascript: in mixed case', url: 'JaVaScRiPt:alert(1)', test: 'refused', live: 'refused' },
  { name: 'javascript: after a space', url: ' javascript:alert(1)', test: 'refused', live: 'refused' },
  { name: 'vbscript: scheme', url: 'vbscript:msgbox(1)', test: 'refused', live: 'refused' },
  {
    name: 'data: URL with a script',
    url: 'data:text/html,<script>alert(1)</script>',
    test: 'refused',
    live: 'refused',
  },
  { name: 'file: URL', url: 'file:///etc/passwd', test: 'refused', live: 'refused' },
  { name: 'ftp: URL', url: 'ftp://merchant.example/return', test: 'refused', live: 'refused' },
  { name: 'http on a public host', url: 'http://merchant.example/return', test: 'refused', live: 'refused' },
  { name: 'http on localhost', url: 'http://localhost:3000/return', test: 'accepted', live: 'refused' },
  { name: 'http on 127.0.0.1', url: 'http://127.0.0.1/return', test: 'accepted', live: 'refused' },
  { name: 'http on [::1]', url: 'http://[::1]:8080/return', test: 'accepted', live: 'refused' },
  { name: 'http on a private address', url: 'http://10.0.0.5/return', test: 'refused', live: 'refused' },
  {
    name: 'http on a name that only starts like localhost',
    url: 'http://localhost.attacker.example/return',
    test: 'refused',
    live: 'refused',
  },
  {
    name: 'user and password',
    url: 'https://user:secret@merchant.example/return',
    test: 'refused',
    live: 'refused',
  },
  { name: 'user name only', url: 'https://user@merchant.example/return', test: 'refused', live: 'refused' },
  // A host the return page's Content-Security-Policy would read as more than a host.
  { name: 'a semicolon in the host', url: 'https://x.example;sandbox/r', test: 'refused', live: 'refused' },
  { name: 'a comma in the host', url: 'https://x.example,y.example/r', test: 'refused', live: 'refused' },
  { name: 'a wildcard host', url: 'https://*/r', test: 'refused', live: 'refused' },
  { name: 'a wildcard label', url: 'https://*.example/r', test: 'refused', live: 'refused' },
  { name: 'a quote in the host', url: "https://x.example'/r", test: 'refused', live: 'refused' },
  {
    name: 'an IDN written as xn--',
    url: 'https://xn--bcher-kva.example/r',
    test: 'accepted',
    live: 'accepted',
  },
  { name: 'an IPv6 address', url: 'https://[2001:db8::1]/r', test: 'accepted', live: 'accepted' },
  { name: 'relative path', url: '/return', test: 'refused', live: 'refused' },
  { name: 'protocol-relative', url: '//merchant.example/return', test: 'refused', live: 'refused' },
  { name: 'not a URL', url: 'merchant.example/return', test: 'refused', live: 'refused' },
  { name: 'words', url: 'return to the shop', test: 'refused', live: 'refused' },
  { name: 'a scheme and nothing else', url: 'https://', test: 'refused', live: 'refused' },
  {
    name: 'over-long (2,001 characters)',
    url: `https://merchant.example/return?q=${'x'.repeat(2001 - 34)}`,
    test: 'refused',
    live: 'refused',
    code: 'invalid_field',
  },
  {
    name: 'the longest allowed (2,000 characters)',
    url: `https://merchant.example/return?q=${'x'.repeat(2000 - 34)}`,
    test: 'accepted',
    live: 'accepted',
  },
  {
    name: 'https on a public host',
    url: 'https://merchant.example/return',
    test: 'accepted',
    live: 'accepted',
  },
  {
    name: 'https with a query and fragment',
    url: 'https://merchant.example/return?order=1&x=%22#done',
    test: 'accepted',
    live: 'accepted',
  },
  { name: 'https on a private address', url: 'https://10.0.0.5/return', test: 'accepted', live: 'accepted' },
  { name: 'https on localhost', url: 'https://localhost/return', test: 'accepted', live: 'accepted' },
  // Written otherwise than the URL parser reads it: the parser would repair each of these into an
  // https URL, so Kosh would store one thing and send the browser to another (docs/payments.md).
  { name: 'no // after the scheme', url: 'https:evil.example', test: 'refused', live: 'refused' },
  {
    name: 'a slash and a backslash after the scheme',
    url: 'https:/\\evil.example',
    test: 'refused',
    live: 'refused',
  },
  {
    name: 'three slashes after the scheme',
    url: 'https:///evil.example/return',
    test: 'refused',
    live: 'refused',
  },
  { name: 'a leading space', url: ' https://merchant.example/return', test: 'refused', live: 'refused' },
  { name: 'a trailing space', url: 'https://merchant.example/return ', test: 'refused', live: 'refused' },
  { name: 'a space in the path', url: 'https://merchant.example/re turn', test: 'refused', live: 'refused' },
  {
    name: 'a leading non-breaking space',
    url: '\u00a0https://merchant.example/return',
    test: 'refused',
    live: 'refused',
  },
  {
    name: 'a leading control character',
    url: '\u0008https://merchant.example/return',
    test: 'refused',
    live: 'refused',
  },
  { name: 'a tab in the host', url: 'https://merchant.exa\tmple/return', test: 'refused', live: 'refused' },
  {
    name: 'a line break in the path',
    url: 'https://merchant.example/re\r\nturn',
    test: 'refused',
    live: 'refused',
  },
  {
    name: 'a C1 control character',
    url: 'https://merchant.example/re\u0085turn',
    test: 'refused',
    live: 'refused',
  },
  {
    name: 'a backslash as the path',
    url: 'https://merchant.example\\return',
    test: 'refused',
    live: 'refused',
  },
  {
    name: 'a backslash before an @',
    url: 'https://merchant.example\\@evil.example/return',
    test: 'refused',
    live: 'refused',
  },
  { name: 'a percent-encoded host', url: 'https://evil%2Eexample/return', test: 'refused', live: 'refused' },
  {
    name: 'an ideographic full stop in the host',
    url: 'https://evil\u3002example/return',
    test: 'refused',
    live: 'refused',
  },
  {
    name: 'a Unicode host (write it as xn--…)',
    url: 'https://b\u00fccher.example/return',
    test: 'refused',
    live: 'refused',
  },
  { name: 'an IPv4 address in hexadecimal', url: 'https://0x7f.1/return', test: 'refused', live: 'refused' },
  {
    name: 'an IPv4 address with the root dot',
    url: 'https://127.0.0.1./return',
    test: 'refused',
    live: 'refused',
  },
  {
    name: 'an IPv6 address written long',
    url: 'https://[0:0:0:0:0:0:0:1]/return',
    test: 'refused',
    live: 'refused',
  },
  {
    name: 'http on localhost with a leading space',
    url: ' http://localhost:3000/return',
    test: 'refused',
    live: 'refused',
  },
  // Written as the parser reads it, or differing only where every reader agrees.
  {
    name: 'scheme and host in capitals',
    url: 'HTTPS://MERCHANT.EXAMPLE/Return',
    test: 'accepted',
    live: 'accepted',
  },
  { name: 'a host with no path', url: 'https://merchant.example', test: 'accepted', live: 'accepted' },
  {
    name: 'a punycode host',
    url: 'https://xn--bcher-kva.example/return',
    test: 'accepted',
    live: 'accepted',
  },
  {
    name: 'an explicit port',
    url: 'https://merchant.example:8443/return',
    test: 'accepted',
    live: 'accepted',
  },
];

/**
 * A merchant's `website` (api-portal onboarding): an https URL on a name that can be a public site
 * (docs/onboarding.md). Nothing connects to it, but it names the business to reviewers and
 * customers, so an IP address (in any notation the URL parser reads) or a name that can only be
 * private or special-use is refused. The third column: `host` rows are refused with the
 * public-host message, `form` rows for how the URL is written.
 */
export const REFUSED_WEBSITES: [string, string, 'host' | 'form'][] = [
  ['cloud metadata', 'https://169.254.169.254/', 'host'],
  ['loopback IPv4', 'https://127.0.0.1', 'host'],
  ['private 10/8', 'https://10.0.0.1', 'host'],
  ['private 192.168/16', 'https://192.168.1.1/x', 'host'],
  ['a public IPv4 address', `https://${PUBLIC_ADDRESS}/`, 'host'],
  ['decimal IPv4', 'https://2130706433/', 'host'],
  ['octal IPv4', 'https://0177.0.0.1/', 'host'],
  ['hexadecimal IPv4', 'https://0x7f000001/', 'host'],
  ['short IPv4', 'https://127.1/', 'host'],
  ['IPv4 with the root dot', 'https://127.0.0.1./', 'host'],
  ['IPv4 after a leading space', ' https://10.0.0.1/', 'host'],
  ['IPv6 loopback', 'https://[::1]/', 'host'],
  ['a public IPv6 address', 'https://[2606:4700:4700::1111]/', 'host'],
  ['IPv4-mapped IPv6', 'https://[::ffff:169.254.169.254]/', 'host'],
  ['localhost', 'https://localhost', 'host'],
  ['localhost with the root dot', 'https://localhost./', 'host'],
  ['a .localhost name', 'https://shop.localhost/', 'host'],
  ['a .local name', 'https://shop.local', 'host'],
  ['a .local name with the root dot', 'https://shop.local./', 'host'],
  ['a single-label name', 'https://intranet/', 'host'],
  ['a single label with the root dot', 'https://shop./', 'host'],
  ['an .internal name', 'https://metadata.google.internal/', 'host'],
  ['a .lan name', 'https://nas.lan/', 'host'],
  ['a .home.arpa name', 'https://router.home.arpa/', 'host'],
  ['an .arpa name', 'https://1.0.0.10.in-addr.arpa/', 'host'],
  ['a .test name', 'https://shop.test/', 'host'],
  ['an .example name', 'https://shop.example/', 'host'],
  ['a documentation name (example.com)', 'https://www.example.com/', 'host'],
  ['an .invalid name', 'https://shop.invalid/', 'host'],
  ['an .onion name', 'https://kirana.onion/', 'host'],
  ['an .alt name', 'https://shop.alt/', 'host'],
  ['http, not https', 'http://kiranakart.in', 'host'],
  ['ftp scheme', 'ftp://kiranakart.in/', 'host'],
  ['credentials', 'https://user:pw@kiranakart.in/', 'host'],
  ['not a URL', 'kiranakart.in', 'form'],
  ['no // after the scheme', 'https:kiranakart.in', 'form'],
  ['a slash and a backslash after the scheme', 'https:/\\kiranakart.in', 'form'],
  ['a leading space', ' https://kiranakart.in', 'form'],
  ['a trailing line break', 'https://kiranakart.in\n', 'form'],
  ['a backslash before an @', 'https://kiranakart.in\\@evil.example/', 'form'],
  ['a percent-encoded host', 'https://kiranakart%2Ein/', 'form'],
];

/** Websites onboarding accepts. */
export const ACCEPTED_WEBSITES: string[] = [
  'https://kiranakart.in',
  'https://www.kiranakart.in/shop?ref=kosh',
  'https://KiranaKart.in/',
  'https://kiranakart.in./',
  'https://shop.example.in',
  'https://xn--bcher-kva.in/',
];
