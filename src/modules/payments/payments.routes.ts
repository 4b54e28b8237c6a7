import { Type } from 'typebox';
import type { App } from '../../http/app-types.js';
import { principalOf } from '../../http/auth.js';
import type { Keyed } from '../../http/idempotency.js';
import { errorResponses, IdParams, ListQuery, listOf } from '../../http/schemas.js';
import {
  CreatePaymentBody,
  CreatePaymentResponse,
  Payment,
  PaymentListQuery,
  ReturnSigningSecret,
} from './payments.schemas.js';
import type { PaymentsService } from './payments.service.js';

export function registerPaymentRoutes(app: App, payments: PaymentsService, keyed: Keyed): void {
  app.post(
    '/v1/payments/create/s2s/',
    {
      // The payment is recorded, then the provider is called: never inside a transaction.
      config: { auth: 'merchant', idempotency: 'phased' },
      schema: {
        tags: ['Payments'],
        summary: 'Create an S2S net banking or wallet payment',
        description:
          'Answers `{ payment_id, next }`; send the browser on as `next[0]` says (render `html_content`, or navigate to `url`). The browser return is never proof: fetch the payment.',
        body: CreatePaymentBody,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        response: { 200: CreatePaymentResponse, ...errorResponses(400, 403, 404, 409, 415, 503) },
      },
    },
    async (request, reply) =>
      keyed(request, reply, (work) => payments.create(principalOf(request), request.body, { ids: work.ids })),
  );

  app.get(
    '/v1/payments/return-signing-secret/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['Payments'],
        summary: 'The key that signs the browser return POST',
        description:
          'HMAC-SHA256 hex of `payment_id|order_id|status` with this secret is the `signature` field of the return POST. One secret per account and mode.',
        response: {
          200: Type.Object({ data: ReturnSigningSecret, message: Type.String() }),
          ...errorResponses(403),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const secret = await payments.returnSigningSecret(principal.accountId, principal.mode);
      return {
        data: {
          secret,
          algorithm: 'HMAC-SHA256' as const,
          signed_payload: 'payment_id|order_id|status' as const,
        },
        message: 'Return signing secret fetched.',
      };
    },
  );

  app.get(
    '/v1/payments/:id/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['Payments'],
        summary: 'Fetch a payment',
        description: 'How a merchant confirms the outcome.',
        params: IdParams,
        response: {
          200: Type.Object({ data: Payment, message: Type.String() }),
          ...errorResponses(403, 404),
        },
      },
    },
    async (request) => ({
      data: await payments.get(principalOf(request), request.params.id),
      message: 'Payment fetched.',
    }),
  );

  app.get(
    '/v1/payments/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['Payments'],
        summary: 'List payments, newest first',
        description:
          'Filters: `status`, `method`, `order_id`, `from` and `to` (Unix seconds; from ≤ created_at < to).',
        querystring: PaymentListQuery,
        response: { 200: listOf(Payment), ...errorResponses(400, 403) },
      },
    },
    async (request) => payments.list(principalOf(request), request.query),
  );

  app.get(
    '/v1/orders/:id/payments/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['Payments'],
        summary: "List an order's payments, newest first",
        params: IdParams,
        querystring: ListQuery,
        response: { 200: listOf(Payment), ...errorResponses(400, 403, 404) },
      },
    },
    async (request) => payments.list(principalOf(request), request.query, request.params.id),
  );
}
