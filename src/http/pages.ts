import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CATALOGUE } from '../domain/errors.js';
import { newNonce, type Page } from '../pages/document.js';
import { toKoshError } from './errors.js';

/**
 * Answers a browser page with the headers every page Kosh renders for a customer carries: no
 * caching, no referrer, no framing, and a Content-Security-Policy that allows nothing but the
 * page's own nonce'd style and script, data: images, requests to Kosh, and forms to Kosh and the
 * page's own form targets.
 */
export function sendPage(reply: FastifyReply, page: Page, nonce: string, publicOrigin: string): FastifyReply {
  const formAction = ["'self'", publicOrigin, ...page.formTargets].join(' ');
  reply
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff')
    .header('X-Frame-Options', 'DENY');
  if (page.redirect) return reply.redirect(page.redirect, page.redirectStatus ?? 302);
  return reply
    .code(page.status)
    .header(
      'Content-Security-Policy',
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data:; connect-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    )
    .type('text/html; charset=utf-8')
    .send(page.html);
}

/** Errors on a browser page are pages too, with the same security headers; `render` draws them. */
export function pageErrorHandler(
  publicOrigin: string,
  render: (status: number, message: string, nonce: string) => Page,
) {
  return (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
    const kosh = toKoshError(error);
    const status = ERROR_CATALOGUE[kosh.code].status;
    if (status >= 500) reply.log.error({ err: error }, 'customer page failed');
    const message = status >= 500 ? ERROR_CATALOGUE[kosh.code].message : kosh.message;
    const nonce = newNonce();
    return sendPage(reply, render(status, message, nonce), nonce, publicOrigin);
  };
}
