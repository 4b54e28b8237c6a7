import { Type } from 'typebox';
import type { App } from '../../http/app-types.js';
import { principalOf } from '../../http/auth.js';
import type { Keyed } from '../../http/idempotency.js';
import { errorResponses, IdParams, listOf } from '../../http/schemas.js';
import { CreateOrderBody, Order, OrderListQuery } from './orders.schemas.js';
import type { OrdersService } from './orders.service.js';

export function registerOrderRoutes(app: App, orders: OrdersService, keyed: Keyed): void {
  app.post(
    '/v1/orders/',
    {
      config: { auth: 'merchant', idempotency: 'atomic' },
      schema: {
        tags: ['Orders'],
        summary: 'Create an order',
        description:
          'A new order for each payment attempt. Pass `data.id` as `order_id` when creating the payment.',
        body: CreateOrderBody,
        response: {
          200: Type.Object({ data: Order, message: Type.String() }),
          ...errorResponses(400, 403, 415),
        },
      },
    },
    async (request, reply) =>
      keyed(request, reply, async (work) => {
        const order = await orders.create(principalOf(request), request.body, work.db);
        return { data: order, message: 'Order created successfully.' };
      }),
  );

  app.get(
    '/v1/orders/:id/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['Orders'],
        summary: 'Fetch an order',
        params: IdParams,
        response: { 200: Type.Object({ data: Order, message: Type.String() }), ...errorResponses(403, 404) },
      },
    },
    async (request) => ({
      data: await orders.get(principalOf(request), request.params.id),
      message: 'Order fetched.',
    }),
  );

  app.get(
    '/v1/orders/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['Orders'],
        summary: 'List orders, newest first',
        description: 'Filters: `status`, `receipt`, `from` and `to` (Unix seconds; from ≤ created_at < to).',
        querystring: OrderListQuery,
        response: { 200: listOf(Order), ...errorResponses(400, 403) },
      },
    },
    async (request) => orders.list(principalOf(request), request.query),
  );
}
