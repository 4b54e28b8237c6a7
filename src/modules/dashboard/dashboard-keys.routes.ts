import { Type } from 'typebox';
import { KoshError } from '../../domain/errors.js';
import type { App } from '../../http/app-types.js';
import { toApiKey } from '../accounts/keys.routes.js';
import {
  type DashboardDeps,
  DoneQuery,
  form,
  hidden,
  KeyParams,
  notice,
  type SignedInOptions,
  seeOther,
  sendPage,
  sessionOf,
} from './dashboard.context.js';
import { answersOnce, BUSY, FormKeyField, newFormKey } from './form-once.js';
import { DASHBOARD, type Notice, page } from './layout.js';
import { keysContent } from './pages.js';
import type { DashboardSession } from './users.service.js';

/** The API keys of the session's mode: create, roll, revoke (merchants and partners alike). */
export function registerKeyPages(app: App, deps: DashboardDeps, route: SignedInOptions): void {
  const { services } = deps;

  const keysPage = async (session: DashboardSession, shown?: Notice) => {
    const now = deps.now();
    const rows = await services.accounts.listKeys(session.user.account_id, session.mode);
    const keys = rows.map((row) => toApiKey(row, now));
    return page(
      session,
      { title: 'API keys', section: '/keys/', notice: shown },
      keysContent(session, keys, newFormKey()),
    );
  };

  /**
   * A form that makes a key makes one per rendering (./form-once.ts): a double-click or a resubmit
   * shows the one key made, with its secret, instead of making a second key whose secret nobody sees.
   */
  const once = answersOnce(services.idempotency, deps.sessionMaxAgeSeconds);

  app.get(
    `${DASHBOARD}/keys/`,
    { ...route, schema: { ...hidden, querystring: DoneQuery } },
    async (request, reply) => sendPage(reply, await keysPage(sessionOf(request), notice(request.query.done))),
  );

  app.post(
    `${DASHBOARD}/keys/`,
    { ...route, schema: { ...hidden, body: form({ ...FormKeyField }) } },
    async (request, reply) => {
      const session = sessionOf(request);
      const created = await once(
        request,
        session,
        { action: 'key', key: request.body.form_key },
        async () => {
          const made = await services.accounts.issueKey(session.user.account_id, session.mode);
          return { api_key: made.api_key, secret_key: made.secret_key };
        },
      );
      if (created === BUSY) return seeOther(reply, `${DASHBOARD}/keys/?done=busy`);
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
        body: form({ overlap_seconds: Type.Integer({ minimum: 0, maximum: 604_800 }), ...FormKeyField }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request);
      const rolled = await once(
        request,
        session,
        { action: `roll:${request.params.key}`, key: request.body.form_key },
        async () => {
          const made = await services.accounts.rollKey(
            session.user.account_id,
            request.params.key,
            request.body.overlap_seconds,
            session.mode,
          );
          if (!made) throw new KoshError('resource_not_found', `No key ${request.params.key}.`);
          return { api_key: made.credentials.api_key, secret_key: made.credentials.secret_key };
        },
      );
      if (rolled === BUSY) return seeOther(reply, `${DASHBOARD}/keys/?done=busy`);
      return sendPage(
        reply,
        await keysPage(session, {
          kind: 'info',
          text: `Key rolled: ${rolled.api_key} replaces ${request.params.key}. Its secret key, shown only now:`,
          secret: rolled.secret_key,
        }),
      );
    },
  );

  app.post(
    `${DASHBOARD}/keys/:key/revoke/`,
    { ...route, schema: { ...hidden, params: KeyParams, body: form({}) } },
    async (request, reply) => {
      const session = sessionOf(request);
      const revoked = await services.accounts.revokeKey(
        session.user.account_id,
        request.params.key,
        session.mode,
      );
      if (!revoked) throw new KoshError('resource_not_found', `No key ${request.params.key}.`);
      return seeOther(reply, `${DASHBOARD}/keys/?done=revoked`);
    },
  );
}
