import { callIdempotent, callProvider, type ProviderAnswer } from '../http.js';
import type {
  RazorpayCredentials,
  RazorpayOrderRequest,
  RazorpayPaymentRequest,
  RazorpayRefundRequest,
} from './razorpay.shapes.js';
import type { RazorpayUpiRequest } from './razorpay.upi.js';

/**
 * Razorpay's API as Kosh calls it: HTTP Basic with the key id and secret, a deadline on every
 * call. Reads are safe to repeat, so a lost answer is asked once more before it is left unknown;
 * creating an order or a payment is never repeated (a second would be a second order or attempt).
 * Each call answers what `src/connectors/http.ts` answers; reading it is the connector's.
 */
export interface RazorpayClient {
  /** `GET /v1/orders?receipt=…`: the orders made with this receipt (and perhaps more). */
  ordersByReceipt(receipt: string): Promise<ProviderAnswer>;
  /** `POST /v1/orders`: not retried. */
  createOrder(order: RazorpayOrderRequest): Promise<ProviderAnswer>;
  /** `GET /v1/orders/{id}/payments`. */
  orderPayments(orderId: string): Promise<ProviderAnswer>;
  /** `POST /v1/payments/create/json`: not retried. */
  createPayment(payment: RazorpayPaymentRequest): Promise<ProviderAnswer>;
  /** `POST /v1/payments/create/upi`: a UPI attempt (intent or collect) on the order; not retried. */
  createUpiPayment(payment: RazorpayUpiRequest): Promise<ProviderAnswer>;
  /** `GET /v1/payments/{id}`. */
  getPayment(paymentId: string): Promise<ProviderAnswer>;
  /** `GET /v1/payments/{id}/refunds`. */
  paymentRefunds(paymentId: string): Promise<ProviderAnswer>;
  /** `POST /v1/payments/{id}/refund`, its receipt the idempotency key (asked twice at most). */
  createRefund(paymentId: string, refund: RazorpayRefundRequest): Promise<ProviderAnswer>;
  /** `GET /v1/refunds/{id}`. */
  getRefund(refundId: string): Promise<ProviderAnswer>;
}

export function createRazorpayClient(options: {
  /** The host only: paths such as `/v1/orders` are appended. */
  baseUrl: string;
  credentials: Pick<RazorpayCredentials, 'key_id' | 'key_secret'>;
  timeoutMs?: number;
}): RazorpayClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const { key_id, key_secret } = options.credentials;
  const auth = { authorization: `Basic ${Buffer.from(`${key_id}:${key_secret}`).toString('base64')}` };
  const enc = encodeURIComponent;

  const get = (path: string) =>
    callIdempotent({ method: 'GET', url: `${base}${path}`, headers: auth, timeoutMs });
  const post = (path: string, json: unknown) =>
    callProvider({ method: 'POST', url: `${base}${path}`, headers: auth, json, timeoutMs });

  return {
    ordersByReceipt: (receipt) => get(`/v1/orders?receipt=${enc(receipt)}&count=100`),
    createOrder: (order) => post('/v1/orders', order),
    orderPayments: (orderId) => get(`/v1/orders/${enc(orderId)}/payments`),
    createPayment: (payment) => post('/v1/payments/create/json', payment),
    createUpiPayment: (payment) => post('/v1/payments/create/upi', payment),
    getPayment: (paymentId) => get(`/v1/payments/${enc(paymentId)}`),
    paymentRefunds: (paymentId) => get(`/v1/payments/${enc(paymentId)}/refunds?count=100`),
    createRefund: (paymentId, refund) =>
      callIdempotent(
        {
          method: 'POST',
          url: `${base}/v1/payments/${enc(paymentId)}/refund`,
          headers: { ...auth, 'X-Refund-Idempotency': refund.receipt },
          json: refund,
          timeoutMs,
        },
        { attempts: 2 },
      ),
    getRefund: (refundId) => get(`/v1/refunds/${enc(refundId)}`),
  };
}
