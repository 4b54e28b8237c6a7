import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { SANDBOX_CHOICES, type SandboxChoice } from '../../connectors/sandbox/sandbox.connector.js';
import { notFound } from '../../domain/errors.js';
import type { App } from '../../http/app-types.js';
import { pageErrorHandler, sendPage } from '../../http/pages.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import { renderAuthenticationPage, renderErrorPage } from './authentication.pages.js';
import type { AuthenticationService } from './authentication.service.js';
import { newNonce } from './html.js';
import { authenticationUrl } from './payments.actions.js';
import type { ProviderReturns } from './provider-returns.service.js';

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
    choice: Type.Unsafe<SandboxChoice>({ type: 'string', enum: [...SANDBOX_CHOICES] }),
  },
  { additionalProperties: false },
);

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's body and query are what a payment provider sends (its return), not Kosh's API:
     * they are read and verified by the provider's connector, so unknown fields are expected.
     */
    providerFields?: boolean;
  }
}

const SimulatorBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 100 }),
    choice: Type.Unsafe<SandboxChoice | 'expire'>({ type: 'string', enum: [...SANDBOX_CHOICES, 'expire'] }),
  },
  { additionalProperties: false },
);

/** Whatever a provider sends back with the browser: read by its connector, never trusted as it is. */
const ProviderReturnFields = Type.Object(
  {},
  {
    additionalProperties: true,
    description: "The provider's return fields (as the provider sends them); verified by its connector.",
  },
);

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
  const common = {
    config: { auth: 'none' as const, idempotency: false as const },
    errorHandler: pageErrorHandler(publicOrigin, renderErrorPage),
  };

  quietHead(app, '/v1/payments/:id/authentication/', service, publicOrigin);
  app.get(
    '/v1/payments/:id/authentication/',
    {
      ...common,
      exposeHeadRoute: false,
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
      const view = await service.view(request.params.id, {
        ip: request.ip,
        userAgent: request.headers['user-agent'] ?? null,
        referer: request.headers.referer ?? null,
      });
      const nonce = newNonce();
      const self = authenticationUrl(publicUrl, request.params.id);
      return sendPage(reply, renderAuthenticationPage(view, nonce, self), nonce, publicOrigin);
    },
  );

  app.post(
    '/v1/payments/:id/authentication/',
    {
      ...common,
      schema: {
        tags: ['Payments'],
        summary: 'Customer choice on the sandbox page (browser)',
        description:
          '`choice`: success, failure, cancel, pending_success, pending_failure or late_success (docs/payments.md, "Sandbox outcomes").',
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
      return sendPage(reply, renderAuthenticationPage(view, nonce, self), nonce, publicOrigin);
    },
  );
}

/**
 * Opening a payment's page issues its single-use token (and, for the authentication page, may start
 * the payment at its provider): a HEAD (a link checker, a prefetcher) must do neither, so it is
 * not the GET without its body. It says whether the payment exists, with the page's headers.
 */
function quietHead(app: App, url: string, service: AuthenticationService, publicOrigin: string): void {
  app.head(
    url,
    {
      config: { auth: 'none', idempotency: false },
      errorHandler: pageErrorHandler(publicOrigin, renderErrorPage),
      schema: { hide: true, params: IdParams },
    },
    async (request, reply) => {
      if (!(await service.exists(request.params.id))) throw notFound('payment', request.params.id);
      return sendPage(reply, { status: 200, html: '', formTargets: [] }, newNonce(), publicOrigin);
    },
  );
}

/**
 * UPI's browser-facing routes: the status Kosh's UPI page follows, and the sandbox UPI app (test
 * mode only; a live payment is not found there).
 */
export function registerUpiRoutes(app: App, service: AuthenticationService, publicUrl: string): void {
  const publicOrigin = new URL(publicUrl).origin;
  const common = {
    config: { auth: 'none' as const, idempotency: false as const },
    errorHandler: pageErrorHandler(publicOrigin, renderErrorPage),
  };
  app.get(
    '/v1/payments/:id/upi-status/',
    {
      config: { auth: 'none' },
      schema: {
        tags: ['Payments'],
        summary: 'A payment’s status, for Kosh’s UPI page (browser)',
        description:
          'What Kosh’s own UPI page polls to move on once the payment is final; 404 for a payment that is not UPI. Not proof of anything for a merchant: fetch the payment with its key.',
        security: [],
        params: IdParams,
        response: {
          200: Type.Object({ status: Type.String(), final: Type.Boolean() }),
          ...errorResponses(404),
        },
      },
    },
    async (request, reply) => {
      reply.header('Cache-Control', 'no-store');
      return service.status(request.params.id);
    },
  );
  const simulatorPage = (
    id: string,
    view: Awaited<ReturnType<AuthenticationService['simulator']>>,
    reply: FastifyReply,
  ) => {
    const nonce = newNonce();
    const self = `${publicUrl}/v1/payments/${encodeURIComponent(id)}/upi-simulator/`;
    return sendPage(reply, renderAuthenticationPage(view, nonce, self), nonce, publicOrigin);
  };
  quietHead(app, '/v1/payments/:id/upi-simulator/', service, publicOrigin);
  app.get(
    '/v1/payments/:id/upi-simulator/',
    {
      ...common,
      exposeHeadRoute: false,
      schema: {
        tags: ['Payments'],
        summary: 'The sandbox UPI app (browser, test mode)',
        description:
          'What the sandbox QR code and app button open: the customer’s choices for a test-mode UPI payment (docs/payments.md, "UPI").',
        security: [],
        params: IdParams,
        produces: ['text/html'],
      },
    },
    async (request, reply) =>
      simulatorPage(request.params.id, await service.simulator(request.params.id), reply),
  );
  app.post(
    '/v1/payments/:id/upi-simulator/',
    {
      ...common,
      schema: {
        tags: ['Payments'],
        summary: 'A choice in the sandbox UPI app (browser, test mode)',
        description:
          '`choice`: success, failure, cancel, pending_success, pending_failure, late_success or expire.',
        security: [],
        params: IdParams,
        body: SimulatorBody,
        consumes: ['application/x-www-form-urlencoded'],
        produces: ['text/html'],
      },
    },
    async (request, reply) =>
      simulatorPage(
        request.params.id,
        await service.simulate(request.params.id, request.body.token, request.body.choice),
        reply,
      ),
  );
}

/** The browser back from a provider: GET or POST, whatever fields the provider sends. */
export function registerCallbackRoutes(app: App, returns: ProviderReturns, publicUrl: string): void {
  const publicOrigin = new URL(publicUrl).origin;
  const schema = {
    tags: ['Payments'],
    summary: "The provider's return (browser)",
    description:
      'A payment provider sends the customer’s browser back here. Kosh verifies what arrived, asks the provider when in doubt, records the outcome, and sends the browser on to the merchant’s return_url with the signed POST.',
    security: [],
    params: IdParams,
  };
  const handle = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const { id } = request.params as { id: string };
    const view = await returns.callback(id, {
      method: request.method === 'POST' ? 'POST' : 'GET',
      query: (request.query ?? {}) as Record<string, unknown>,
      body: (request.body && typeof request.body === 'object' ? request.body : {}) as Record<string, unknown>,
    });
    const nonce = newNonce();
    const self = authenticationUrl(publicUrl, id);
    return sendPage(reply, renderAuthenticationPage(view, nonce, self), nonce, publicOrigin);
  };
  const errorHandler = pageErrorHandler(publicOrigin, renderErrorPage);
  app.get(
    '/v1/payments/:id/callback/',
    {
      config: { auth: 'none', providerFields: true },
      errorHandler,
      schema: { ...schema, querystring: ProviderReturnFields, produces: ['text/html'] },
    },
    handle,
  );
  app.post(
    '/v1/payments/:id/callback/',
    {
      config: { auth: 'none', providerFields: true, idempotency: false },
      errorHandler,
      schema: {
        ...schema,
        querystring: ProviderReturnFields,
        body: ProviderReturnFields,
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        produces: ['text/html'],
      },
    },
    handle,
  );
}
