import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import type { Services } from '../../container.js';
import { ERROR_CATALOGUE, KoshError } from '../../domain/errors.js';
import type { Page as ListPage } from '../../domain/pagination.js';
import type { Mode } from '../../domain/scope.js';
import type { App } from '../../http/app-types.js';
import { toKoshError } from '../../http/errors.js';
import { toApiKey } from '../accounts/keys.routes.js';
import type { Payment, PaymentListQuery } from '../payments/payments.schemas.js';
import { STYLESHEET_NAME, stylesheet } from './assets.js';
import { paymentsCsv } from './csv.js';
import { DASHBOARD, errorPage, loginPage, type Notice, page } from './layout.js';
import {
  homeContent,
  keysContent,
  merchantContent,
  merchantsContent,
  type OrderFilters,
  orderContent,
  ordersContent,
  type PaymentFilters,
  paymentContent,
  paymentsContent,
  refundContent,
  refundsContent,
  settingsContent,
  webhooksContent,
} from './pages.js';
import type { DashboardSession } from './users.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in dashboard user of a /dashboard page (never set on the API). */
    dashboard?: DashboardSession;
    /** The session cookie's token, for logout and the mode switch. */
    dashboardToken?: string;
  }
}

export const SESSION_COOKIE = 'kosh_session';
export const LOGIN_CSRF_COOKIE = 'kosh_login_csrf';

/**
 * Security headers of every dashboard answer: no script may run (the pages have none), styles only
 * from Kosh's own stylesheet, forms post only to Kosh, never framed, never cached.
 */
const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('Content-Security-Policy', CSP)
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Frame-Options', 'DENY')
    .header('Cross-Origin-Opener-Policy', 'same-origin');
}

function sendPage(reply: FastifyReply, markup: string, status = 200): FastifyReply {
  return securityHeaders(reply).code(status).type('text/html; charset=utf-8').send(markup);
}

function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return securityHeaders(reply).redirect(location, 303);
}

/** Notices a redirect may name (`?done=…`): fixed texts, never a value from the URL. */
const NOTICES: Record<string, string> = {
  refunded: 'Refund created.',
  resent: 'The event was queued for delivery again.',
  revoked: 'Key revoked: it stopped working at once.',
  rotated: 'Secret rotated.',
  disabled: 'Endpoint disabled.',
  enabled: 'Endpoint enabled.',
};

const text = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
const Csrf = { csrf: Type.String({ maxLength: 200 }) };
const form = <T extends Record<string, TSchema>>(fields: T) =>
  Type.Object({ ...Csrf, ...fields }, { additionalProperties: false });
const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const KeyParams = Type.Object({ key: Type.String({ maxLength: 100 }) });
const Done = { done: text(20) };

const PaymentsQuery = Type.Object(
  {
    status: text(20),
    method: text(20),
    bank: text(40),
    wallet: text(40),
    from: text(10),
    to: text(10),
    q: text(254),
    cursor: text(100),
  },
  { additionalProperties: false },
);

const OrdersQuery = Type.Object(
  { status: text(20), receipt: text(40), from: text(10), to: text(10), cursor: text(100) },
  { additionalProperties: false },
);

const RefundsQuery = Type.Object(
  { status: text(20), payment_id: text(100), cursor: text(100) },
  { additionalProperties: false },
);

const LoginBody = Type.Object(
  {
    csrf: Type.String({ maxLength: 200 }),
    email: Type.String({ maxLength: 254 }),
    password: Type.String({ maxLength: 1024 }),
  },
  { additionalProperties: false },
);

const sameText = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

function cookieValue(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return decodeURIComponent(part.slice(at + 1).trim());
  }
  return undefined;
}

function cookie(name: string, value: string, options: { secure: boolean; maxAgeSeconds: number }): string {
  return [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${DASHBOARD}/`,
    `Max-Age=${options.maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

/** YYYY-MM-DD as Unix seconds at the start of that day (UTC); `endOfDay` for the next day's start. */
function dayToSeconds(value: string | undefined, field: string, endOfDay = false): number | undefined {
  if (!value) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw new KoshError('invalid_field', `${field} must be a date (YYYY-MM-DD).`, field);
  }
  return Date.parse(`${value}T00:00:00Z`) / 1000 + (endOfDay ? 86_400 : 0);
}

function oneOf<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  field: string,
): T | undefined {
  if (!value) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new KoshError('invalid_field', `${field} must be one of ${allowed.join(', ')}.`, field);
  }
  return value as T;
}

/** The API's payment list query for the page's filters; the search box takes an id, an email or a phone. */
export function paymentQuery(filters: PaymentFilters, limit: number): PaymentListQuery {
  const query: PaymentListQuery = {
    limit,
    status: oneOf(filters.status, ['created', 'pending', 'captured', 'failed'] as const, 'status'),
    method: oneOf(filters.method, ['netbanking', 'wallet'] as const, 'method'),
    bank: filters.bank || undefined,
    wallet: filters.wallet || undefined,
    from: dayToSeconds(filters.from, 'from'),
    to: dayToSeconds(filters.to, 'to', true),
    cursor: filters.cursor || undefined,
  };
  const q = filters.q?.trim();
  if (q && !q.startsWith('pay_')) {
    if (q.startsWith('order_')) query.order_id = q;
    else if (q.includes('@')) query.email = q;
    else query.contact = q;
  }
  return query;
}

/** Pages ask for this many rows at a time; never the whole list. */
const PAGE_SIZE = 25;
/** The CSV export reads the filtered list in pages of the API's maximum size, up to this many rows. */
const EXPORT_LIMIT = 10_000;

export interface DashboardDeps {
  services: Services;
  publicUrl: string;
  sessionIdleSeconds: number;
  /** The service's clock (key statuses: expiring, expired). */
  now(): Date;
}

/**
 * The dashboard: server-rendered pages at /dashboard/, signed in with a session cookie, reading and
 * changing data only through the same services (and the same account and mode scoping) as the API.
 */
export function registerDashboardRoutes(app: App, deps: DashboardDeps): void {
  const { services } = deps;
  const users = services.dashboardUsers;
  const secure = new URL(deps.publicUrl).protocol === 'https:';
  const sessionCookie = (token: string, maxAgeSeconds = deps.sessionIdleSeconds) =>
    cookie(SESSION_COOKIE, token, { secure, maxAgeSeconds });

  const errorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const kosh = toKoshError(error);
    const status = ERROR_CATALOGUE[kosh.code].status;
    if (status >= 500) request.log.error({ err: error }, 'dashboard page failed');
    const message = status >= 500 ? ERROR_CATALOGUE[kosh.code].message : kosh.message;
    return sendPage(reply, errorPage(request.dashboard, status, message), status);
  };

  /** Every signed-in route: the session from the cookie (or the login page), and on POST the CSRF token. */
  const signedIn = async (request: FastifyRequest, reply: FastifyReply) => {
    const token = cookieValue(request, SESSION_COOKIE);
    const session = await users.session(token);
    if (!session || !token) {
      if (request.method === 'GET') return seeOther(reply, `${DASHBOARD}/login/`);
      throw new KoshError('authentication_required', 'Your session has ended; log in again.');
    }
    if (request.method === 'POST' && !users.csrfMatches(token, (request.body as { csrf?: unknown })?.csrf)) {
      throw new KoshError('invalid_field', 'The form has expired; reload the page and try again.', 'csrf');
    }
    request.dashboard = session;
    request.dashboardToken = token;
    // Idle expiry restarts with every page.
    reply.header('Set-Cookie', sessionCookie(token));
  };

  /** A payment id in the search box finds that payment (the other filters must match it too). */
  const searchPayments = async (
    session: DashboardSession,
    filters: PaymentFilters,
    limit: number,
  ): Promise<ListPage<Payment>> => {
    const query = paymentQuery(filters, limit);
    const id = filters.q?.trim();
    if (!id?.startsWith('pay_')) return services.payments.list(session.principal, query);
    const found = await services.payments.get(session.principal, id).catch((error: unknown) => {
      if (error instanceof KoshError && error.code === 'resource_not_found') return undefined;
      throw error;
    });
    const matches =
      found !== undefined &&
      !filters.cursor &&
      (!query.status || found.status === query.status) &&
      (!query.method || found.method === query.method) &&
      (!query.bank || found.bank === query.bank) &&
      (!query.wallet || found.wallet === query.wallet) &&
      (query.from === undefined || found.created_at >= query.from) &&
      (query.to === undefined || found.created_at < query.to);
    return { data: matches ? [found] : [], has_more: false, next_cursor: null };
  };

  const common = { config: { auth: 'none' as const, idempotency: false as const }, errorHandler };
  const route = { ...common, preHandler: signedIn };
  const hidden = { hide: true };
  const of = (request: FastifyRequest) => request.dashboard as DashboardSession;
  const merchantOnly = (session: DashboardSession) => {
    if (session.accountKind !== 'merchant') throw new KoshError('resource_not_found', 'No such page.');
  };
  const partnerOnly = (session: DashboardSession) => {
    if (session.accountKind !== 'partner') throw new KoshError('resource_not_found', 'No such page.');
  };
  const notice = (done: string | undefined): Notice | undefined =>
    done && NOTICES[done] ? { kind: 'info', text: NOTICES[done] } : undefined;

  app.get(
    `${DASHBOARD}/assets/:name`,
    { ...common, schema: { ...hidden, params: Type.Object({ name: Type.String({ maxLength: 100 }) }) } },
    async (request, reply) => {
      if (request.params.name !== STYLESHEET_NAME)
        throw new KoshError('resource_not_found', 'No such asset.');
      return reply
        .header('Cache-Control', 'public, max-age=31536000, immutable')
        .header('X-Content-Type-Options', 'nosniff')
        .type('text/css; charset=utf-8')
        .send(stylesheet());
    },
  );

  app.get(`${DASHBOARD}/login/`, { ...common, schema: hidden }, async (request, reply) => {
    if (await users.session(cookieValue(request, SESSION_COOKIE))) return seeOther(reply, `${DASHBOARD}/`);
    const csrf = randomBytes(24).toString('base64url');
    reply.header('Set-Cookie', cookie(LOGIN_CSRF_COOKIE, csrf, { secure, maxAgeSeconds: 3_600 }));
    return sendPage(reply, loginPage(csrf));
  });

  app.post(
    `${DASHBOARD}/login/`,
    { ...common, schema: { ...hidden, body: LoginBody } },
    async (request, reply) => {
      const expected = cookieValue(request, LOGIN_CSRF_COOKIE);
      if (!expected || !sameText(expected, request.body.csrf)) {
        throw new KoshError(
          'invalid_field',
          'The login form has expired; reload the page and try again.',
          'csrf',
        );
      }
      let token: string;
      try {
        token = await users.login({
          email: request.body.email,
          password: request.body.password,
          address: request.ip,
        });
      } catch (error) {
        if (!(error instanceof KoshError) || error.code === 'service_unavailable') throw error;
        const status = ERROR_CATALOGUE[error.code].status;
        return sendPage(reply, loginPage(expected, error.message), status);
      }
      reply.header('Set-Cookie', [
        sessionCookie(token),
        cookie(LOGIN_CSRF_COOKIE, '', { secure, maxAgeSeconds: 0 }),
      ]);
      return seeOther(reply, `${DASHBOARD}/`);
    },
  );

  app.post(
    `${DASHBOARD}/logout/`,
    { ...route, schema: { ...hidden, body: form({}) } },
    async (request, reply) => {
      await users.logout(request.dashboardToken as string);
      reply.header('Set-Cookie', sessionCookie('', 0));
      return seeOther(reply, `${DASHBOARD}/login/`);
    },
  );

  app.post(
    `${DASHBOARD}/mode/`,
    {
      ...route,
      schema: {
        ...hidden,
        body: form({ mode: Type.Union([Type.Literal('test'), Type.Literal('live')]) }),
      },
    },
    async (request, reply) => {
      await users.setMode(request.dashboardToken as string, request.body.mode as Mode);
      return seeOther(reply, `${DASHBOARD}/`);
    },
  );

  app.get(
    `${DASHBOARD}/`,
    {
      ...route,
      schema: { ...hidden, querystring: Type.Object({ cursor: text(100) }, { additionalProperties: false }) },
    },
    async (request, reply) => {
      const session = of(request);
      if (session.accountKind === 'partner') {
        const list = await services.merchants.list(session.principal, {
          limit: PAGE_SIZE,
          cursor: request.query.cursor,
        });
        return sendPage(reply, page(session, { title: 'Merchants', section: '/' }, merchantsContent(list)));
      }
      const summary = await services.payments.summary(session.principal);
      return sendPage(reply, page(session, { title: 'Home', section: '/' }, homeContent(summary)));
    },
  );

  app.get(
    `${DASHBOARD}/payments/`,
    { ...route, schema: { ...hidden, querystring: PaymentsQuery } },
    async (request, reply) => {
      const session = of(request);
      merchantOnly(session);
      const filters = request.query as PaymentFilters;
      const list = await searchPayments(session, filters, PAGE_SIZE);
      return sendPage(
        reply,
        page(session, { title: 'Payments', section: '/payments/' }, paymentsContent(list, filters)),
      );
    },
  );

  app.get(
    `${DASHBOARD}/payments/export.csv`,
    { ...route, schema: { ...hidden, querystring: PaymentsQuery } },
    async (request, reply) => {
      const session = of(request);
      merchantOnly(session);
      const filters = { ...(request.query as PaymentFilters), cursor: undefined };
      const rows: Payment[] = [];
      let cursor: string | undefined;
      do {
        const list: ListPage<Payment> = await searchPayments(session, { ...filters, cursor }, 100);
        rows.push(...list.data);
        cursor = list.has_more && list.next_cursor ? list.next_cursor : undefined;
      } while (cursor && rows.length < EXPORT_LIMIT);
      return securityHeaders(reply)
        .header('Content-Disposition', `attachment; filename="payments-${session.mode}.csv"`)
        .type('text/csv; charset=utf-8')
        .send(paymentsCsv(rows));
    },
  );

  app.get(
    `${DASHBOARD}/payments/:id/`,
    {
      ...route,
      schema: {
        ...hidden,
        params: IdParams,
        querystring: Type.Object(Done, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const session = of(request);
      merchantOnly(session);
      const payment = await services.payments.get(session.principal, request.params.id);
      const [events, refunds] = await Promise.all([
        services.events.forPayment(session.principal, payment.id),
        services.refunds.list(session.principal, { limit: 100 }, payment.id),
      ]);
      const withDeliveries = await Promise.all(
        events.map(async (event) => ({
          ...event,
          deliveries: (await services.webhooks.deliveriesOf(session.principal, event.id, { limit: 20 })).data,
        })),
      );
      return sendPage(
        reply,
        page(
          session,
          { title: `Payment ${payment.id}`, section: '/payments/', notice: notice(request.query.done) },
          paymentContent(session, payment, withDeliveries, refunds.data),
        ),
      );
    },
  );

  app.post(
    `${DASHBOARD}/payments/:id/refunds/`,
    {
      ...route,
      schema: {
        ...hidden,
        params: IdParams,
        body: form({ amount: Type.Optional(Type.Integer({ minimum: 1 })) }),
      },
    },
    async (request, reply) => {
      const session = of(request);
      merchantOnly(session);
      const payment = await services.payments.get(session.principal, request.params.id);
      await services.refunds.create(session.principal, payment.id, { amount: request.body.amount });
      return seeOther(reply, `${DASHBOARD}/payments/${payment.id}/?done=refunded`);
    },
  );

  app.post(
    `${DASHBOARD}/events/:id/resend/`,
    {
      ...route,
      schema: {
        ...hidden,
        params: IdParams,
        // endpoint_id: only to that endpoint (the webhooks page); otherwise to every endpoint taking it.
        body: form({ endpoint_id: text(100), back: Type.Optional(Type.Literal('webhooks')) }),
      },
    },
    async (request, reply) => {
      const session = of(request);
      merchantOnly(session);
      const event = await services.events.get(session.principal, request.params.id);
      await services.webhooks.redeliver(session.principal, event, request.body.endpoint_id || undefined);
      const paymentId = (event.data as { payment?: { id?: string } }).payment?.id;
      return seeOther(
        reply,
        paymentId && request.body.back !== 'webhooks'
          ? `${DASHBOARD}/payments/${encodeURIComponent(paymentId)}/?done=resent`
          : `${DASHBOARD}/webhooks/?done=resent`,
      );
    },
  );

  app.get(
    `${DASHBOARD}/orders/`,
    { ...route, schema: { ...hidden, querystring: OrdersQuery } },
    async (request, reply) => {
      const session = of(request);
      merchantOnly(session);
      const filters = request.query as OrderFilters;
      const list = await services.orders.list(session.principal, {
        limit: PAGE_SIZE,
        status: oneOf(filters.status, ['created', 'attempted', 'paid'] as const, 'status'),
        receipt: filters.receipt || undefined,
        from: dayToSeconds(filters.from, 'from'),
        to: dayToSeconds(filters.to, 'to', true),
        cursor: filters.cursor || undefined,
      });
      return sendPage(
        reply,
        page(session, { title: 'Orders', section: '/orders/' }, ordersContent(list, filters)),
      );
    },
  );

  app.get(
    `${DASHBOARD}/orders/:id/`,
    { ...route, schema: { ...hidden, params: IdParams } },
    async (request, reply) => {
      const session = of(request);
      merchantOnly(session);
      const order = await services.orders.get(session.principal, request.params.id);
      const payments = await services.payments.list(session.principal, { limit: 100 }, order.id);
      return sendPage(
        reply,
        page(
          session,
          { title: `Order ${order.id}`, section: '/orders/' },
          orderContent(order, payments.data),
        ),
      );
    },
  );

  app.get(
    `${DASHBOARD}/refunds/`,
    { ...route, schema: { ...hidden, querystring: RefundsQuery } },
    async (request, reply) => {
      const session = of(request);
      merchantOnly(session);
      const filters = request.query;
      const list = await services.refunds.list(session.principal, {
        limit: PAGE_SIZE,
        status: oneOf(filters.status, ['pending', 'processed', 'failed'] as const, 'status'),
        payment_id: filters.payment_id || undefined,
        cursor: filters.cursor || undefined,
      });
      return sendPage(
        reply,
        page(session, { title: 'Refunds', section: '/refunds/' }, refundsContent(list, filters)),
      );
    },
  );

  app.get(
    `${DASHBOARD}/refunds/:id/`,
    { ...route, schema: { ...hidden, params: IdParams } },
    async (request, reply) => {
      const session = of(request);
      merchantOnly(session);
      const refund = await services.refunds.get(session.principal, request.params.id);
      return sendPage(
        reply,
        page(session, { title: `Refund ${refund.id}`, section: '/refunds/' }, refundContent(refund)),
      );
    },
  );

  const webhooksPage = async (session: DashboardSession, shown?: Notice) => {
    const endpoints = await services.webhooks.list(session.principal, { limit: 100 });
    const withDeliveries = await Promise.all(
      endpoints.data.map(async (endpoint) => ({
        ...endpoint,
        deliveries: await services.webhooks.recentDeliveries(session.principal, endpoint.id, 10),
      })),
    );
    return page(
      session,
      { title: 'Webhooks', section: '/webhooks/', notice: shown },
      webhooksContent(session, withDeliveries),
    );
  };

  app.get(
    `${DASHBOARD}/webhooks/`,
    { ...route, schema: { ...hidden, querystring: Type.Object(Done, { additionalProperties: false }) } },
    async (request, reply) => {
      const session = of(request);
      merchantOnly(session);
      return sendPage(reply, await webhooksPage(session, notice(request.query.done)));
    },
  );

  app.post(
    `${DASHBOARD}/webhooks/`,
    { ...route, schema: { ...hidden, body: form({ url: Type.String({ maxLength: 2048 }) }) } },
    async (request, reply) => {
      const session = of(request);
      merchantOnly(session);
      const endpoint = await services.webhooks.create(session.principal, { url: request.body.url });
      return sendPage(
        reply,
        await webhooksPage(session, {
          kind: 'info',
          text: `Endpoint ${endpoint.id} added. Its signing secret, shown only now:`,
          secret: endpoint.secret,
        }),
      );
    },
  );

  app.post(
    `${DASHBOARD}/webhooks/:id/rotate/`,
    { ...route, schema: { ...hidden, params: IdParams, body: form({}) } },
    async (request, reply) => {
      const session = of(request);
      merchantOnly(session);
      const endpoint = await services.webhooks.rotateSecret(session.principal, request.params.id);
      return sendPage(
        reply,
        await webhooksPage(session, {
          kind: 'info',
          text: `Secret of ${endpoint.id} rotated; the previous one keeps verifying for 24 hours. The new secret, shown only now:`,
          secret: endpoint.secret,
        }),
      );
    },
  );

  for (const action of ['disable', 'enable'] as const) {
    app.post(
      `${DASHBOARD}/webhooks/:id/${action}/`,
      { ...route, schema: { ...hidden, params: IdParams, body: form({}) } },
      async (request, reply) => {
        const session = of(request);
        merchantOnly(session);
        await services.webhooks.update(session.principal, request.params.id, {
          enabled: action === 'enable',
        });
        return seeOther(reply, `${DASHBOARD}/webhooks/?done=${action}d`);
      },
    );
  }

  const keysPage = async (session: DashboardSession, shown?: Notice) => {
    const now = deps.now();
    const rows = await services.accounts.listKeys(session.user.account_id, session.mode);
    const keys = rows.map((row) => toApiKey(row, now));
    return page(session, { title: 'API keys', section: '/keys/', notice: shown }, keysContent(session, keys));
  };

  app.get(
    `${DASHBOARD}/keys/`,
    { ...route, schema: { ...hidden, querystring: Type.Object(Done, { additionalProperties: false }) } },
    async (request, reply) => sendPage(reply, await keysPage(of(request), notice(request.query.done))),
  );

  app.post(
    `${DASHBOARD}/keys/`,
    { ...route, schema: { ...hidden, body: form({}) } },
    async (request, reply) => {
      const session = of(request);
      const created = await services.accounts.issueKey(session.user.account_id, session.mode);
      return sendPage(
        reply,
        await keysPage(session, {
          kind: 'info',
          text: `Key ${created.api_key} created. Its secret key, shown only now:`,
          secret: created.secret_key,
        }),
      );
    },
  );

  app.post(
    `${DASHBOARD}/keys/:key/roll/`,
    {
      ...route,
      schema: {
        ...hidden,
        params: KeyParams,
        body: form({ overlap_seconds: Type.Integer({ minimum: 0, maximum: 604_800 }) }),
      },
    },
    async (request, reply) => {
      const session = of(request);
      const rolled = await services.accounts.rollKey(
        session.user.account_id,
        request.params.key,
        request.body.overlap_seconds,
        session.mode,
      );
      if (!rolled) throw new KoshError('resource_not_found', `No key ${request.params.key}.`);
      return sendPage(
        reply,
        await keysPage(session, {
          kind: 'info',
          text: `Key rolled: ${rolled.credentials.api_key} replaces ${request.params.key}. Its secret key, shown only now:`,
          secret: rolled.credentials.secret_key,
        }),
      );
    },
  );

  app.post(
    `${DASHBOARD}/keys/:key/revoke/`,
    { ...route, schema: { ...hidden, params: KeyParams, body: form({}) } },
    async (request, reply) => {
      const session = of(request);
      const revoked = await services.accounts.revokeKey(
        session.user.account_id,
        request.params.key,
        session.mode,
      );
      if (!revoked) throw new KoshError('resource_not_found', `No key ${request.params.key}.`);
      return seeOther(reply, `${DASHBOARD}/keys/?done=revoked`);
    },
  );

  app.get(`${DASHBOARD}/settings/`, { ...route, schema: hidden }, async (request, reply) => {
    const session = of(request);
    merchantOnly(session);
    const methods = await services.methods.get(session.user.account_id, session.mode);
    const connectorAccounts =
      session.mode === 'live'
        ? (await services.connectorAccounts.list(session.principal, { limit: 100 })).data
        : undefined;
    return sendPage(
      reply,
      page(
        session,
        { title: 'Settings', section: '/settings/' },
        settingsContent(
          { netbanking: Object.values(methods.netbanking), wallet: Object.values(methods.wallet) },
          connectorAccounts,
        ),
      ),
    );
  });

  app.get(
    `${DASHBOARD}/merchants/:id/`,
    { ...route, schema: { ...hidden, params: IdParams } },
    async (request, reply) => {
      const session = of(request);
      partnerOnly(session);
      const merchant = await services.merchants.get(session.principal, request.params.id);
      const [documents, vpas] = await Promise.all([
        services.documents.list(session.principal, merchant.id, { limit: 100 }),
        services.vpas.list(session.principal, merchant.id, { limit: 100 }),
      ]);
      return sendPage(
        reply,
        page(
          session,
          { title: merchant.display_name, section: '/' },
          merchantContent(merchant, documents.data, vpas.data),
        ),
      );
    },
  );
}
