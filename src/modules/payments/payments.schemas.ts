import { type Static, Type } from 'typebox';
import { PAYMENT_METHODS, UPI_FLOWS } from '../../domain/payment-methods.js';
import {
  CreatedBetween,
  enumParameter,
  filteredListQuery,
  Metadata,
  oneOf,
  type Same,
} from '../../http/schemas.js';
import { PAYMENT_STATUSES } from './payment.transitions.js';
import type {
  Action as ActionView,
  CreatedPayment,
  CreatePayment,
  PaymentListFilter,
  Payment as PaymentView,
} from './payments.model.js';

/** An enum (not a union of constants) so that a wrong value is answered with the allowed ones. */
const PaymentMethod = Type.Unsafe<'netbanking' | 'wallet' | 'upi'>({
  type: 'string',
  enum: ['netbanking', 'wallet', 'upi'],
  description: '`netbanking` (send `bank`), `wallet` (send `wallet`) or `upi` (send `upi`)',
});

const UpiFlowParameter = Type.Unsafe<(typeof UPI_FLOWS)[number]>({
  type: 'string',
  enum: [...UPI_FLOWS],
  description:
    '`intent` (a upi://pay link for a UPI app, on a phone), `qr` (the same link as a QR code) or `collect` (a request to `vpa`; only where enabled)',
});

const Text = (maxLength: number, description: string) => Type.String({ maxLength, description });

/**
 * Seed §4.2 (net banking) and §4.3 (wallet) share one body. Shapes are checked here; formats and
 * the rules that need the order or the account (`payments.validation.ts`) give their own clear errors.
 */
export const CreatePaymentBody = Type.Object(
  {
    amount: Type.Integer({
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: "Equal to the order's amount, in the smallest sub-unit.",
    }),
    currency: Text(3, "Equal to the order's currency."),
    contact: Text(20, 'Customer phone with country code: digits with an optional leading +, 8–15 digits.'),
    name: Text(200, "Customer's full name, 1–100 characters."),
    email: Text(254, 'Customer email address.'),
    order_id: Text(100, 'Order id from POST /v1/orders/.'),
    return_url: Type.Optional(
      Text(
        2000,
        'Absolute https URL the browser is POSTed back to, written as a browser reads it: `scheme://host…`, no spaces, control characters or backslashes, the host as parsed (test mode also http on localhost, 127.0.0.1, [::1]). Required except with method upi.',
      ),
    ),
    method: PaymentMethod,
    bank: Type.Optional(Text(40, 'With method netbanking: a key of `netbanking` in the methods object.')),
    wallet: Type.Optional(Text(40, 'With method wallet: a key of `wallet` in the methods object, any case.')),
    upi: Type.Optional(
      Type.Object(
        {
          flow: UpiFlowParameter,
          vpa: Type.Optional(
            Text(255, "With flow collect (required there): the customer's VPA, name@handle."),
          ),
          expiry_minutes: Type.Optional(
            Type.Integer({
              description: 'How long the payment waits for the customer: 5 to 60 minutes (10).',
            }),
          ),
        },
        { additionalProperties: false, description: 'With method upi (docs/payments.md, "UPI").' },
      ),
    ),
    description: Type.Optional(Text(255, 'Free text, at most 255 characters.')),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type CreatePaymentBody = Static<typeof CreatePaymentBody>;

export const Action = Type.Object({
  action: Type.Union([
    Type.Literal('html_form'),
    Type.Literal('redirect'),
    Type.Literal('upi_intent'),
    Type.Literal('upi_qr'),
    Type.Literal('upi_collect'),
  ]),
  html_content: Type.Optional(Type.String({ description: 'A complete HTML document (html_form)' })),
  url: Type.Optional(
    Type.String({
      description:
        'Absolute URL to navigate the browser to (redirect), or the upi://pay link (upi_intent, upi_qr)',
    }),
  ),
  qr_image: Type.Optional(
    Type.String({ description: 'The QR code of `url` as a data:image/png;base64 URL (upi_qr)' }),
  ),
  expires_at: Type.Optional(
    Type.Integer({ description: 'Unix seconds: when the UPI payment stops waiting for the customer' }),
  ),
});
export type Action = Static<typeof Action>;

/** The seed fixes this shape: no envelope. */
export const CreatePaymentResponse = Type.Object({
  payment_id: Type.String(),
  next: Type.Array(Action, { minItems: 1 }),
});

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const Payment = Type.Object({
  id: Type.String({ description: '`pay_` and an opaque suffix' }),
  entity: Type.Literal('payment'),
  order_id: Type.String(),
  amount: Type.Integer(),
  currency: Type.String(),
  status: oneOf(PAYMENT_STATUSES),
  method: oneOf(PAYMENT_METHODS),
  bank: Nullable(Type.String()),
  wallet: Nullable(Type.String()),
  upi: Type.Union(
    [
      Type.Object({
        flow: oneOf(UPI_FLOWS),
        vpa: Nullable(Type.String({ description: 'The VPA a collect request went to, masked' })),
        payer_vpa: Nullable(
          Type.String({ description: 'The VPA that paid, masked, when the provider tells it' }),
        ),
        expires_at: Type.Integer({ description: 'Unix seconds: when it stops waiting (then upi_expired)' }),
      }),
      Type.Null(),
    ],
    { description: 'A UPI payment’s details; null for net banking and wallets' },
  ),
  email: Type.String(),
  contact: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  // Not Type.Record: its `^.*$` key pattern does not match keys with line breaks, and the response
  // serializer would silently drop them (as the order schema notes).
  metadata: Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true }),
  error_code: Nullable(
    Type.String({
      description:
        'payment_declined, payment_cancelled, payment_expired, payment_timed_out, upi_expired, order_already_paid, …',
    }),
  ),
  error_reason: Nullable(Type.String()),
  created_at: Type.Integer({ description: 'Unix time in seconds' }),
  updated_at: Type.Integer({ description: 'Unix time in seconds' }),
  captured_at: Type.Union([Type.Integer(), Type.Null()]),
  authorised_at: Type.Union([Type.Integer(), Type.Null()], {
    description:
      'When the bank authorised the money; on a failed payment (`order_already_paid`) it means the money goes back to the customer.',
  }),
  bank_reference: Nullable(
    Type.String({ description: "The bank's reference for the transfer (for UPI its RRN), when known" }),
  ),
  fee: Type.Union([Type.Integer(), Type.Null()], {
    description: "The provider's fee in sub-units, when given",
  }),
  tax: Type.Union([Type.Integer(), Type.Null()], { description: 'Tax on the fee in sub-units, when given' }),
  amount_refunded: Type.Integer({
    description: 'What its pending and processed refunds add up to, in sub-units (0 when none)',
  }),
  refund_status: Type.Union([Type.Literal('partial'), Type.Literal('full'), Type.Null()], {
    description: 'null, or `partial` / `full` as its refunds add up; the payment stays `captured`',
  }),
  checkout_session_id: Nullable(
    Type.String({
      description: 'The hosted checkout session (`cs_…`) that started the payment; null for an S2S payment',
    }),
  ),
});
export type Payment = Static<typeof Payment>;

export const ReturnSigningSecret = Type.Object({
  secret: Type.String({ description: 'HMAC-SHA256 key for the return POST signature' }),
  algorithm: Type.Literal('HMAC-SHA256'),
  signed_payload: Type.Literal('payment_id|order_id|status'),
});

export const PaymentListQuery = filteredListQuery({
  ...CreatedBetween,
  status: enumParameter(PAYMENT_STATUSES, 'Only payments in this status'),
  method: enumParameter(PAYMENT_METHODS, 'Only payments by this method'),
  order_id: Type.Optional(Type.String({ maxLength: 100, description: "Only this order's payments" })),
  bank: Type.Optional(
    Type.String({ maxLength: 40, description: 'Only net-banking payments at this bank code (any case)' }),
  ),
  wallet: Type.Optional(
    Type.String({ maxLength: 40, description: 'Only payments by this wallet code (any case)' }),
  ),
  email: Type.Optional(
    Type.String({
      maxLength: 254,
      description: "Only payments with this customer email (case doesn't matter)",
    }),
  ),
  contact: Type.Optional(
    Type.String({ maxLength: 20, description: 'Only payments with this customer phone' }),
  ),
});
export type PaymentListQuery = Static<typeof PaymentListQuery>;

// The service takes and returns the domain types of payments.model.ts; these fail the typecheck
// when a schema here and its domain type part.
const _createPayment: Same<CreatePaymentBody, CreatePayment> = true;
const _action: Same<Action, ActionView> = true;
const _createdPayment: Same<Static<typeof CreatePaymentResponse>, CreatedPayment> = true;
const _payment: Same<Payment, PaymentView> = true;
const _paymentList: Same<PaymentListQuery, PaymentListFilter> = true;
