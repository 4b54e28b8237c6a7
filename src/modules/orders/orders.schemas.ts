import { type Static, Type } from 'typebox';
import {
  CreatedBetween,
  enumParameter,
  filteredListQuery,
  Metadata,
  oneOf,
  type Same,
} from '../../http/schemas.js';
import { ORDER_STATUSES } from './order.transitions.js';
import type { CreateOrder, OrderListFilter, Order as OrderView } from './orders.model.js';

export const CreateOrderBody = Type.Object(
  {
    amount: Type.Integer({ description: 'Amount in the smallest currency sub-unit: 5000 is ₹50.00.' }),
    currency: Type.String({ minLength: 3, maxLength: 3, description: 'Three-letter code; INR is enabled.' }),
    receipt: Type.Optional(
      Type.String({ minLength: 1, maxLength: 40, description: "The merchant's own reference." }),
    ),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type CreateOrderBody = Static<typeof CreateOrderBody>;

export const Order = Type.Object({
  id: Type.String({ description: '`order_` and an opaque suffix' }),
  entity: Type.Literal('order'),
  amount: Type.Integer(),
  currency: Type.String(),
  status: oneOf(ORDER_STATUSES),
  receipt: Type.Union([Type.String(), Type.Null()]),
  // Not Type.Record: its `^.*$` key pattern does not match keys with line breaks, and the response
  // serializer would silently drop them.
  metadata: Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true }),
  created_at: Type.Integer({ description: 'Unix time in seconds' }),
  return_url: Type.Union([Type.String(), Type.Null()]),
  amount_paid: Type.Integer(),
  bank_details: Type.Union(
    [Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true }), Type.Null()],
    {
      description:
        'What the latest payment chose: `{ method: "netbanking", bank, bank_name }`, `{ method: "wallet", wallet, wallet_name }` or `{ method: "upi", flow }`; null before any payment.',
    },
  ),
  return_method: Type.String(),
  amount_pending: Type.Integer(),
});
export type Order = Static<typeof Order>;

export const OrderListQuery = filteredListQuery({
  ...CreatedBetween,
  status: enumParameter(ORDER_STATUSES, 'Only orders in this status'),
  receipt: Type.Optional(Type.String({ maxLength: 40, description: 'Only orders with this receipt' })),
});
export type OrderListQuery = Static<typeof OrderListQuery>;

// The service takes and returns the domain types of orders.model.ts; these fail the typecheck when
// a schema here and its domain type part.
const _createOrder: Same<CreateOrderBody, CreateOrder> = true;
const _order: Same<Order, OrderView> = true;
const _orderList: Same<OrderListQuery, OrderListFilter> = true;
