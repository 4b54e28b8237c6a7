import { Type } from 'typebox';
import type { App } from '../../http/app-types.js';
import { principalOf } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
import type { MethodsConfig } from './methods.js';
import type { MethodsService } from './methods.service.js';

const Flags = (keys: string[]) => Type.Object(Object.fromEntries(keys.map((key) => [key, Type.Boolean()])));

export const MethodsResponse = Type.Object({
  entity: Type.Literal('methods'),
  card_networks: Flags(['diners', 'amex', 'mastercard', 'rupay', 'visa']),
  card_type: Flags(['debit', 'credit', 'prepaid']),
  card_subtype: Flags(['business', 'consumer', 'premium']),
  upi: Type.Object({
    intent: Type.Boolean(),
    collect: Type.Boolean(),
    payer_account_type: Flags(['bank_account', 'credit_card']),
  }),
  netbanking: Type.Record(Type.String(), Type.String(), {
    description: 'Bank code (submit as `bank`) → customer label',
  }),
  wallet: Type.Record(Type.String(), Type.String(), {
    description: 'Wallet code (submit as `wallet`) → customer label',
  }),
});

export function registerMethodsRoutes(app: App, methods: MethodsService): void {
  // The service hands out the same cached object until its TTL ends, so its JSON is built once per
  // object and dropped with it (a WeakMap): the hot read path does no serialisation at all.
  const serialised = new WeakMap<MethodsConfig, string>();
  app.get(
    '/v1/payments/methods/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['Payments'],
        summary: 'Payment methods enabled for this account',
        description:
          "Only capabilities that are `true`, and only the banks and wallets listed, may be offered to customers. With a live key: what is both enabled and taken by the merchant's payment provider account; until its partner chooses the live methods, every bank and wallet of the Kosh catalogue that the provider takes.",
        response: { 200: MethodsResponse, ...errorResponses(403) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      // Live: only what the merchant's connector takes (a new object each time: not cached as JSON).
      const config = await methods.offered(principal.accountId, principal.mode);
      let json = serialised.get(config);
      if (json === undefined) {
        json = JSON.stringify({ entity: 'methods', ...config });
        serialised.set(config, json);
      }
      // A string payload is sent as it is; the typed reply only knows the object form.
      return reply.type('application/json; charset=utf-8').send(json as never);
    },
  );
}
