import { type Static, Type } from 'typebox';
import { enumParameter, filteredListQuery, Metadata, oneOf, type Same } from '../../http/schemas.js';
import { REFUND_STATUSES } from './refund.transitions.js';
import type { CreateRefund, RefundListFilter, Refund as RefundView } from './refunds.model.js';

export const CreateRefundBody = Type.Object(
  {
    amount: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          'In the smallest sub-unit, at least 1. Default: all that is still refundable on the payment.',
      }),
    ),
    speed: Type.Optional(
      Type.Unsafe<'normal' | 'instant'>({
        type: 'string',
        enum: ['normal', 'instant'],
        description: '`normal` (default) or `instant`, where the provider offers it.',
      }),
    ),
    receipt: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description: "The merchant's own reference; unique per account and mode.",
      }),
    ),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type CreateRefundBody = Static<typeof CreateRefundBody>;

export const Refund = Type.Object({
  id: Type.String({ description: '`rfnd_` and an opaque suffix' }),
  entity: Type.Literal('refund'),
  payment_id: Type.String(),
  order_id: Type.String(),
  amount: Type.Integer(),
  currency: Type.String(),
  status: oneOf(REFUND_STATUSES),
  speed: Type.Union([Type.Literal('normal'), Type.Literal('instant')]),
  receipt: Type.Union([Type.String(), Type.Null()]),
  // Not Type.Record: see the payment schema.
  metadata: Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true }),
  error_code: Type.Union([Type.String(), Type.Null()]),
  error_reason: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.Integer({ description: 'Unix time in seconds' }),
  processed_at: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Unix time in seconds, once processed',
  }),
});
export type Refund = Static<typeof Refund>;

export const RefundListQuery = filteredListQuery({
  payment_id: Type.Optional(Type.String({ maxLength: 100, description: "Only this payment's refunds" })),
  status: enumParameter(REFUND_STATUSES, 'Only refunds in this status'),
});
export type RefundListQuery = Static<typeof RefundListQuery>;

// The service takes and returns the domain types of refunds.model.ts; these fail the typecheck when
// a schema here and its domain type part.
const _createRefund: Same<CreateRefundBody, CreateRefund> = true;
const _refund: Same<Refund, RefundView> = true;
const _refundList: Same<RefundListQuery, RefundListFilter> = true;
