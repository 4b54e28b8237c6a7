import { Type } from 'typebox';
import type { App } from '../../http/app-types.js';
import {
  type DashboardDeps,
  hidden,
  PAGE_SIZE,
  type SignedInOptions,
  sendPage,
  sessionOf,
  text,
} from './dashboard.context.js';
import { DASHBOARD, page } from './layout.js';
import { homeContent, merchantsContent } from './pages.js';

/** The first page: a merchant's captured volume, or a partner's merchants. */
export function registerHomeRoutes(app: App, deps: DashboardDeps, route: SignedInOptions): void {
  const { services } = deps;
  app.get(
    `${DASHBOARD}/`,
    {
      ...route,
      schema: { ...hidden, querystring: Type.Object({ cursor: text(100) }, { additionalProperties: false }) },
    },
    async (request, reply) => {
      const session = sessionOf(request);
      if (session.accountKind === 'partner') {
        const list = await services.merchants.list(session.scope, {
          limit: PAGE_SIZE,
          cursor: request.query.cursor,
        });
        return sendPage(reply, page(session, { title: 'Merchants', section: '/' }, merchantsContent(list)));
      }
      const summary = await services.payments.summary(session.scope);
      return sendPage(reply, page(session, { title: 'Home', section: '/' }, homeContent(summary)));
    },
  );
}
