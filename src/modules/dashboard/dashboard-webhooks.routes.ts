import { Type } from 'typebox';
import type { App } from '../../http/app-types.js';
import {
  type DashboardDeps,
  form,
  hidden,
  IdParams,
  merchantOnly,
  notice,
  type SignedInOptions,
  seeOther,
  sendPage,
  sessionOf,
  text,
} from './dashboard.context.js';
import { answersOnce, BUSY, FormKeyField, newFormKey } from './form-once.js';
import { DASHBOARD, type Notice, page } from './layout.js';
import { webhooksContent } from './pages.js';
import type { DashboardSession } from './users.service.js';

/** The webhooks page shows each endpoint's latest deliveries, up to this many. */
const DELIVERIES_PER_ENDPOINT = 10;

/** Webhook endpoints (add, rotate, disable, enable), their latest deliveries, and Resend of an event. */
export function registerWebhookPages(app: App, deps: DashboardDeps, route: SignedInOptions): void {
  const { services } = deps;

  const webhooksPage = async (session: DashboardSession, shown?: Notice, cursor?: string) => {
    const endpoints = await services.webhooks.list(session.scope, { limit: 100, cursor });
    const deliveries = await services.webhooks.latestDeliveriesOfEndpoints(
      session.scope,
      endpoints.data.map((endpoint) => endpoint.id),
      DELIVERIES_PER_ENDPOINT,
    );
    const withDeliveries = endpoints.data.map((endpoint) => ({
      ...endpoint,
      deliveries: deliveries.get(endpoint.id) ?? [],
    }));
    return page(
      session,
      { title: 'Webhooks', section: '/webhooks/', notice: shown },
      webhooksContent(session, { ...endpoints, data: withDeliveries }, newFormKey()),
    );
  };
  // A form that makes a signing secret makes one per rendering (./form-once.ts): a double-click shows
  // the one secret made instead of a second endpoint, or a second rotation, whose secret nobody saw.
  const once = answersOnce(services.idempotency, deps.sessionMaxAgeSeconds);

  app.get(
    `${DASHBOARD}/webhooks/`,
    {
      ...route,
      schema: {
        ...hidden,
        querystring: Type.Object({ done: text(20), cursor: text(100) }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request);
      merchantOnly(session);
      const { done, cursor } = request.query;
      return sendPage(reply, await webhooksPage(session, notice(done), cursor));
    },
  );

  app.post(
    `${DASHBOARD}/webhooks/`,
    {
      ...route,
      schema: { ...hidden, body: form({ url: Type.String({ maxLength: 2048 }), ...FormKeyField }) },
    },
    async (request, reply) => {
      const session = sessionOf(request);
      merchantOnly(session);
      const endpoint = await once(
        request,
        session,
        { action: 'endpoint', key: request.body.form_key },
        async () => {
          const made = await services.webhooks.create(session.scope, { url: request.body.url });
          return { id: made.id, secret: made.secret };
        },
      );
      if (endpoint === BUSY) return seeOther(reply, `${DASHBOARD}/webhooks/?done=busy`);
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
    { ...route, schema: { ...hidden, params: IdParams, body: form({ ...FormKeyField }) } },
    async (request, reply) => {
      const session = sessionOf(request);
      merchantOnly(session);
      const { id } = request.params;
      const endpoint = await once(
        request,
        session,
        { action: `rotate:${id}`, key: request.body.form_key },
        async () => {
          const rotated = await services.webhooks.rotateSecret(session.scope, id);
          return { id: rotated.id, secret: rotated.secret };
        },
      );
      if (endpoint === BUSY) return seeOther(reply, `${DASHBOARD}/webhooks/?done=busy`);
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
        const session = sessionOf(request);
        merchantOnly(session);
        await services.webhooks.update(session.scope, request.params.id, {
          enabled: action === 'enable',
        });
        return seeOther(reply, `${DASHBOARD}/webhooks/?done=${action}d`);
      },
    );
  }

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
      const session = sessionOf(request);
      merchantOnly(session);
      const event = await services.events.get(session.scope, request.params.id);
      await services.webhooks.redeliver(session.scope, event, request.body.endpoint_id || undefined);
      const paymentId = (event.data as { payment?: { id?: string } }).payment?.id;
      return seeOther(
        reply,
        paymentId && request.body.back !== 'webhooks'
          ? `${DASHBOARD}/payments/${encodeURIComponent(paymentId)}/?done=resent`
          : `${DASHBOARD}/webhooks/?done=resent`,
      );
    },
  );
}
