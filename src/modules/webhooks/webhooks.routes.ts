import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { KoshError } from '../../domain/errors.js';
import type { App } from '../../http/app-types.js';
import { principalOf } from '../../http/auth.js';
import { describePattern } from '../../http/errors.js';
import type { Keyed } from '../../http/idempotency.js';
import { errorResponses, IdParams, ListQuery, listOf } from '../../http/schemas.js';
import type { Principal } from '../accounts/principal.js';
import { EVENT_TYPE_LIST } from '../events/events.schemas.js';
import {
  CreateEndpointBody,
  Endpoint,
  EventTypePattern,
  RotateSecretBody,
  UpdateEndpointBody,
} from './webhooks.schemas.js';
import type { WebhooksService } from './webhooks.service.js';

const tags = ['Webhooks'];

/** Form bodies carry no arrays (the shared form parser refuses them): `enabled_events=a,b` is split here. */
async function splitFormEventList(request: FastifyRequest): Promise<void> {
  const body = request.body as Record<string, unknown> | undefined;
  if (
    request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') &&
    typeof body?.enabled_events === 'string'
  ) {
    body.enabled_events = body.enabled_events.split(',').map((type) => type.trim());
  }
}
const one = Type.Object({ data: Endpoint, message: Type.String() });

describePattern(EventTypePattern, `is not an event type: ${EVENT_TYPE_LIST}; or *`);

/** `merchant.<status>` events are about a partner's merchants: a merchant's own endpoint never gets one. */
function refusePartnerEvents(principal: Principal, events: string[] | undefined): void {
  if (principal.accountKind !== 'merchant' || !events) return;
  const index = events.findIndex((type) => type.startsWith('merchant.'));
  if (index < 0) return;
  throw new KoshError(
    'invalid_field',
    `The field 'enabled_events.${index}' is '${events[index]}', an event sent only to partners, about their merchants: a merchant's endpoint never receives it.`,
    `enabled_events.${index}`,
  );
}

/** Webhook endpoints. Merchant and partner keys both manage their own account's endpoints. */
export function registerWebhookRoutes(app: App, webhooks: WebhooksService, keyed: Keyed): void {
  app.post(
    '/v1/webhooks/',
    {
      // The URL's host is resolved before the endpoint is written: never inside a transaction.
      config: { auth: 'any', idempotency: 'phased' },
      preValidation: splitFormEventList,
      schema: {
        tags,
        summary: 'Register a webhook endpoint',
        description: 'The response carries the `whsec_` signing secret; it is not shown again.',
        body: CreateEndpointBody,
        response: { 200: one, ...errorResponses(400, 415) },
      },
    },
    async (request, reply) =>
      keyed(request, reply, async (work) => {
        refusePartnerEvents(principalOf(request), request.body.enabled_events);
        return {
          data: await webhooks.create(principalOf(request), request.body, { ids: work.ids }),
          message: 'Webhook endpoint created. Keep the secret: it is not shown again.',
        };
      }),
  );

  app.get(
    '/v1/webhooks/',
    {
      config: { auth: 'any' },
      schema: {
        tags,
        summary: 'List webhook endpoints, newest first',
        querystring: ListQuery,
        response: { 200: listOf(Endpoint), ...errorResponses(400) },
      },
    },
    async (request) => webhooks.list(principalOf(request), request.query),
  );

  app.get(
    '/v1/webhooks/:id/',
    {
      config: { auth: 'any' },
      schema: {
        tags,
        summary: 'Fetch a webhook endpoint',
        params: IdParams,
        response: { 200: one, ...errorResponses(404) },
      },
    },
    async (request) => ({
      data: await webhooks.get(principalOf(request), request.params.id),
      message: 'Webhook endpoint fetched.',
    }),
  );

  app.patch(
    '/v1/webhooks/:id/',
    {
      config: { auth: 'any' },
      preValidation: splitFormEventList,
      schema: {
        tags,
        summary: 'Update a webhook endpoint',
        description: 'Disabling an endpoint fails its pending deliveries; they can be redelivered later.',
        params: IdParams,
        body: UpdateEndpointBody,
        response: { 200: one, ...errorResponses(400, 404, 415) },
      },
    },
    async (request) => {
      refusePartnerEvents(principalOf(request), request.body.enabled_events);
      return {
        data: await webhooks.update(principalOf(request), request.params.id, request.body),
        message: 'Webhook endpoint updated.',
      };
    },
  );

  app.delete(
    '/v1/webhooks/:id/',
    {
      config: { auth: 'any' },
      schema: {
        tags,
        summary: 'Delete a webhook endpoint',
        params: IdParams,
        response: {
          200: Type.Object({
            data: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }),
            message: Type.String(),
          }),
          ...errorResponses(404),
        },
      },
    },
    async (request) => ({
      data: await webhooks.remove(principalOf(request), request.params.id),
      message: 'Webhook endpoint deleted.',
    }),
  );

  app.post(
    '/v1/webhooks/:id/rotate-secret/',
    {
      config: { auth: 'any', idempotency: 'atomic' },
      // No fields: a body is optional, and one with any field is refused rather than ignored.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags,
        summary: 'Rotate the signing secret',
        description:
          'Returns the new secret. For 24 hours deliveries carry signatures with both the old and the new secret.',
        params: IdParams,
        body: RotateSecretBody,
        response: { 200: one, ...errorResponses(400, 404, 415) },
      },
    },
    async (request, reply) =>
      keyed(request, reply, async (work) => ({
        data: await webhooks.rotateSecret(principalOf(request), request.params.id, work.db),
        message: 'Secret rotated. The previous secret stays valid for 24 hours.',
      })),
  );
}
