import type { App } from '../../http/app-types.js';
import {
  CursorQuery,
  type DashboardDeps,
  hidden,
  IdParams,
  merchantOnly,
  PAGE_SIZE,
  type SignedInOptions,
  sendPage,
  sessionOf,
} from './dashboard.context.js';
import { type OrderFilters, OrdersQuery, orderQuery } from './filters.js';
import { DASHBOARD, page } from './layout.js';
import { orderContent, ordersContent } from './pages.js';

/** The orders list and an order's page with its payments. */
export function registerOrderPages(app: App, deps: DashboardDeps, route: SignedInOptions): void {
  const { services } = deps;

  app.get(
    `${DASHBOARD}/orders/`,
    { ...route, schema: { ...hidden, querystring: OrdersQuery } },
    async (request, reply) => {
      const session = sessionOf(request);
      merchantOnly(session);
      const filters = request.query as OrderFilters;
      const list = await services.orders.list(session.scope, orderQuery(filters, PAGE_SIZE));
      return sendPage(
        reply,
        page(session, { title: 'Orders', section: '/orders/' }, ordersContent(list, filters)),
      );
    },
  );

  app.get(
    `${DASHBOARD}/orders/:id/`,
    { ...route, schema: { ...hidden, params: IdParams, querystring: CursorQuery } },
    async (request, reply) => {
      const session = sessionOf(request);
      merchantOnly(session);
      const order = await services.orders.get(session.scope, request.params.id);
      const { cursor } = request.query;
      const payments = await services.payments.list(session.scope, { limit: 100, cursor }, order.id);
      return sendPage(
        reply,
        page(session, { title: `Order ${order.id}`, section: '/orders/' }, orderContent(order, payments)),
      );
    },
  );
}
