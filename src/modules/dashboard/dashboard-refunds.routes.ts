import type { App } from '../../http/app-types.js';
import {
  type DashboardDeps,
  hidden,
  IdParams,
  merchantOnly,
  PAGE_SIZE,
  type SignedInOptions,
  sendPage,
  sessionOf,
} from './dashboard.context.js';
import { RefundsQuery, refundQuery } from './filters.js';
import { DASHBOARD, page } from './layout.js';
import { refundContent, refundsContent } from './pages.js';

/** The refunds list and a refund's page (refunds are created from a payment's page). */
export function registerRefundPages(app: App, deps: DashboardDeps, route: SignedInOptions): void {
  const { services } = deps;

  app.get(
    `${DASHBOARD}/refunds/`,
    { ...route, schema: { ...hidden, querystring: RefundsQuery } },
    async (request, reply) => {
      const session = sessionOf(request);
      merchantOnly(session);
      const filters = request.query;
      const list = await services.refunds.list(session.scope, refundQuery(filters, PAGE_SIZE));
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
      const session = sessionOf(request);
      merchantOnly(session);
      const refund = await services.refunds.get(session.scope, request.params.id);
      return sendPage(
        reply,
        page(session, { title: `Refund ${refund.id}`, section: '/refunds/' }, refundContent(refund)),
      );
    },
  );
}
