import { type Static, Type } from 'typebox';
import { oneOf, type Same } from '../../http/schemas.js';
import {
  CHECKOUT_METHODS,
  CHECKOUT_SESSION_STATUSES,
  type CheckoutSession as CheckoutSessionView,
  type CreateCheckoutSession,
} from './checkout.model.js';

const Text = (maxLength: number, description: string) => Type.String({ maxLength, description });

/** An enum (not a union of constants) so that a wrong value is answered with the allowed ones. */
const CheckoutMethod = Type.Unsafe<(typeof CHECKOUT_METHODS)[number]>({
  type: 'string',
  enum: [...CHECKOUT_METHODS],
});

export const CreateCheckoutSessionBody = Type.Object(
  {
    order_id: Text(100, 'Order id from POST /v1/orders/; not yet paid.'),
    return_url: Text(
      2000,
      'Absolute https URL the browser is POSTed back to, signed, as for an S2S payment: written as a browser reads it (test mode also http on localhost, 127.0.0.1, [::1]).',
    ),
    customer: Type.Optional(
      Type.Object(
        {
          name: Text(200, "Customer's full name, 1–100 characters."),
          email: Text(254, 'Customer email address.'),
          contact: Text(
            20,
            'Customer phone with country code: digits with an optional leading +, 8–15 digits.',
          ),
        },
        { additionalProperties: false, description: 'Asked on the page when absent.' },
      ),
    ),
    methods: Type.Optional(
      Type.Array(CheckoutMethod, {
        minItems: 1,
        maxItems: 3,
        uniqueItems: true,
        description:
          'Which methods the page offers: a subset of the account’s enabled methods (default: all of them). In a form body, comma-separated.',
      }),
    ),
    expires_in_minutes: Type.Optional(
      Type.Integer({ description: 'How long the session stays open: 5 to 1440 minutes (30).' }),
    ),
  },
  { additionalProperties: false },
);
export type CreateCheckoutSessionBody = Static<typeof CreateCheckoutSessionBody>;

export const CheckoutSession = Type.Object({
  id: Type.String({ description: '`cs_` and an opaque suffix' }),
  entity: Type.Literal('checkout_session'),
  order_id: Type.String(),
  url: Type.String({ description: "The customer's page: `{public URL}/checkout/<id>/`" }),
  status: oneOf(CHECKOUT_SESSION_STATUSES),
  payment_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The captured payment, once the order is paid',
  }),
  expires_at: Type.Integer({ description: 'Unix time in seconds' }),
  created_at: Type.Integer({ description: 'Unix time in seconds' }),
});
export type CheckoutSession = Static<typeof CheckoutSession>;

// The service takes and returns the domain types of checkout.model.ts; these fail the typecheck
// when a schema here and its domain type part.
const _create: Same<CreateCheckoutSessionBody, CreateCheckoutSession> = true;
const _session: Same<CheckoutSession, CheckoutSessionView> = true;
