import type { IncomingHttpHeaders } from 'node:http';

/**
 * Whether a browser sent this request from a page of Kosh itself (or typed in its address bar), as
 * opposed to a page of another site. A browser posts a form from another site with
 * `Sec-Fetch-Site: cross-site` (or `same-site`); a browser without Fetch Metadata still names the
 * posting page's origin in `Origin` (`null` from an opaque one), which must then be Kosh's public
 * origin or the host the page was opened at. A client that sends neither header is not a browser
 * page (servers, the SDK, curl).
 */
export function fromKoshOrNoPage(headers: IncomingHttpHeaders, publicOrigin: string): boolean {
  const site = headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  const origin = headers.origin;
  if (origin === undefined || origin === publicOrigin) return true;
  return URL.canParse(origin) && new URL(origin).host === headers.host;
}
