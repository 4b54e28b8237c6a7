import type { FastifyError, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { ERROR_CATALOGUE, KoshError } from '../../domain/errors.js';
import { toKoshError } from '../../http/errors.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import type { ConnectorAccountsService } from '../connector-accounts/connector-accounts.service.js';
import type { EventsService } from '../events/events.service.js';
import type { IdempotencyService } from '../idempotency/idempotency.service.js';
import type { DocumentsService } from '../merchants/documents.service.js';
import type { MerchantsService } from '../merchants/merchants.service.js';
import type { VpasService } from '../merchants/vpas.service.js';
import type { MethodsService } from '../methods/methods.service.js';
import type { OrdersService } from '../orders/orders.service.js';
import type { PaymentsService } from '../payments/payments.service.js';
import type { RefundsService } from '../refunds/refunds.service.js';
import type { WebhooksService } from '../webhooks/webhooks.service.js';
import { errorPage, type Notice } from './layout.js';
import type { DashboardSession, DashboardUsers } from './users.service.js';

/** The services the pages read and change data through: the same ones, and the same scoping, as the API. */
export interface DashboardServices {
  accounts: AccountsService;
  connectorAccounts: ConnectorAccountsService;
  dashboardUsers: DashboardUsers;
  documents: DocumentsService;
  events: EventsService;
  /** A form that makes something makes it once per rendering (./form-once.ts). */
  idempotency: IdempotencyService;
  merchants: MerchantsService;
  methods: MethodsService;
  orders: OrdersService;
  payments: PaymentsService;
  refunds: RefundsService;
  vpas: VpasService;
  webhooks: WebhooksService;
}

export interface DashboardDeps {
  services: DashboardServices;
  publicUrl: string;
  sessionIdleSeconds: number;
  /** A session's maximum age: how long a rendered form can be posted. */
  sessionMaxAgeSeconds: number;
  /** The service's clock (key statuses: expiring, expired). */
  now(): Date;
}

/** Pages ask for this many rows at a time; never the whole list. */
export const PAGE_SIZE = 25;

/**
 * Security headers of every dashboard answer: no script may run (the pages have none), styles only
 * from Kosh's own stylesheet, forms post only to Kosh, never framed, never cached.
 */
const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('Content-Security-Policy', CSP)
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Frame-Options', 'DENY')
    .header('Cross-Origin-Opener-Policy', 'same-origin');
}

export function sendPage(reply: FastifyReply, markup: string, status = 200): FastifyReply {
  return securityHeaders(reply).code(status).type('text/html; charset=utf-8').send(markup);
}

export function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return securityHeaders(reply).redirect(location, 303);
}

/** Every failure of a dashboard route answers the dashboard's own error page; a 5xx never says why. */
export function dashboardErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const kosh = toKoshError(error);
  const status = ERROR_CATALOGUE[kosh.code].status;
  if (status >= 500) request.log.error({ err: error }, 'dashboard page failed');
  const message = status >= 500 ? ERROR_CATALOGUE[kosh.code].message : kosh.message;
  return sendPage(reply, errorPage(request.dashboard, status, message), status);
}

/** Notices a redirect may name (`?done=…`): fixed texts, never a value from the URL. */
const NOTICES: Record<string, string> = {
  refunded: 'Refund created.',
  refunding: 'This form was already sent: its one refund is being made and is listed below once recorded.',
  busy: 'This form was already sent and is still being handled: what it makes is listed below once made.',
  resent: 'The event was queued for delivery again.',
  revoked: 'Key revoked: it stopped working at once.',
  rotated: 'Secret rotated.',
  disabled: 'Endpoint disabled.',
  enabled: 'Endpoint enabled.',
};

export const notice = (done: string | undefined): Notice | undefined =>
  done && NOTICES[done] ? { kind: 'info', text: NOTICES[done] } : undefined;

export const text = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
const Csrf = { csrf: Type.String({ maxLength: 200 }) };
/** A signed-in form's body: its fields and the CSRF token. */
export const form = <T extends Record<string, TSchema>>(fields: T) =>
  Type.Object({ ...Csrf, ...fields }, { additionalProperties: false });
export const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
export const KeyParams = Type.Object({ key: Type.String({ maxLength: 100 }) });
export const DoneQuery = Type.Object({ done: text(20) }, { additionalProperties: false });
/** A page with one list cut at a page: the `next_cursor` of the part shown before. */
export const CursorQuery = Type.Object({ cursor: text(100) }, { additionalProperties: false });
/** Dashboard routes are not part of the API's OpenAPI document. */
export const hidden = { hide: true };

/** Options of every dashboard route: no API key, and the dashboard's error page. */
export const common = {
  config: { auth: 'none' as const, idempotency: false as const },
  errorHandler: dashboardErrorHandler,
};

/** Options of a signed-in route: `common` and the session check (`signedIn` from ./session.ts). */
export interface SignedInOptions {
  config: { auth: 'none'; idempotency: false };
  errorHandler: typeof dashboardErrorHandler;
  preHandler: preHandlerAsyncHookHandler;
}

/** The signed-in user of a route behind `signedIn`. */
export const sessionOf = (request: FastifyRequest) => request.dashboard as DashboardSession;

export function merchantOnly(session: DashboardSession): void {
  if (session.accountKind !== 'merchant') throw new KoshError('resource_not_found', 'No such page.');
}

export function partnerOnly(session: DashboardSession): void {
  if (session.accountKind !== 'partner') throw new KoshError('resource_not_found', 'No such page.');
}
