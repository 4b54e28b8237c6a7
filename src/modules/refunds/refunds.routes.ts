import { Type } from 'typebox';
import type { App } from '../../http/app-types.js';
import { principalOf } from '../../http/auth.js';
import type { Keyed } from '../../http/idempotency.js';
import { errorResponses, IdParams, ListQuery, listOf } from '../../http/schemas.js';
import { CreateRefundBody, Refund, RefundListQuery } from './refunds.schemas.js';
import type { RefundsService } from './refunds.service.js';

export function registerRefundRoutes(app: App, refunds: RefundsService, keyed: Keyed): void {
  app.post(
    '/v1/payments/:id/refunds/',
    {
      // The refund is recorded, then the provider is called: never inside a transaction.
      config: { auth: 'merchant', idempotency: 'phased' },
      schema: {
        tags: ['Refunds'],
        summary: 'Refund a captured payment, in full or in part',
        description:
          'Records a `pending` refund (its amount counted on the payment at once) and sends it to the provider; `refund.processed` or `refund.failed` follows. The sum of pending and processed refunds never exceeds the captured amount. A failed payment the bank authorised after another payment paid its order (`authorised_at` set, money owed back) is refunded the same way once its automatic refunds were refused.',
        params: IdParams,
        body: CreateRefundBody,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        response: {
          200: Type.Object({ data: Refund, message: Type.String() }),
          ...errorResponses(400, 403, 404, 409, 415),
        },
      },
    },
    async (request, reply) =>
      keyed(request, reply, async (work) => ({
        data: await refunds.create(principalOf(request), request.params.id, request.body ?? {}, {
          ids: work.ids,
        }),
        message: 'Refund created.',
      })),
  );

  app.get(
    '/v1/refunds/:id/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['Refunds'],
        summary: 'Fetch a refund',
        params: IdParams,
        response: { 200: Type.Object({ data: Refund, message: Type.String() }), ...errorResponses(403, 404) },
      },
    },
    async (request) => ({
      data: await refunds.get(principalOf(request), request.params.id),
      message: 'Refund fetched.',
    }),
  );

  app.get(
    '/v1/payments/:id/refunds/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['Refunds'],
        summary: "List a payment's refunds, newest first",
        params: IdParams,
        querystring: ListQuery,
        response: { 200: listOf(Refund), ...errorResponses(400, 403, 404) },
      },
    },
    async (request) => refunds.list(principalOf(request), request.query, request.params.id),
  );

  app.get(
    '/v1/refunds/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['Refunds'],
        summary: 'List refunds, newest first',
        description: 'Filter by `payment_id` and `status`.',
        querystring: RefundListQuery,
        response: { 200: listOf(Refund), ...errorResponses(400, 403) },
      },
    },
    async (request) => refunds.list(principalOf(request), request.query),
  );
}
