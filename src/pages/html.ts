/**
 * The one HTML helper of every page Kosh renders itself (the dashboard, the sandbox bank page, the
 * error catalogue): escaping, a template tag that escapes by default, and the document skeleton.
 * Imports nothing of Kosh, so any module may use it.
 */

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escapes text for HTML element content and double- or single-quoted attribute values. */
export function escapeHtml(value: string | number): string {
  return String(value).replace(/[&<>"'`]/g, (char) => ENTITIES[char] ?? char);
}

/** Markup that is already safe: built by `html` from escaped values, never from raw input. */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

function render(value: unknown): string {
  if (value instanceof Html) return value.markup;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * A template tag for markup: every interpolated value is escaped unless it is itself `Html` (or an
 * array of it), so a page cannot forget to escape a merchant's or a customer's text.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}

/**
 * Markup written by Kosh itself (a fixed stylesheet, a fixed script), trusted as it is. Never pass
 * it anything that came from a request or the database.
 */
export function trusted(markup: string): Html {
  return new Html(markup);
}

/** A complete document: the shared head (charset, viewport, no referrer, the title), `head`, then `body`. */
export function htmlDocument(options: { title: string; head?: Html; body: Html }): string {
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${options.title}</title>
${options.head ?? ''}
</head>
<body>
${options.body}
</body>
</html>
`.markup;
}
