/**
 * Hostile inputs the injection, HTML-page, fuzz and resource-limit suites send: strings that must
 * be stored as text, and bodies that must be refused.
 */

/** Values that break naive SQL, HTML, shell, path and format handling; each must be stored as text. */
export const HOSTILE_STRINGS: string[] = [
  "' OR '1'='1",
  "'; DROP TABLE orders; --",
  '"; DELETE FROM accounts WHERE ""="',
  "1' UNION SELECT secret_hash FROM api_keys --",
  '$1 $2 ::text',
  '\\x00\\\\',
  '"><script>alert(1)</script>',
  "<img src=x onerror='alert(1)'>",
  'javascript:alert(document.cookie)',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, on purpose.
  '{{7*7}} ${7*7} <%= 7*7 %>',
  '../../../../etc/passwd',
  '%s%n%x %00 %27',
  '$(rm -rf /) `id`',
  '__proto__',
  'constructor',
  'Ω≈ç√∫ 日本語 🙂 עברית',
  '\u202eevil\u202c',
  'line\r\nInjected-Header: yes',
];

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** Short keys so that 10,000 of them fit under the body limit and reach the validator. */
const manyKeys = (count: number) =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i.toString(36)}`, 0]));

/** Hostile bodies for a JSON/form write route: each must be a 4xx, quickly, and change nothing. */
export const HOSTILE_BODIES: [string, number, string, { json?: unknown; form?: string; raw?: string }][] = [
  ['an oversized JSON body', 413, 'body_too_large', { raw: `{"receipt":"${'x'.repeat(200 * 1024)}"}` }],
  ['an oversized form body', 413, 'body_too_large', { form: `receipt=${'x'.repeat(200 * 1024)}` }],
  [
    'JSON nested 20,000 levels',
    400,
    'invalid_field',
    { raw: `{"amount":${nested(20_000)},"currency":"INR"}` },
  ],
  [
    'JSON nested 20,000 levels in metadata',
    400,
    'invalid_field',
    { raw: `{"amount":5000,"currency":"INR","metadata":${nested(20_000)}}` },
  ],
  [
    'objects nested 5,000 levels',
    400,
    'unknown_field',
    { raw: `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}` },
  ],
  [
    'a 10,000-key object',
    400,
    'unknown_field',
    { json: { amount: 5000, currency: 'INR', ...manyKeys(10_000) } },
  ],
  [
    'a 10,000-key metadata',
    400,
    'invalid_field',
    { json: { amount: 5000, currency: 'INR', metadata: manyKeys(10_000) } },
  ],
  [
    'a form with 10,000 fields',
    400,
    'invalid_body',
    { form: Array.from({ length: 10_000 }, (_, i) => `k${i.toString(36)}=0`).join('&') },
  ],
  [
    'a 90,000-character receipt',
    400,
    'invalid_field',
    { json: { amount: 5000, currency: 'INR', receipt: 'r'.repeat(90_000) } },
  ],
  [
    'a 90,000-character metadata value',
    400,
    'invalid_field',
    { json: { amount: 5000, currency: 'INR', metadata: { note: 'n'.repeat(90_000) } } },
  ],
  [
    'a 30,000-character metadata key',
    400,
    'invalid_field',
    { json: { amount: 5000, currency: 'INR', metadata: { ['k'.repeat(30_000)]: 1 } } },
  ],
  [
    'a 50,000-digit amount',
    400,
    'invalid_field',
    { raw: `{"amount":${'9'.repeat(50_000)},"currency":"INR"}` },
  ],
  ['an array of 20,000 items', 400, 'invalid_body', { raw: `[${Array(20_000).fill('1').join(',')}]` }],
];
