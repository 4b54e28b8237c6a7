import { Type } from 'typebox';
import { KoshError } from '../../domain/errors.js';
import { PAYMENT_METHODS } from '../../domain/payment-methods.js';
import { ORDER_STATUSES } from '../orders/order.transitions.js';
import type { OrderListFilter } from '../orders/orders.model.js';
import { PAYMENT_STATUSES } from '../payments/payment.transitions.js';
import type { PaymentListFilter } from '../payments/payments.model.js';
import { REFUND_STATUSES } from '../refunds/refund.transitions.js';
import type { RefundListFilter } from '../refunds/refunds.model.js';
import { text } from './dashboard.context.js';

/** The lists the filters offer, each declared once in the module that owns it. */
export { ORDER_STATUSES, PAYMENT_METHODS, PAYMENT_STATUSES, REFUND_STATUSES };

export interface PaymentFilters {
  status?: string;
  method?: string;
  bank?: string;
  wallet?: string;
  from?: string;
  to?: string;
  q?: string;
  cursor?: string;
}

export interface OrderFilters {
  status?: string;
  receipt?: string;
  from?: string;
  to?: string;
  cursor?: string;
}

export interface RefundFilters {
  status?: string;
  payment_id?: string;
  cursor?: string;
}

export const PaymentsQuery = Type.Object(
  {
    status: text(20),
    method: text(20),
    bank: text(40),
    wallet: text(40),
    from: text(10),
    to: text(10),
    q: text(254),
    cursor: text(100),
  },
  { additionalProperties: false },
);

export const OrdersQuery = Type.Object(
  { status: text(20), receipt: text(40), from: text(10), to: text(10), cursor: text(100) },
  { additionalProperties: false },
);

export const RefundsQuery = Type.Object(
  { status: text(20), payment_id: text(100), cursor: text(100) },
  { additionalProperties: false },
);

/** YYYY-MM-DD as Unix seconds at the start of that day (UTC); `endOfDay` for the next day's start. */
function dayToSeconds(value: string | undefined, field: string, endOfDay = false): number | undefined {
  if (!value) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw new KoshError('invalid_field', `${field} must be a date (YYYY-MM-DD).`, field);
  }
  return Date.parse(`${value}T00:00:00Z`) / 1000 + (endOfDay ? 86_400 : 0);
}

function oneOf<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  field: string,
): T | undefined {
  if (!value) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new KoshError('invalid_field', `${field} must be one of ${allowed.join(', ')}.`, field);
  }
  return value as T;
}

/** The API's payment list query for the page's filters; the search box takes an id, an email or a phone. */
export function paymentQuery(filters: PaymentFilters, limit: number): PaymentListFilter {
  const query: PaymentListFilter = {
    limit,
    status: oneOf(filters.status, PAYMENT_STATUSES, 'status'),
    method: oneOf(filters.method, PAYMENT_METHODS, 'method'),
    bank: filters.bank || undefined,
    wallet: filters.wallet || undefined,
    from: dayToSeconds(filters.from, 'from'),
    to: dayToSeconds(filters.to, 'to', true),
    cursor: filters.cursor || undefined,
  };
  const q = filters.q?.trim();
  if (q && !q.startsWith('pay_')) {
    if (q.startsWith('order_')) query.order_id = q;
    else if (q.includes('@')) query.email = q;
    else query.contact = q;
  }
  return query;
}

/** The API's order list query for the page's filters. */
export function orderQuery(filters: OrderFilters, limit: number): OrderListFilter {
  return {
    limit,
    status: oneOf(filters.status, ORDER_STATUSES, 'status'),
    receipt: filters.receipt || undefined,
    from: dayToSeconds(filters.from, 'from'),
    to: dayToSeconds(filters.to, 'to', true),
    cursor: filters.cursor || undefined,
  };
}

/** The API's refund list query for the page's filters. */
export function refundQuery(filters: RefundFilters, limit: number): RefundListFilter {
  return {
    limit,
    status: oneOf(filters.status, REFUND_STATUSES, 'status'),
    payment_id: filters.payment_id || undefined,
    cursor: filters.cursor || undefined,
  };
}
