import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyRequest, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Container } from '../container.js';
import { KoshError } from '../domain/errors.js';
import { registerKeyRoutes } from '../modules/accounts/keys.routes.js';
import { registerCheckoutRoutes } from '../modules/checkout/checkout.routes.js';
import { registerCheckoutPageRoutes } from '../modules/checkout/checkout-page.routes.js';
import { registerConnectorAccountRoutes } from '../modules/connector-accounts/connector-accounts.routes.js';
import { registerDashboardRoutes } from '../modules/dashboard/dashboard.plugin.js';
import { registerEventRoutes } from '../modules/events/events.routes.js';
import { registerDocumentRoutes } from '../modules/merchants/documents.routes.js';
import { registerMerchantRoutes } from '../modules/merchants/merchants.routes.js';
import { registerVpaRoutes } from '../modules/merchants/vpas.routes.js';
import { registerMethodsRoutes } from '../modules/methods/methods.routes.js';
import { registerOrderRoutes } from '../modules/orders/orders.routes.js';
import {
  registerAuthenticationRoutes,
  registerCallbackRoutes,
  registerUpiRoutes,
} from '../modules/payments/authentication.routes.js';
import { registerPaymentRoutes } from '../modules/payments/payments.routes.js';
import { registerProviderWebhookRoutes } from '../modules/payments/provider-webhooks.routes.js';
import { registerRefundRoutes } from '../modules/refunds/refunds.routes.js';
import { registerWebhookRoutes } from '../modules/webhooks/webhooks.routes.js';
import type { App } from './app-types.js';
import { createAuthHook } from './auth.js';
import {
  coerceToSchema,
  refuseUndeclaredBody,
  refuseUndeclaredQuery,
  refuseUnstorableText,
  registerBodyParsers,
} from './body.js';
import { trackConnections } from './connections.js';
import { registerErrorDocs } from './error-docs.js';
import { clientErrorAnswerer, frameworkError, handleError, sendError } from './errors.js';
import { checkIdempotencyDeclarations, createKeyed } from './idempotency.js';
import { createMetrics } from './metrics.js';
import { registerNotFound } from './not-found.js';
import { KOSH_LOGO, refineDocument } from './openapi-document.js';
import { registerOpsRoutes } from './ops.routes.js';
import { createRateLimiter } from './rate-limit.js';
import { ACCESS_URL_MAX, createAccessLogger, RequestLogger } from './request-logger.js';
import { recordRoutes } from './route-registry.js';
import { schemaController } from './schema-compilers.js';
import { documentCommonErrors, ErrorResponse } from './schemas.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** How long a closing server leaves its open connections to send the requests they had on the way. */
const DRAIN_GRACE_MS = 1_000;

export interface RouteSummary {
  method: string;
  url: string;
  /** Whether the route belongs in the OpenAPI document. */
  documented: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    routeSummaries(): RouteSummary[];
  }
}

/** Builds the HTTP application: plugins, hooks, then every route from an explicit list. */
export async function buildServer(container: Container): Promise<App> {
  const { config, services } = container;
  // Request ids: a random per-process prefix and a counter. Unique across processes and restarts
  // without drawing randomness (or an id) on every request.
  const requestIdPrefix = `req_${randomBytes(6).toString('hex')}`;
  let counter = 0;
  // Set once the server starts closing (preClose below): every reply from then on closes its connection.
  let closing = false;
  // Set when Fastify makes the listening server (injected requests have none).
  let connections: ReturnType<typeof trackConnections> | undefined;
  const app = Fastify({
    loggerInstance: container.log as FastifyBaseLogger,
    // Fastify logs two lines per request; Kosh writes one (onResponse below), or none.
    logController: new LogController({ disableRequestLogging: true }),
    // A request's own logger is made only if something logs through it (see RequestLogger).
    childLoggerFactory: (logger, bindings, options) =>
      new RequestLogger(logger as Logger, bindings, options) as unknown as FastifyBaseLogger,
    bodyLimit: config.bodyLimitBytes,
    // A client that does not finish sending its request in time is cut off (408), so slow or idle
    // uploads cannot pile up; the check runs every second instead of Node's default 30.
    serverFactory: (handler) => {
      const server = http.createServer(
        {
          requestTimeout: config.requestTimeoutMs,
          headersTimeout: config.headersTimeoutMs,
          connectionsCheckingInterval: 1_000,
          // Node would answer a request without Host itself, outside the API's envelope (onRequest).
          requireHostHeader: false,
          keepAliveTimeout: 72_000,
          ServerResponse: closingAwareResponse(() => closing),
        },
        handler,
      );
      connections = trackConnections(server, config.headersTimeoutMs);
      return server;
    },
    // Errors Fastify raises before routing, and the ones Node raises before Fastify sees a request,
    // are answered with the same envelope as every other error.
    frameworkErrors: (error, request, reply) => {
      reply.header('X-Request-Id', request.id).header('X-Content-Type-Options', 'nosniff');
      return sendError(reply, frameworkError(error));
    },
    clientErrorHandler: clientErrorAnswerer(config.publicUrl),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // A request that arrives while the server closes is refused in the API's own envelope (onRequest).
    return503OnClosing: false,
    // Behind N trusted proxies the client address (used by the failed-authentication throttle)
    // is taken from X-Forwarded-For; otherwise from the socket.
    trustProxy:
      config.trustProxyHops > 0 ? (_address: string, hop: number) => hop < config.trustProxyHops : false,
    // A caller's X-Request-Id is kept when it is sane; otherwise Kosh makes one.
    requestIdHeader: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      if (typeof incoming === 'string' && REQUEST_ID.test(incoming)) return incoming;
      counter++;
      return `${requestIdPrefix}${counter.toString(36)}`;
    },
    // Route schemas compiled once per process, not once per server built (./schema-compilers.ts).
    schemaController,
    ajv: {
      // Never coerce JSON types and never drop unknown fields silently: both are refused with a clear error.
      // All errors are collected so that an unknown field (a typo) is named before the missing one it hides.
      customOptions: {
        allowUnionTypes: true,
        coerceTypes: false,
        removeAdditional: false,
        useDefaults: true,
        allErrors: true,
        // The multipart upload's body schema documents its parts without `type: object` (the parts
        // are read by the handler, not validated as a body); Ajv's type lint would warn about it
        // on every start.
        strictTypes: false,
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const metrics = createMetrics();
  const routes: RouteSummary[] = [];
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { hide?: boolean } | undefined;
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') routes.push({ method, url: route.url, documented: !schema?.hide });
    }
  });
  app.decorate('routeSummaries', () => [...routes]);
  app.decorate('koshPublicUrl', config.publicUrl);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Kosh API',
        version: '1.0.0',
        description:
          'Orders, S2S net banking and wallet payments, payment methods, webhooks and merchant onboarding.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      // Relative first: "Try it out" on /docs calls the address the page was opened at.
      servers: [
        { url: '/', description: 'The address this document was read from' },
        ...(config.publicUrl ? [{ url: config.publicUrl, description: 'KOSH_PUBLIC_URL' }] : []),
      ],
      components: {
        securitySchemes: { basicAuth: { type: 'http', scheme: 'basic', description: 'api_key:secret_key' } },
      },
      security: [{ basicAuth: [] }],
    },
    transformObject: (documents) =>
      refineDocument((documents as { openapiObject: Record<string, unknown> }).openapiObject),
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // Same-origin calls only, and none upgraded to https: "Try it out" works on http://127.0.0.1 too.
    staticCSP:
      "default-src 'self'; base-uri 'self'; connect-src 'self'; font-src 'self' data:; frame-ancestors 'none'; img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self'",
    theme: { title: 'Kosh API reference' },
    logo: { type: 'image/svg+xml', content: KOSH_LOGO },
    uiConfig: { validatorUrl: null, tryItOutEnabled: false, persistAuthorization: false },
  });

  app.addSchema(ErrorResponse);
  app.addHook('onRoute', documentCommonErrors);
  recordRoutes(app);
  // Before any route: every POST route must declare how it treats Idempotency-Key.
  checkIdempotencyDeclarations(app);
  registerBodyParsers(app);
  app.setErrorHandler(handleError);
  registerNotFound(app);

  const limiter = createRateLimiter(config.rateLimits, container.services.limits);
  // Hooks take a callback rather than return a promise when their work is synchronous: a promise
  // per hook per request is measurable at thousands of requests a second.
  const authenticate = createAuthHook(services.accounts, config.publicUrl, limiter);
  // Every answer carries its request id, and `nosniff`: responses are data, and a browser must never
  // guess HTML from a body holding a merchant's string. Set when the request arrives (the reply keeps
  // them through errors), so no hook runs as it is sent.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    reply.header('X-Content-Type-Options', 'nosniff');
    // Answers are about this moment and this caller: no cache in between keeps one.
    reply.header('Cache-Control', 'no-store');
    if (request.headers.host === undefined && request.raw.httpVersion !== '1.0') {
      // HTTP/1.1 requires it (RFC 9112, section 3.2).
      sendError(reply, new KoshError('malformed_request', 'The request has no Host header.'));
      return;
    }
    if (closing) {
      // Nothing starts on a server that is stopping; the caller retries (on another server).
      // (Answered here, not thrown: a stop is not a failure to log.)
      sendError(
        reply,
        new KoshError('service_unavailable', 'This server is shutting down; retry the request.'),
      );
      return;
    }
    authenticate(request, reply, done);
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const route = request.routeOptions;
    refuseUndeclaredQuery(request, route);
    refuseUndeclaredBody(request, route);
    refuseUnstorableText(request);
    coerceToSchema(request, route);
    done();
  });
  // Closing. The listener stops accepting at once, but a keep-alive connection that is idle at that
  // instant may already carry the client's next request, which a reset would lose: so for up to
  // DRAIN_GRACE_MS open connections are left to send what they have (a request that arrives is
  // answered 503 in the API's envelope, see onRequest, and its reply closes the connection). Then
  // the connections still idle are closed (between requests, or never used: see trackConnections),
  // requests under way finish, every reply from then on closes its connection
  // (`closingAwareResponse`), and connections that fall idle later are reaped until the server has
  // closed, so none holds the close up (for the keep-alive timeout, or for as long as a client that
  // never sends a byte keeps its connection open).
  app.addHook('preClose', (done) => {
    closing = true;
    // Only a listening server has connections (the tests' injected requests have none).
    if (!app.server.listening) return done();
    const server = app.server;
    let closed = false;
    let drained = false;
    let reaper: NodeJS.Timeout | undefined;
    // After the grace (or once every connection is gone), never twice.
    const finish = () => {
      if (drained) return;
      drained = true;
      if (!closed) {
        connections?.closeIdle();
        reaper = setInterval(() => connections?.closeIdle(), 200).unref();
      }
      done();
    };
    const grace = setTimeout(finish, DRAIN_GRACE_MS);
    server.once('close', () => {
      closed = true;
      clearTimeout(grace);
      clearInterval(reaper);
      finish();
    });
    // net's close, not http's: http's would also close the idle connections now.
    net.Server.prototype.close.call(server);
  });
  const accessLog = createAccessLogger(container.log, { buffered: container.bufferedAccessLog });
  app.addHook('onClose', (_instance, done) => {
    accessLog.flush();
    done();
  });
  app.addHook('onResponse', (request: FastifyRequest, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requestDuration.observe(
      { method: request.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    if (config.requestLog) {
      const principal = request.principal;
      const url = request.url;
      accessLog.write({
        reqId: request.id,
        account_id: principal?.accountId,
        mode: principal?.mode,
        method: request.method,
        url: url.length > ACCESS_URL_MAX ? `${url.slice(0, ACCESS_URL_MAX)}…` : url,
        status: reply.statusCode,
        ms: reply.elapsedTime,
      });
    }
    done();
  });

  registerOpsRoutes(app, { db: container.db, metrics });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  registerErrorDocs(app);
  // Keyed POST routes run their work through `keyed` (./idempotency.ts): the unit of work it
  // hands them (the key's transaction, or the ids of a phased request) goes to the service call.
  const keyed = createKeyed({ idempotency: services.idempotency, db: container.db });
  registerOrderRoutes(app, services.orders, keyed);
  registerMethodsRoutes(app, services.methods);
  registerPaymentRoutes(app, services.payments, keyed);
  registerRefundRoutes(app, services.refunds, keyed);
  registerCheckoutRoutes(app, services.checkout, keyed);
  registerCheckoutPageRoutes(app, services.checkoutPage, config.publicUrl);
  registerDashboardRoutes(app, {
    services,
    publicUrl: config.publicUrl,
    sessionIdleSeconds: config.dashboard.idleSeconds,
    sessionMaxAgeSeconds: config.dashboard.maxAgeSeconds,
    now: () => container.clock.now(),
  });
  registerConnectorAccountRoutes(app, services.connectorAccounts, keyed);
  registerKeyRoutes(app, {
    accounts: services.accounts,
    merchants: services.merchants,
    keyed,
    now: () => container.clock.now(),
  });
  registerAuthenticationRoutes(app, services.authentication, config.publicUrl);
  registerUpiRoutes(app, services.authentication, config.publicUrl);
  registerCallbackRoutes(app, services.providerReturns, config.publicUrl);
  await registerProviderWebhookRoutes(app, services.providerReturns);
  registerWebhookRoutes(app, services.webhooks, keyed);
  registerEventRoutes(app, services.events, services.webhooks, keyed);
  registerMerchantRoutes(app, services.merchants, keyed);
  await registerDocumentRoutes(app, services.documents, config.kycMaxFileBytes, keyed);
  registerVpaRoutes(app, services.vpas, keyed);

  await app.ready();
  return app;
}

/**
 * The server's responses, each closing its keep-alive connection once `closing()` says so. Decided
 * as the head is written, for every response (routes, errors, pages and Fastify's own), so that a
 * client whose request was under way when the close began sends nothing more on that connection.
 */
function closingAwareResponse(closing: () => boolean) {
  return class ClosingAwareResponse extends http.ServerResponse {
    override writeHead(...args: [statusCode: number, ...rest: unknown[]]): this {
      if (closing()) this.setHeader('Connection', 'close');
      return super.writeHead(...(args as Parameters<http.ServerResponse['writeHead']>));
    }
  };
}
