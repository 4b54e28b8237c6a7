import { createHash } from 'node:crypto';
import { ERROR_CATALOGUE, type ErrorCode, type ErrorType } from '../domain/errors.js';
import { html } from '../pages/html.js';
import type { App } from './app-types.js';

/** Where the error reference is served; every error's `doc_url` points at its entry there. */
export const ERROR_DOCS_PATH = '/docs/errors';

export function errorDocUrl(publicUrl: string, code: ErrorCode): string {
  return `${publicUrl}${ERROR_DOCS_PATH}#${code}`;
}

/** Who has to act, by error type (docs/errors.md says the same). */
const WHAT_TO_DO: Record<ErrorType, string> = {
  invalid_request_error:
    'Fix the request: the message says what is wrong and `field` names the field. Sending the same request again gives the same answer.',
  authentication_error:
    'Fix the credentials: HTTP Basic authentication with api_key as the user name and secret_key as the password, both of one key.',
  permission_error: 'This key may not do this: use a key of the right account or mode, or ask for access.',
  idempotency_error:
    'The Idempotency-Key belongs to a request still in flight (409: retry later with the same key) or to a different request (422: use a new key for a new request).',
  rate_limit_error: 'Slow down: wait the seconds the Retry-After header gives, then retry.',
  api_error:
    'The fault is on Kosh’s side or a provider’s: retry with the same Idempotency-Key; quote the request_id if it persists.',
};

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
section{border-top:1px solid #ddd;padding:.5rem 0}section:target{background:#fff8d6}
code{font-family:ui-monospace,monospace;background:#f2f2f2;padding:0 .2rem}h2{font-size:1.1rem;margin:.5rem 0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}dt{font-weight:600}dd{margin:0}`;

/** The reference page: one section per code, anchored by the code itself. Built once. */
function renderPage(): string {
  const codes = Object.entries(ERROR_CATALOGUE) as [ErrorCode, (typeof ERROR_CATALOGUE)[ErrorCode]][];
  const sections = codes.map(
    ([code, entry]) => html`<section id="${code}">
<h2><code>${code}</code></h2>
<dl><dt>Status</dt><dd>${entry.status}</dd><dt>Type</dt><dd><code>${entry.type}</code></dd>
<dt>Meaning</dt><dd>${entry.message}</dd><dt>What to do</dt><dd>${WHAT_TO_DO[entry.type]}</dd></dl>
</section>`,
  );
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Kosh API errors</title><style>${STYLE}</style></head>
<body><main><h1>Kosh API errors</h1>
<p>Every error has the same JSON shape: <code>{"error": {"type", "code", "message", "field", "request_id", "doc_url"}}</code>.
Branch on <code>code</code>, never on <code>message</code>; <code>doc_url</code> links to the code’s entry below.</p>
${sections}</main></body></html>`}`;
}

/** `GET /docs/errors`: the catalogue as a page, so an error's `doc_url` opens its entry. */
export function registerErrorDocs(app: App): void {
  const page = renderPage();
  // The page's one inline style is allowed by its hash; nothing else may load or run.
  const styleHash = createHash('sha256').update(STYLE).digest('base64');
  app.get(ERROR_DOCS_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header(
        'Content-Security-Policy',
        `default-src 'none'; style-src 'sha256-${styleHash}'; base-uri 'none'; frame-ancestors 'none'`,
      )
      .header('Cache-Control', 'public, max-age=3600')
      .send(page),
  );
}
