import type { App } from '../../http/app-types.js';
import {
  type DashboardDeps,
  hidden,
  merchantOnly,
  type SignedInOptions,
  sendPage,
  sessionOf,
} from './dashboard.context.js';
import { DASHBOARD, page } from './layout.js';
import { settingsContent } from './pages.js';

/**
 * A merchant's banks and wallets of the mode as customers are offered them (in live mode, those its
 * connector account takes), and in live mode its connector accounts.
 */
export function registerSettingsPages(app: App, deps: DashboardDeps, route: SignedInOptions): void {
  const { services } = deps;

  app.get(`${DASHBOARD}/settings/`, { ...route, schema: hidden }, async (request, reply) => {
    const session = sessionOf(request);
    merchantOnly(session);
    const methods = await services.methods.offered(session.user.account_id, session.mode);
    const connectorAccounts =
      session.mode === 'live'
        ? (await services.connectorAccounts.list(session.scope, { limit: 100 })).data
        : undefined;
    return sendPage(
      reply,
      page(
        session,
        { title: 'Settings', section: '/settings/' },
        settingsContent(
          {
            netbanking: Object.values(methods.netbanking),
            wallet: Object.values(methods.wallet),
            upi: methods.upi,
          },
          session.mode,
          connectorAccounts,
        ),
      ),
    );
  });
}
