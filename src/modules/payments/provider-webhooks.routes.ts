import { Type } from 'typebox';
import { notFound } from '../../domain/errors.js';
import type { App } from '../../http/app-types.js';
import { errorResponses } from '../../http/schemas.js';
import type { ProviderReturns } from './provider-returns.service.js';

const Params = Type.Object(
  {
    connector: Type.String({ maxLength: 40, description: 'The connector, such as `cashfree` or `razorpay`' }),
    account: Type.String({
      maxLength: 100,
      description: 'The connector account (`ca_…`) the provider sends for',
    }),
  },
  { additionalProperties: false },
);

/**
 * A payment provider's own webhooks. The body is kept as the exact bytes that arrived (the
 * provider signed those), in a plugin scope whose only parser is a raw one; no API key (the
 * provider has none): the connector verifies the provider's signature instead.
 */
export async function registerProviderWebhookRoutes(app: App, returns: ProviderReturns): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post(
      '/v1/connectors/:connector/webhooks/:account/',
      {
        config: { auth: 'none', idempotency: false },
        schema: {
          tags: ['Connectors'],
          summary: "A payment provider's webhook",
          description:
            "Configure this address at the provider (the connector account's `webhook_url`). A verified webhook about a payment that took the money is applied; any other verified one (a failure, a refund's) makes Kosh ask the provider at once, an unverified one only sooner. Answers 200 quickly; repeated deliveries change nothing.",
          security: [],
          params: Params,
          response: {
            200: Type.Object({ received: Type.Literal(true) }),
            ...errorResponses(404),
          },
        },
      },
      async (request) => {
        const { connector, account } = request.params as { connector: string; account: string };
        const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const received = await returns.webhook(connector, account, { headers: request.headers, rawBody });
        if (!received) throw notFound('connector account', account);
        return received;
      },
    );
  });
}
