import { createHash } from 'node:crypto';
import { callIdempotent, callProvider, type ProviderAnswer } from '../http.js';
import type {
  CashfreeCredentials,
  CashfreeOrderRequest,
  CashfreeRefundRequest,
  CashfreeSessionRequest,
} from './cashfree.shapes.js';
import { CASHFREE_API_VERSION } from './cashfree.tables.js';

/**
 * Cashfree documents `x-idempotency-key` as a UUID: one derived from Kosh's id, so that the same
 * request sent again (after a timeout) carries the same key and Cashfree answers it as the first.
 */
export function cashfreeIdempotencyKey(id: string): string {
  const hex = createHash('sha256').update(`kosh:${id}`).digest('hex');
  const variant = ((Number.parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Cashfree's API as Kosh calls it: every request authenticated with `x-client-id` /
 * `x-client-secret`, pinned to the API version of cashfree.tables.ts, and given a deadline. Each
 * call answers what `src/connectors/http.ts` answers; reading it is the connector's.
 */
export interface CashfreeClient {
  /** `POST /orders`, with an idempotency key from the order id: resending never makes a second. */
  createOrder(order: CashfreeOrderRequest): Promise<ProviderAnswer>;
  /** `GET /orders/{order_id}`. */
  getOrder(orderId: string): Promise<ProviderAnswer>;
  /** `POST /orders/sessions`: not retried, each call starts another attempt. */
  pay(session: CashfreeSessionRequest): Promise<ProviderAnswer>;
  /** `GET /orders/{order_id}/payments`. */
  orderPayments(orderId: string): Promise<ProviderAnswer>;
  /** `POST /orders/{order_id}/refunds`, with an idempotency key from the refund id. */
  createRefund(orderId: string, refund: CashfreeRefundRequest): Promise<ProviderAnswer>;
  /** `GET /orders/{order_id}/refunds/{refund_id}`. */
  getRefund(orderId: string, refundId: string): Promise<ProviderAnswer>;
}

export function createCashfreeClient(options: {
  /** The API's base, with its `/pg`: `https://api.cashfree.com/pg` (or the sandbox's). */
  baseUrl: string;
  credentials: CashfreeCredentials;
  timeoutMs?: number;
}): CashfreeClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const headers = {
    'x-client-id': options.credentials.client_id,
    'x-client-secret': options.credentials.client_secret,
    'x-api-version': CASHFREE_API_VERSION,
  };
  const orderUrl = (orderId: string) => `${base}/orders/${encodeURIComponent(orderId)}`;

  return {
    createOrder: (order) =>
      callIdempotent({
        method: 'POST',
        url: `${base}/orders`,
        headers: { ...headers, 'x-idempotency-key': cashfreeIdempotencyKey(order.order_id) },
        json: order,
        timeoutMs,
      }),
    getOrder: (orderId) => callProvider({ method: 'GET', url: orderUrl(orderId), headers, timeoutMs }),
    pay: (session) =>
      callProvider({ method: 'POST', url: `${base}/orders/sessions`, headers, json: session, timeoutMs }),
    orderPayments: (orderId) =>
      callProvider({ method: 'GET', url: `${orderUrl(orderId)}/payments`, headers, timeoutMs }),
    createRefund: (orderId, refund) =>
      callIdempotent({
        method: 'POST',
        url: `${orderUrl(orderId)}/refunds`,
        headers: { ...headers, 'x-idempotency-key': cashfreeIdempotencyKey(refund.refund_id) },
        json: refund,
        timeoutMs,
      }),
    getRefund: (orderId, refundId) =>
      callProvider({
        method: 'GET',
        url: `${orderUrl(orderId)}/refunds/${encodeURIComponent(refundId)}`,
        headers,
        timeoutMs,
      }),
  };
}
