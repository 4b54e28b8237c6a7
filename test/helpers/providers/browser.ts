import { expect } from 'vitest';
import { unescapeHtml } from '../html.js';

/** The customer's browser of the provider suite (suite.ts), from Kosh's page to the merchant's. */

/** Where Kosh's signed return POST sends the customer in the provider suite (the merchant's page). */
export const RETURN_URL = 'https://merchant.example/return';
/** What the customer's browser tells Kosh's authentication page (some providers need it). */
export const BROWSER_HEADERS = {
  'user-agent': 'Mozilla/5.0 (Kosh tests)',
  referer: 'https://merchant.example/checkout',
};

/** The first POST form of a page: its target and its hidden fields. */
function formOf(html: string, base: string): { action: string; fields: Record<string, string> } | undefined {
  const form = /<form[^>]*method="POST"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return undefined;
  const fields: Record<string, string> = {};
  for (const input of (form[2] ?? '').matchAll(/<input[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(input[0])?.[1];
    const value = /value="([^"]*)"/.exec(input[0])?.[1] ?? '';
    if (name !== undefined) fields[unescapeHtml(name)] = unescapeHtml(value);
  }
  return { action: new URL(unescapeHtml(form[1] as string), base).toString(), fields };
}

/**
 * A customer's browser, well enough for the live flow: follows redirects and auto-submitting forms
 * from Kosh's authentication page to the provider's bank page, decides there, and follows the way
 * back until Kosh sends it to the merchant's return_url (whose signed POST fields it returns, or
 * undefined when the provider sends nobody back).
 */
export async function walk(
  start: string,
  choice: 'success' | 'failure',
  /** Kosh's public URL and where this Kosh listens (the harness's public URL is not a listener). */
  kosh: { publicUrl: string; listening: string },
): Promise<Record<string, string> | undefined> {
  let request: { url: string; init: RequestInit } = { url: start, init: { headers: BROWSER_HEADERS } };
  let decided = false;
  for (let step = 0; step < 12; step++) {
    if (request.url.startsWith(kosh.publicUrl))
      request.url = kosh.listening + request.url.slice(kosh.publicUrl.length);
    const response = await fetch(request.url, { ...request.init, redirect: 'manual' });
    const html = await response.text();
    if (response.status >= 300 && response.status < 400) {
      request = { url: new URL(String(response.headers.get('location')), request.url).toString(), init: {} };
      continue;
    }
    expect(response.status, `${request.url}: ${html.slice(0, 300)}`).toBe(200);
    const bank = /\/bank\/([A-Za-z0-9_]+)$/.exec(new URL(request.url).pathname);
    if (bank && !decided) {
      decided = true;
      request = {
        url: new URL(`/bank/${bank[1]}/decide`, request.url).toString(),
        init: {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `choice=${choice}`,
        },
      };
      continue;
    }
    const form = formOf(html, request.url);
    if (!form) return undefined;
    if (form.action.startsWith(RETURN_URL)) return form.fields;
    request = {
      url: form.action,
      init: {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form.fields).toString(),
      },
    };
  }
  throw new Error(`the browser walk from ${start} did not end`);
}
