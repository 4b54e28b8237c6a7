import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../http/app-types.js';
import { principalOf } from '../../http/auth.js';
import type { Keyed } from '../../http/idempotency.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import { CheckoutSession, CreateCheckoutSessionBody } from './checkout.schemas.js';
import type { CheckoutService } from './checkout.service.js';

const tags = ['Checkout'];
const one = Type.Object({ data: CheckoutSession, message: Type.String() });

/** Form bodies carry no arrays (the shared form parser refuses them): `methods=upi,wallet` is split here. */
async function splitFormMethods(request: FastifyRequest): Promise<void> {
  const body = request.body as Record<string, unknown> | undefined;
  if (
    request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') &&
    typeof body?.methods === 'string'
  ) {
    body.methods = body.methods.split(',').map((method) => method.trim());
  }
}

/** Hosted checkout sessions (docs/checkout.md); the customer's page is served elsewhere. */
export function registerCheckoutRoutes(app: App, checkout: CheckoutService, keyed: Keyed): void {
  app.post(
    '/v1/checkout/sessions/',
    {
      // Reads the order and the account's methods through their services on the pool: phased, with
      // the key's seeded ids, so a retry after a crash finds the session the dead attempt wrote.
      config: { auth: 'merchant', idempotency: 'phased' },
      preValidation: splitFormMethods,
      schema: {
        tags,
        summary: 'Create a hosted checkout session',
        description:
          'One link per order (`data.url`) where the customer picks UPI, a bank or a wallet; the payment it starts ends exactly like an S2S payment (the signed return POST to `return_url`).',
        body: CreateCheckoutSessionBody,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        response: { 200: one, ...errorResponses(400, 403, 404, 409, 415) },
      },
    },
    async (request, reply) =>
      keyed(request, reply, async (work) => ({
        data: await checkout.create(principalOf(request), request.body, { ids: work.ids }),
        message: 'Checkout session created.',
      })),
  );

  app.get(
    '/v1/checkout/sessions/:id/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags,
        summary: 'Fetch a checkout session',
        params: IdParams,
        response: { 200: one, ...errorResponses(403, 404) },
      },
    },
    async (request) => ({
      data: await checkout.get(principalOf(request), request.params.id),
      message: 'Checkout session fetched.',
    }),
  );
}
