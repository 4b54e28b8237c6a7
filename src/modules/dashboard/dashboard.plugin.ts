import fastifyCookie from '@fastify/cookie';
import { Type } from 'typebox';
import { KoshError } from '../../domain/errors.js';
import type { App } from '../../http/app-types.js';
import { STYLESHEET_NAME, stylesheet } from './assets.js';
import { common, type DashboardDeps, hidden } from './dashboard.context.js';
import { registerHomeRoutes } from './dashboard-home.routes.js';
import { registerKeyPages } from './dashboard-keys.routes.js';
import { registerOrderPages } from './dashboard-orders.routes.js';
import { registerPartnerPages } from './dashboard-partner.routes.js';
import { registerPaymentPages } from './dashboard-payments.routes.js';
import { registerRefundPages } from './dashboard-refunds.routes.js';
import { registerSettingsPages } from './dashboard-settings.routes.js';
import { registerWebhookPages } from './dashboard-webhooks.routes.js';
import { DASHBOARD } from './layout.js';
import { registerSessionRoutes } from './session.js';

export type { DashboardDeps } from './dashboard.context.js';

/**
 * The dashboard: server-rendered pages at /dashboard/, signed in with a session cookie, reading and
 * changing data only through the same services (and the same account and mode scoping) as the API.
 * Its routes live in their own plugin scope, the only one where @fastify/cookie parses cookies.
 */
export function registerDashboardRoutes(app: App, deps: DashboardDeps): void {
  app.register(async (scope: App) => {
    await scope.register(fastifyCookie);

    scope.get(
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

    const route = registerSessionRoutes(scope, deps);
    registerHomeRoutes(scope, deps, route);
    registerPaymentPages(scope, deps, route);
    registerOrderPages(scope, deps, route);
    registerRefundPages(scope, deps, route);
    registerWebhookPages(scope, deps, route);
    registerKeyPages(scope, deps, route);
    registerSettingsPages(scope, deps, route);
    registerPartnerPages(scope, deps, route);
  });
}
