import { randomBytes } from 'node:crypto';
import { formatMajor } from '../domain/money.js';
import { escapeHtml, html, htmlDocument, trusted } from './html.js';

/** A rendered browser page: a payment's, or a hosted checkout's. */
export interface Page {
  status: number;
  html: string;
  /**
   * Sources the page's form may post to besides Kosh (CSP `form-action`). A form that leaves Kosh
   * (the return to the merchant, a provider's POST step) names its target's scheme, `https:` or
   * `http:`, not the target's origin: browsers hold the redirects that follow the post to
   * `form-action` too, and a merchant's return endpoint may answer with a redirect to another of
   * its hosts, a provider's with a redirect to a bank. An IPv6 address is no valid source at all.
   */
  formTargets: string[];
  /** Answer with a redirect to this address instead of the page (302, or `redirectStatus`). */
  redirect?: string;
  /** 303 after a form POST: the browser follows with a GET. */
  redirectStatus?: 302 | 303;
}

/** `₹1,234.00` for rupees; `12.50 USD` for any other currency. */
export function amountText(amount: string | number, currency: string): string {
  const major = formatMajor(Number(amount), currency);
  return currency === 'INR' ? `₹${major}` : `${major} ${currency}`;
}

/** A fresh nonce per answer: the page's Content-Security-Policy allows only its own style and script. */
export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

export function hiddenInputs(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n    ');
}

/**
 * A page whose one style element and at most one script are authorised by `nonce`. `head` is
 * trusted markup for the head (a refresh fallback); `body`, `style` and `script` are trusted too:
 * their callers escape every value that came from a request or the database.
 */
export function nonceDocument(options: {
  title: string;
  nonce: string;
  body: string;
  style: string;
  script?: string;
  head?: string;
}): string {
  return htmlDocument({
    title: options.title,
    head: html`${trusted(options.head ?? '')}<style nonce="${options.nonce}">${trusted(options.style)}</style>`,
    body: html`${trusted(options.body)}${
      options.script ? html`\n<script nonce="${options.nonce}">${trusted(options.script)}</script>` : ''
    }`,
  });
}
