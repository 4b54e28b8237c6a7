import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ERROR_CATALOGUE } from '../../domain/errors.js';
import type { App } from '../../http/app-types.js';
import { toKoshError } from '../../http/errors.js';
import { IdParams } from '../../http/schemas.js';
import { type Page, renderAuthenticationPage, renderErrorPage } from './authentication.pages.js';
import type { AuthenticationService } from './authentication.service.js';
import { newNonce } from './html.js';
import { authenticationUrl } from './payments.actions.js';

/** The hidden inputs of the html_form action; optional because the redirect action sends none. */
const AuthenticationQuery = Type.Object(
  {
    paymentMode: Type.Optional(Type.String({ maxLength: 20 })),
    bankCode: Type.Optional(Type.String({ maxLength: 40 })),
    walletCode: Type.Optional(Type.String({ maxLength: 40 })),
  },
  { additionalProperties: true },
);

const ChoiceBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 100 }),
    choice: Type.Union([Type.Literal('success'), Type.Literal('failure'), Type.Literal('cancel')]),
  },
  { additionalProperties: false },
);

function send(reply: FastifyReply, page: Page, nonce: string, publicOrigin: string): FastifyReply {
  const formAction = ["'self'", publicOrigin, ...page.formTargets].join(' ');
  return reply
    .code(page.status)
    .header(
      'Content-Security-Policy',
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    )
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff')
    .header('X-Frame-Options', 'DENY')
    .type('text/html; charset=utf-8')
    .send(page.html);
}

/**
 * Browser-facing pages: no API key (the customer's browser has none), HTML in and out, and the
 * same security headers on every answer, errors included.
 */
export function registerAuthenticationRoutes(
  app: App,
  service: AuthenticationService,
  publicUrl: string,
): void {
  const publicOrigin = new URL(publicUrl).origin;
  const errorHandler = (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
    const kosh = toKoshError(error);
    const status = ERROR_CATALOGUE[kosh.code].status;
    if (status >= 500) reply.log.error({ err: error }, 'authentication page failed');
    const message = status >= 500 ? ERROR_CATALOGUE[kosh.code].message : kosh.message;
    const nonce = newNonce();
    return send(reply, renderErrorPage(status, message, nonce), nonce, publicOrigin);
  };
  const common = { config: { auth: 'none' as const }, errorHandler };

  app.get(
    '/v1/payments/:id/authentication/',
    {
      ...common,
      schema: {
        tags: ['Payments'],
        summary: 'Authentication page (browser)',
        description:
          'Opened by the customer’s browser from `next[0]`. Test mode shows the sandbox bank or wallet page.',
        security: [],
        params: IdParams,
        querystring: AuthenticationQuery,
        produces: ['text/html'],
      },
    },
    async (request, reply) => {
      const view = await service.view(request.params.id);
      const nonce = newNonce();
      const self = authenticationUrl(publicUrl, request.params.id);
      return send(reply, renderAuthenticationPage(view, nonce, self), nonce, publicOrigin);
    },
  );

  app.post(
    '/v1/payments/:id/authentication/',
    {
      ...common,
      schema: {
        tags: ['Payments'],
        summary: 'Customer choice on the sandbox page (browser)',
        security: [],
        params: IdParams,
        body: ChoiceBody,
        consumes: ['application/x-www-form-urlencoded'],
        produces: ['text/html'],
      },
    },
    async (request, reply) => {
      const view = await service.choose(request.params.id, request.body.token, request.body.choice);
      const nonce = newNonce();
      const self = authenticationUrl(publicUrl, request.params.id);
      return send(reply, renderAuthenticationPage(view, nonce, self), nonce, publicOrigin);
    },
  );
}
