/**
 * The text an HTML attribute or text node holds, from escaped markup: the inverse of `escapeHtml`
 * in src/pages/html.ts (its six entities), for tests that read forms out of pages.
 */
export function unescapeHtml(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#96;/g, '`')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
