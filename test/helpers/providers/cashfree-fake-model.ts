import { createHmac } from 'node:crypto';
import { escapeHtml } from '../../../src/modules/payments/html.js';
import type { ProviderFault } from '../local-server.js';
import { type FakeUpiMethod, readUpiMethod } from './cashfree-fake-upi.js';

/**
 * The Cashfree fake's records and the JSON views of them it answers with (API version 2023-08-01),
 * apart from its server (cashfree-fake.ts).
 */

export type CashfreeFault = ProviderFault;
export type CashfreeEndpoint = 'create' | 'pay' | 'status' | 'refund' | 'refundStatus';
export type CashfreeWebhookTiming = 'after' | 'before' | 'instead' | 'none';
export type CashfreePaymentStatus = 'NOT_ATTEMPTED' | 'PENDING' | 'SUCCESS' | 'FAILED' | 'USER_DROPPED';
export type CashfreeRefundStatus = 'SUCCESS' | 'PENDING' | 'CANCELLED' | 'ONHOLD' | 'FAILED';

export const CASHFREE_FAKE_API_VERSION = '2023-08-01';

/** Cashfree's documented net banking codes (its published list; the fake refuses any other). */
export const CASHFREE_DOCUMENTED_BANK_CODES: ReadonlySet<number> = new Set([
  3001, 3002, 3003, 3005, 3006, 3007, 3009, 3010, 3011, 3012, 3016, 3017, 3018, 3019, 3020, 3021, 3022, 3023,
  3024, 3026, 3027, 3028, 3029, 3030, 3031, 3032, 3033, 3037, 3038, 3039, 3040, 3041, 3042, 3043, 3044, 3051,
  3052, 3054, 3055, 3058, 3060, 3061, 3062, 3064, 3065, 3066, 3067, 3071, 3072, 3073, 3075, 3076, 3077, 3079,
  3080, 3081, 3083, 3084, 3086, 3087, 3088, 3089, 3090, 3091, 3092, 3094, 3095, 3096, 3097, 3098, 3100, 3101,
  3102, 3103, 3104, 3105, 3106, 3107, 3108, 3109, 3110, 3111, 3112, 3113, 3114, 3115, 3116, 3117, 3118, 3119,
  3120, 3121, 3122, 3123, 3333,
]);

/** Cashfree's documented `app.provider` values. */
export const CASHFREE_DOCUMENTED_APP_PROVIDERS: ReadonlySet<string> = new Set([
  'gpay',
  'phonepe',
  'ola',
  'paytm',
  'amazon',
  'airtel',
  'freecharge',
  'mobikwik',
  'jio',
]);

export interface FakeCashfreePayment {
  cfPaymentId: string;
  /** In paise. */
  amount: number;
  method:
    | { netbanking: { channel: string; netbanking_bank_code: number } }
    | {
        app: { channel: string; provider: string; phone: string };
      }
    | FakeUpiMethod;
  status: CashfreePaymentStatus;
  bankReference: string | null;
  error: { error_code: string; error_description: string; error_reason: string; error_source: string } | null;
  time: string;
  completionTime: string | null;
}

export interface FakeCashfreeOrder {
  cfOrderId: string;
  orderId: string;
  /** In paise. */
  amount: number;
  currency: string;
  customer: Record<string, unknown>;
  returnUrl: string;
  status: 'ACTIVE' | 'PAID' | 'EXPIRED';
  sessionId: string;
  payments: FakeCashfreePayment[];
  createdAt: string;
  /** The `order_expiry_time` sent, in UTC; Cashfree's default (30 days) when none was. */
  expiresAt: string | undefined;
}

export interface FakeCashfreeRefund {
  cfRefundId: string;
  refundId: string;
  orderId: string;
  cfPaymentId: string;
  /** In paise. */
  amount: number;
  speed: 'STANDARD' | 'INSTANT';
  status: CashfreeRefundStatus;
  createdAt: string;
}

export interface SentCashfreeWebhook {
  headers: Record<string, string>;
  body: string;
  status: number | undefined;
}

export interface Answer {
  status: number;
  body: unknown;
}

/** Cashfree's webhook signature: base64(HMAC-SHA256(timestamp + raw body, client secret)). */
export function cashfreeWebhookSignature(secret: string, timestamp: string, body: string): string {
  return createHmac('sha256', secret)
    .update(timestamp + body)
    .digest('base64');
}

/** Rupees as Cashfree takes them: a number with at most two decimals; in paise, or undefined. */
export function paiseOf(value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(String(value));
  return match ? Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0')) : undefined;
}

/** Paise → rupees (5050 → 50.5). */
export const rupees = (paise: number) =>
  Number(`${Math.trunc(paise / 100)}.${String(paise % 100).padStart(2, '0')}`);

export const error = (
  status: number,
  code: string,
  message: string,
  type = 'invalid_request_error',
): Answer => ({
  status,
  body: { message, code, type },
});

export const PHONE = /^(\d{10}|\+\d{8,15})$/;

export function orderView(order: FakeCashfreeOrder) {
  return {
    cf_order_id: order.cfOrderId,
    order_id: order.orderId,
    entity: 'order',
    order_currency: order.currency,
    order_amount: rupees(order.amount),
    order_status: order.status,
    payment_session_id: order.sessionId,
    order_expiry_time:
      order.expiresAt ?? new Date(Date.parse(order.createdAt) + 30 * 86_400_000).toISOString(),
    order_note: null,
    created_at: order.createdAt,
    order_splits: [],
    customer_details: order.customer,
    order_meta: { return_url: order.returnUrl, notify_url: null, payment_methods: null },
    order_tags: null,
  };
}

export function paymentView(order: FakeCashfreeOrder, payment: FakeCashfreePayment) {
  const messages: Record<CashfreePaymentStatus, string> = {
    NOT_ATTEMPTED: 'payment not attempted',
    PENDING: 'payment pending at the bank',
    SUCCESS: '00::Transaction success',
    FAILED: '01::REJECTED',
    USER_DROPPED: 'user dropped the payment',
  };
  return {
    cf_payment_id: payment.cfPaymentId,
    order_id: order.orderId,
    entity: 'payment',
    error_details: payment.error,
    is_captured: payment.status === 'SUCCESS',
    order_amount: rupees(order.amount),
    payment_group:
      'netbanking' in payment.method ? 'net_banking' : 'upi' in payment.method ? 'upi' : 'wallet',
    payment_currency: order.currency,
    payment_amount: rupees(payment.amount),
    payment_time: payment.time,
    payment_completion_time: payment.completionTime,
    payment_status: payment.status,
    payment_message: messages[payment.status],
    bank_reference: payment.bankReference,
    auth_id: null,
    authorization: null,
    payment_method: payment.method,
  };
}

export function refundView(refund: FakeCashfreeRefund, now: Date) {
  return {
    cf_payment_id: refund.cfPaymentId,
    cf_refund_id: refund.cfRefundId,
    order_id: refund.orderId,
    refund_id: refund.refundId,
    entity: 'refund',
    refund_amount: rupees(refund.amount),
    refund_currency: 'INR',
    refund_note: null,
    refund_status: refund.status,
    refund_arn: refund.status === 'SUCCESS' ? `ARN${refund.cfRefundId}` : null,
    refund_charge: 0,
    status_description:
      refund.status === 'CANCELLED' || refund.status === 'FAILED'
        ? 'Refund cancelled by the bank.'
        : refund.status === 'SUCCESS'
          ? 'Refund processed successfully.'
          : 'In Progress',
    metadata: null,
    refund_splits: [],
    refund_type: 'MERCHANT_INITIATED',
    refund_mode: refund.speed,
    created_at: refund.createdAt,
    processed_at: refund.status === 'SUCCESS' ? now.toISOString() : null,
    refund_speed: {
      requested: refund.speed,
      accepted: refund.speed,
      processed: refund.speed,
      message: null,
    },
  };
}

/** The webhook Cashfree sends for the order's latest attempt, signed as documented (or as told). */
export function webhookOf(
  order: FakeCashfreeOrder,
  options: { signature?: string; timestamp?: number; secret: string; now: Date },
): { headers: Record<string, string>; body: string } {
  const payment = order.payments.at(-1);
  if (!payment) throw new Error(`order ${order.orderId} has no payment`);
  const type =
    payment.status === 'SUCCESS'
      ? 'PAYMENT_SUCCESS_WEBHOOK'
      : payment.status === 'USER_DROPPED'
        ? 'PAYMENT_USER_DROPPED_WEBHOOK'
        : 'PAYMENT_FAILED_WEBHOOK';
  const view = paymentView(order, payment);
  const body = JSON.stringify({
    data: {
      order: {
        order_id: order.orderId,
        order_amount: rupees(order.amount),
        order_currency: order.currency,
        order_tags: null,
      },
      payment: {
        cf_payment_id: payment.cfPaymentId,
        payment_status: payment.status,
        payment_amount: rupees(payment.amount),
        payment_currency: order.currency,
        payment_message: view.payment_message,
        payment_time: payment.time,
        bank_reference: payment.bankReference,
        auth_id: null,
        payment_method: payment.method,
        payment_group: view.payment_group,
      },
      customer_details: {
        customer_name: order.customer.customer_name ?? null,
        customer_id: order.customer.customer_id,
        customer_email: order.customer.customer_email ?? null,
        customer_phone: order.customer.customer_phone,
      },
      ...(payment.status === 'SUCCESS' ? {} : { error_details: payment.error }),
      payment_gateway_details: {
        gateway_name: 'CASHFREE',
        gateway_order_id: order.cfOrderId,
        gateway_payment_id: payment.cfPaymentId,
        gateway_status_code: null,
        gateway_settlement: 'CASHFREE',
      },
      payment_offers: null,
    },
    event_time: options.now.toISOString(),
    type,
  });
  const timestamp = String(options.timestamp ?? options.now.getTime());
  return {
    headers: {
      'content-type': 'application/json',
      'x-webhook-attempt': '1',
      'x-webhook-version': CASHFREE_FAKE_API_VERSION,
      'x-webhook-timestamp': timestamp,
      'x-webhook-signature': options.signature ?? cashfreeWebhookSignature(options.secret, timestamp, body),
    },
    body,
  };
}

/** The bank's page of a net banking or wallet attempt, where the customer decides. */
export function bankPage(order: FakeCashfreeOrder, payment: FakeCashfreePayment): string {
  const instrument =
    'netbanking' in payment.method
      ? `Net banking, bank ${payment.method.netbanking.netbanking_bank_code}`
      : 'app' in payment.method
        ? `Wallet, ${payment.method.app.provider}`
        : 'UPI';
  return `<!DOCTYPE html><html><head><title>Cashfree (fake) bank</title></head><body>
<h1>${escapeHtml(instrument)}</h1><p id="amount">${rupees(payment.amount)} ${escapeHtml(order.currency)}</p>
<form method="POST" action="/bank/${payment.cfPaymentId}/decide">
<button type="submit" name="choice" value="success">Success</button>
<button type="submit" name="choice" value="failure">Failure</button>
</form></body></html>`;
}

/** Order Pay's `payment_method` as the fake takes it (net banking, a wallet app, or UPI), or its refusal. */
export function readPaymentMethod(
  input: unknown,
  disabledBanks: ReadonlySet<number>,
): FakeCashfreePayment['method'] | Answer {
  const method = input as Record<string, Record<string, unknown>> | undefined;
  const netbanking = method?.netbanking;
  const app = method?.app;
  const upi = method?.upi;
  if (netbanking) {
    const code = netbanking.netbanking_bank_code;
    if (
      netbanking.channel !== 'link' ||
      typeof code !== 'number' ||
      !CASHFREE_DOCUMENTED_BANK_CODES.has(code)
    ) {
      return error(
        400,
        'payment_method_invalid',
        'payment_method.netbanking : a link with a known bank code',
      );
    }
    if (disabledBanks.has(code)) {
      return error(400, 'payment_method_unsupported', 'netbanking is not enabled for this bank');
    }
    return { netbanking: { channel: 'link', netbanking_bank_code: code } };
  } else if (app) {
    if (
      app.channel !== 'link' ||
      typeof app.provider !== 'string' ||
      !CASHFREE_DOCUMENTED_APP_PROVIDERS.has(app.provider) ||
      typeof app.phone !== 'string' ||
      !PHONE.test(app.phone)
    ) {
      return error(
        400,
        'payment_method_invalid',
        'payment_method.app : a link with a known provider and phone',
      );
    }
    return { app: { channel: 'link', provider: app.provider, phone: app.phone } };
  } else if (upi && typeof upi === 'object') {
    const read = readUpiMethod(upi);
    if (!('upi' in read)) return error(400, read.code, read.message);
    return read;
  }
  return error(400, 'payment_method_invalid', 'payment_method : netbanking, app or upi');
}
