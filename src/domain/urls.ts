/**
 * How Kosh reads a URL a caller gives it. The checks of each field (who may be reached, which
 * schemes) live with the field; this is the part they share.
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
