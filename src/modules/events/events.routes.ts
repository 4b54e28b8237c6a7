import { Type } from 'typebox';
import { KoshError } from '../../domain/errors.js';
import type { App } from '../../http/app-types.js';
import { principalOf } from '../../http/auth.js';
import type { Keyed } from '../../http/idempotency.js';
import { errorResponses, IdParams, ListQuery, listOf } from '../../http/schemas.js';
import { Delivery, RedeliverBody } from '../webhooks/webhooks.schemas.js';
import type { WebhooksService } from '../webhooks/webhooks.service.js';
import { EVENT_TYPE, EVENT_TYPE_LIST, Event, EventListQuery } from './events.schemas.js';
import type { EventsService } from './events.service.js';

const tags = ['Events'];
const deliveryList = Type.Object({
  data: Type.Array(Delivery),
  has_more: Type.Boolean(),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

/** The event log and its webhook deliveries; every query is scoped to the key's account and mode. */
export function registerEventRoutes(
  app: App,
  events: EventsService,
  webhooks: WebhooksService,
  keyed: Keyed,
): void {
  app.get(
    '/v1/events/',
    {
      config: { auth: 'any' },
      schema: {
        tags,
        summary: 'List events, newest first',
        querystring: EventListQuery,
        response: { 200: listOf(Event), ...errorResponses(400) },
      },
    },
    async (request) => {
      // A type Kosh never sends is a typo: refused, not answered with an empty page.
      const { type } = request.query;
      if (type !== undefined && !EVENT_TYPE.test(type)) {
        throw new KoshError(
          'invalid_field',
          `The query parameter 'type' must be an event type Kosh sends: ${EVENT_TYPE_LIST}.`,
          'type',
        );
      }
      return events.list(principalOf(request), request.query);
    },
  );

  app.get(
    '/v1/events/:id/',
    {
      config: { auth: 'any' },
      schema: {
        tags,
        summary: 'Fetch an event',
        params: IdParams,
        response: { 200: Type.Object({ data: Event, message: Type.String() }), ...errorResponses(404) },
      },
    },
    async (request) => ({
      data: await events.get(principalOf(request), request.params.id),
      message: 'Event fetched.',
    }),
  );

  app.get(
    '/v1/events/:id/deliveries/',
    {
      config: { auth: 'any' },
      schema: {
        tags,
        summary: "The event's webhook deliveries with every attempt, newest first",
        params: IdParams,
        querystring: ListQuery,
        response: { 200: deliveryList, ...errorResponses(400, 404) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const event = await events.get(principal, request.params.id);
      return webhooks.deliveriesOf(principal, event.id, request.query);
    },
  );

  app.post(
    '/v1/events/:id/redeliver/',
    {
      config: { auth: 'any', idempotency: 'atomic' },
      // The body is optional: no body means every matching endpoint.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags,
        summary: 'Send the event again',
        description:
          "Schedules a new delivery at once to one endpoint (`endpoint_id`) or to every enabled endpoint that takes the event type, with a fresh retry schedule and the same `webhook-id`. Answers the newest page (up to 100) of the event's deliveries.",
        params: IdParams,
        body: RedeliverBody,
        response: { 200: deliveryList, ...errorResponses(400, 404, 409, 415) },
      },
    },
    async (request, reply) =>
      keyed(request, reply, async (work) => {
        const principal = principalOf(request);
        const event = await events.get(principal, request.params.id, work.db);
        return webhooks.redeliver(principal, event, request.body.endpoint_id, work.db);
      }),
  );
}
