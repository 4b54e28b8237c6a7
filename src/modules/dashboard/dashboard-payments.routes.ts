import { Type } from 'typebox';
import { KoshError } from '../../domain/errors.js';
import type { Page as ListPage } from '../../domain/pagination.js';
import type { App } from '../../http/app-types.js';
import type { Payment } from '../payments/payments.model.js';
import { paymentsCsv } from './csv.js';
import {
  type DashboardDeps,
  type DashboardServices,
  form,
  hidden,
  IdParams,
  merchantOnly,
  notice,
  PAGE_SIZE,
  type SignedInOptions,
  securityHeaders,
  seeOther,
  sendPage,
  sessionOf,
  text,
} from './dashboard.context.js';
import { type PaymentFilters, PaymentsQuery, paymentQuery } from './filters.js';
import { FormKeyField, newFormKey, oncePerForm } from './form-once.js';
import { DASHBOARD, page } from './layout.js';
import { paymentContent, paymentsContent } from './pages.js';
import type { DashboardSession } from './users.service.js';

/** The CSV export reads the filtered list in pages of the API's maximum size, up to this many rows. */
const EXPORT_LIMIT = 10_000;
/** The payment page shows each event's latest deliveries, up to this many. */
const DELIVERIES_PER_EVENT = 20;

/** A payment id in the search box finds that payment (the other filters must match it too). */
async function searchPayments(
  services: DashboardServices,
  session: DashboardSession,
  filters: PaymentFilters,
  limit: number,
): Promise<ListPage<Payment>> {
  const query = paymentQuery(filters, limit);
  const id = filters.q?.trim();
  if (!id?.startsWith('pay_')) return services.payments.list(session.scope, query);
  const found = await services.payments.get(session.scope, id).catch((error: unknown) => {
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
}

/** The payments list, its CSV export, a payment's page and its Refund form. */
export function registerPaymentPages(app: App, deps: DashboardDeps, route: SignedInOptions): void {
  const { services } = deps;

  app.get(
    `${DASHBOARD}/payments/`,
    { ...route, schema: { ...hidden, querystring: PaymentsQuery } },
    async (request, reply) => {
      const session = sessionOf(request);
      merchantOnly(session);
      const filters = request.query as PaymentFilters;
      const list = await searchPayments(services, session, filters, PAGE_SIZE);
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
      const session = sessionOf(request);
      merchantOnly(session);
      const filters = { ...(request.query as PaymentFilters), cursor: undefined };
      const rows: Payment[] = [];
      let cursor: string | undefined;
      do {
        const list: ListPage<Payment> = await searchPayments(services, session, { ...filters, cursor }, 100);
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
        querystring: Type.Object(
          { done: text(20), refunds_cursor: text(100) },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request);
      merchantOnly(session);
      const payment = await services.payments.get(session.scope, request.params.id);
      const cursor = request.query.refunds_cursor;
      const [events, refunds] = await Promise.all([
        services.events.forPayment(session.scope, payment.id),
        services.refunds.list(session.scope, { limit: 100, cursor }, payment.id),
      ]);
      const deliveries = await services.webhooks.latestDeliveriesOfEvents(
        session.scope,
        events.map((event) => event.id),
        DELIVERIES_PER_EVENT,
      );
      const withDeliveries = events.map((event) => ({
        ...event,
        deliveries: deliveries.get(event.id) ?? [],
      }));
      return sendPage(
        reply,
        page(
          session,
          { title: `Payment ${payment.id}`, section: '/payments/', notice: notice(request.query.done) },
          paymentContent(session, payment, withDeliveries, refunds, newFormKey()),
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
        body: form({ amount: Type.Optional(Type.Integer({ minimum: 1 })), ...FormKeyField }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request);
      merchantOnly(session);
      const payment = await services.payments.get(session.scope, request.params.id);
      const back = `${DASHBOARD}/payments/${payment.id}/`;
      // One rendering of the form makes one refund at most: a resubmit or a double-click lands on
      // the first post's answer.
      const location = await oncePerForm(
        services.idempotency,
        request,
        session,
        {
          action: 'refund',
          key: request.body.form_key,
          retainSeconds: deps.sessionMaxAgeSeconds,
          busy: `${back}?done=refunding`,
        },
        async (ids) => {
          await services.refunds.create(session.scope, payment.id, { amount: request.body.amount }, { ids });
          return `${back}?done=refunded`;
        },
      );
      return seeOther(reply, location);
    },
  );
}
