import { Type } from 'typebox';
import type { App } from '../../http/app-types.js';
import { principalOf } from '../../http/auth.js';
import { errorResponses } from '../../http/schemas.js';
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
  app.get(
    '/v1/payments/methods/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['Payments'],
        summary: 'Payment methods enabled for this account',
        description:
          'Only capabilities that are `true`, and only the banks and wallets listed, may be offered to customers.',
        response: { 200: MethodsResponse, ...errorResponses(403) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return { entity: 'methods' as const, ...(await methods.get(principal.accountId, principal.mode)) };
    },
  );
}
