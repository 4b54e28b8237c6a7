import { Type } from 'typebox';
import type { App } from '../../http/app-types.js';
import { sendDownload } from '../../http/download.js';
import {
  type DashboardDeps,
  hidden,
  IdParams,
  partnerOnly,
  type SignedInOptions,
  sendPage,
  sessionOf,
  text,
} from './dashboard.context.js';
import { DASHBOARD, page } from './layout.js';
import { merchantContent } from './pages.js';

/** A partner's view of one of its merchants (the list is the partner's home page). */
export function registerPartnerPages(app: App, deps: DashboardDeps, route: SignedInOptions): void {
  const { services } = deps;

  app.get(
    `${DASHBOARD}/merchants/:id/`,
    {
      ...route,
      schema: {
        ...hidden,
        params: IdParams,
        // Each list of the page pages on its own.
        querystring: Type.Object(
          { documents_cursor: text(100), vpas_cursor: text(100) },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request);
      partnerOnly(session);
      const merchant = await services.merchants.get(session.scope, request.params.id);
      const cursors = request.query;
      const [documents, vpas] = await Promise.all([
        services.documents.list(session.scope, merchant.id, { limit: 100, cursor: cursors.documents_cursor }),
        services.vpas.list(session.scope, merchant.id, { limit: 100, cursor: cursors.vpas_cursor }),
      ]);
      return sendPage(
        reply,
        page(
          session,
          { title: merchant.display_name, section: '/' },
          merchantContent(merchant, documents, vpas, cursors),
        ),
      );
    },
  );

  // A KYC document's file, as the API's download gives it (any host: the bytes are in the database).
  app.get(
    `${DASHBOARD}/merchants/:id/documents/:document/file`,
    {
      ...route,
      schema: {
        ...hidden,
        params: Type.Object({ id: IdParams.properties.id, document: IdParams.properties.id }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request);
      partnerOnly(session);
      const { id, document } = request.params;
      const download = await services.documents.download(session.scope, id, document);
      return sendDownload(reply, {
        mimeType: download.document.mime_type,
        fileName: download.fileName,
        content: download.content,
      });
    },
  );
}
