import type {
  ConnectorPayment,
  ConnectorRefund,
  NextStep,
  PaymentOutcome,
  RefundResult,
  StatusResult,
} from '../connector.js';
import { type ProviderAnswer, stringField } from '../http.js';
import {
  CASHFREE_AUTHENTICATION_ERROR,
  CASHFREE_BANKS,
  CASHFREE_DEFAULT_DECLINE,
  CASHFREE_ERRORS,
  CASHFREE_PAYMENT_STATUSES,
  CASHFREE_REFUND_DECLINE,
  CASHFREE_REFUND_STATUSES,
  CASHFREE_STATUS_ERRORS,
  CASHFREE_UPI_ERRORS,
  CASHFREE_WALLETS,
  type KoshReason,
} from './cashfree.tables.js';
import { cashfreeUpiMethod, isUpiAttempt, payerVpaOf } from './cashfree.upi.js';

/**
 * What Cashfree is sent and what it answers (API version 2023-08-01), and the reading of those
 * answers in Kosh's words. An answer that is not the documented shape reads as `unknown`.
 */

export interface CashfreeCredentials {
  client_id: string;
  client_secret: string;
}

/** A table lookup that only finds the table's own rows (a status `constructor` is not a row). */
export function lookup<T>(table: Record<string, T>, key: string | undefined): T | undefined {
  return key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}

/** A field that is a string or a number (Cashfree's ids were numbers before 2023-08-01). */
export function idField(body: unknown, key: string): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const value = (body as Record<string, unknown>)[key];
  if (typeof value === 'string' && value !== '') return value;
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
}

export function field(body: unknown, key: string): unknown {
  return body && typeof body === 'object' ? (body as Record<string, unknown>)[key] : undefined;
}

/**
 * Integer paise → Cashfree's rupees, exactly: 5000 → 50, 5050 → 50.5, 1 → 0.01. Built from the
 * decimal digits, so the number sent is the one whose shortest form is that decimal (no float drift).
 */
export function cashfreeAmount(paise: number): number {
  if (!Number.isSafeInteger(paise) || paise < 0) throw new RangeError(`not an amount in paise: ${paise}`);
  const rest = paise % 100;
  return Number(`${(paise - rest) / 100}.${String(rest).padStart(2, '0')}`);
}

/**
 * Cashfree's rupees → integer paise; undefined for anything that is not a plain non-negative amount
 * with at most two decimals (such an amount is unreadable, not rounded).
 */
export function paiseFromCashfree(value: unknown): number | undefined {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string') return undefined;
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) return undefined;
  const paise = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return Number.isSafeInteger(paise) ? paise : undefined;
}

/**
 * Kosh keeps the contact with its country code (+919876543210); Cashfree documents Indian phone
 * numbers as their 10 digits. Other numbers are sent as Kosh has them.
 */
export function cashfreePhone(contact: string): string {
  const indian = /^\+?91(\d{10})$/.exec(contact);
  return indian ? (indian[1] as string) : contact;
}

/** The payment method Cashfree's `/orders/sessions` takes for a Kosh bank or wallet code, or UPI. */
export function cashfreePaymentMethod(
  payment: Pick<ConnectorPayment, 'method' | 'code' | 'customer'> & { upi?: ConnectorPayment['upi'] },
  now: Date = new Date(),
): Record<string, unknown> | undefined {
  if (payment.method === 'upi') return payment.upi ? cashfreeUpiMethod(payment.upi, now) : undefined;
  if (payment.method === 'netbanking') {
    const bank = lookup(CASHFREE_BANKS, payment.code.toUpperCase());
    return bank === undefined ? undefined : { netbanking: { channel: 'link', netbanking_bank_code: bank } };
  }
  const provider = lookup(CASHFREE_WALLETS, payment.code.toLowerCase());
  return provider === undefined
    ? undefined
    : { app: { channel: 'link', provider, phone: cashfreePhone(payment.customer.contact) } };
}

/** `POST /orders`: the order of one Kosh payment, its `order_id` Kosh's payment id. */
export interface CashfreeOrderRequest {
  order_id: string;
  order_amount: number;
  order_currency: string;
  customer_details: {
    customer_id: string;
    customer_phone: string;
    customer_email?: string;
    customer_name?: string;
  };
  order_meta: { return_url: string };
  order_expiry_time: string;
}

/** Kosh's default late window: how long it keeps asking about a payment. */
export const DEFAULT_ORDER_EXPIRY_SECONDS = 259_200;
/** The shortest order life sent: a customer at the bank is never cut off by a short late window. */
const MIN_ORDER_EXPIRY_SECONDS = 15 * 60;

/**
 * When the order stops taking new attempts: the payment's creation plus Kosh's late window, so no
 * attempt can start after Kosh stops asking (an attempt started before it still finishes, and Kosh
 * is still asking then). Measured from the payment's creation, not from now, so that the order
 * request sent again after a lost answer is the same request. ISO 8601 with an offset, in seconds.
 */
export function cashfreeOrderExpiry(createdAt: Date, expirySeconds: number): string {
  const seconds = Math.max(MIN_ORDER_EXPIRY_SECONDS, expirySeconds);
  return `${new Date(createdAt.getTime() + seconds * 1000).toISOString().slice(0, 19)}+00:00`;
}

export function cashfreeOrderRequest(
  payment: ConnectorPayment,
  expirySeconds: number = DEFAULT_ORDER_EXPIRY_SECONDS,
): CashfreeOrderRequest {
  const customer = payment.customer;
  return {
    order_id: payment.id,
    order_amount: cashfreeAmount(payment.amount),
    order_currency: payment.currency,
    customer_details: {
      // Cashfree takes letters and digits only; the payment id is unique and means nothing.
      customer_id: payment.id.replace(/[^A-Za-z0-9]/g, ''),
      customer_phone: cashfreePhone(customer.contact),
      ...(customer.email ? { customer_email: customer.email } : {}),
      ...(customer.name ? { customer_name: customer.name } : {}),
    },
    // Cashfree sends the browser back here with `?order_id=`; Kosh then asks `status`.
    order_meta: { return_url: payment.callbackUrl },
    order_expiry_time: cashfreeOrderExpiry(payment.createdAt, expirySeconds),
  };
}

/** `POST /orders/sessions`: a payment attempt on an order's session. */
export interface CashfreeSessionRequest {
  payment_session_id: string;
  payment_method: Record<string, unknown>;
}

/** `POST /orders/{order_id}/refunds`: its `refund_id` Kosh's refund id. */
export interface CashfreeRefundRequest {
  refund_id: string;
  refund_amount: number;
  refund_speed: 'INSTANT' | 'STANDARD';
}

export function cashfreeRefundRequest(refund: ConnectorRefund): CashfreeRefundRequest {
  return {
    refund_id: refund.id,
    refund_amount: cashfreeAmount(refund.amount),
    refund_speed: refund.speed === 'instant' ? 'INSTANT' : 'STANDARD',
  };
}

/**
 * Why a failed attempt failed, from its `error_details` (a UPI attempt's reason first), else its
 * status, else a plain decline.
 */
function declineOf(rawStatus: string | undefined, errorDetails: unknown, upi: boolean): KoshReason {
  return (
    (upi ? lookup(CASHFREE_UPI_ERRORS, stringField(errorDetails, 'error_reason')) : undefined) ??
    lookup(CASHFREE_ERRORS, stringField(errorDetails, 'error_code')) ??
    lookup(CASHFREE_ERRORS, stringField(errorDetails, 'error_reason')) ??
    lookup(CASHFREE_STATUS_ERRORS, rawStatus) ??
    CASHFREE_DEFAULT_DECLINE
  );
}

/**
 * One payment attempt (from `GET /orders/{id}/payments` or a webhook's `data.payment`) in Kosh's
 * words. An amount that is there but unreadable makes the whole answer unknown: Kosh cross-checks
 * it, and a guessed one would pass or fail that check for the wrong reason.
 */
export function cashfreeStatus(attempt: unknown, errorDetails?: unknown): StatusResult {
  const raw = stringField(attempt, 'payment_status');
  const outcome: PaymentOutcome = lookup(CASHFREE_PAYMENT_STATUSES, raw) ?? 'unknown';
  const rawAmount = field(attempt, 'payment_amount');
  const amount = paiseFromCashfree(rawAmount);
  if (rawAmount !== undefined && rawAmount !== null && amount === undefined) {
    return { outcome: 'unknown', rawStatus: raw ?? null, reason: 'unreadable payment_amount' };
  }
  const cfPaymentId = idField(attempt, 'cf_payment_id');
  const upi = isUpiAttempt(attempt);
  const decline =
    outcome === 'failed' ? declineOf(raw, errorDetails ?? field(attempt, 'error_details'), upi) : null;
  // The VPA that paid: a UPI attempt that took the money names it (its RRN is `bank_reference`).
  const payerVpa = upi && outcome === 'captured' ? payerVpaOf(attempt) : null;
  return {
    outcome,
    rawStatus: raw ?? null,
    amount,
    currency: stringField(attempt, 'payment_currency'),
    bankReference: stringField(attempt, 'bank_reference') ?? null,
    ...(payerVpa ? { payerVpa } : {}),
    ...(cfPaymentId ? { data: { cf_payment_id: cfPaymentId } } : {}),
    ...(decline ? { errorCode: decline.code, errorReason: decline.reason } : {}),
    ...(outcome === 'unknown' ? { reason: `payment_status ${raw ?? 'missing'} is not in the table` } : {}),
  };
}

/**
 * The attempt that speaks for the order: a successful one if there is one (Cashfree takes no
 * attempt after it), otherwise the latest by `payment_time` (the list's order breaks ties).
 */
export function latestAttempt(attempts: unknown[]): unknown {
  const success = attempts.find((attempt) => stringField(attempt, 'payment_status') === 'SUCCESS');
  if (success) return success;
  let latest: unknown;
  let latestTime = Number.NEGATIVE_INFINITY;
  for (const attempt of attempts) {
    const parsed = Date.parse(stringField(attempt, 'payment_time') ?? '');
    const time = Number.isNaN(parsed) ? Number.NEGATIVE_INFINITY : parsed;
    if (latest === undefined || time >= latestTime) {
      latest = attempt;
      latestTime = time;
    }
  }
  return latest;
}

/** A refund entity in Kosh's words; one about another refund or amount is not trusted. */
export function cashfreeRefundResult(body: unknown, refund: ConnectorRefund): RefundResult {
  const raw = stringField(body, 'refund_status');
  const refundId = stringField(body, 'refund_id');
  if (refundId !== undefined && refundId !== refund.id) {
    return { outcome: 'unknown', rawStatus: raw ?? null, reason: `answer about refund ${refundId}` };
  }
  const rawAmount = field(body, 'refund_amount');
  if (rawAmount !== undefined && rawAmount !== null && paiseFromCashfree(rawAmount) !== refund.amount) {
    return { outcome: 'unknown', rawStatus: raw ?? null, reason: 'refund_amount differs from the refund' };
  }
  const outcome = lookup(CASHFREE_REFUND_STATUSES, raw) ?? 'unknown';
  const cfRefundId = idField(body, 'cf_refund_id');
  const arn = stringField(body, 'refund_arn');
  return {
    outcome,
    rawStatus: raw ?? null,
    reference: cfRefundId ?? null,
    data: { ...(cfRefundId ? { cf_refund_id: cfRefundId } : {}), ...(arn ? { refund_arn: arn } : {}) },
    ...(outcome === 'failed'
      ? {
          errorCode: CASHFREE_REFUND_DECLINE.code,
          errorReason: stringField(body, 'status_description') || CASHFREE_REFUND_DECLINE.reason,
        }
      : {}),
    ...(outcome === 'unknown' ? { reason: `refund_status ${raw ?? 'missing'} is not in the table` } : {}),
  };
}

/** A documented API refusal: Cashfree's `{ message, code, type }` with the HTTP status. */
export interface Refusal {
  status: number;
  code: string;
  type: string;
  message: string;
}

export function refusalOf(answer: Extract<ProviderAnswer, { kind: 'answer' }>): Refusal {
  return {
    status: answer.status,
    code: stringField(answer.body, 'code') ?? '',
    type: stringField(answer.body, 'type') ?? '',
    message: stringField(answer.body, 'message') ?? '',
  };
}

/**
 * Whether a 4xx is Cashfree's definite "no" to starting this payment: a request it refused as
 * invalid (400) or credentials it refused (401). A 404, 409, 422 (idempotency) or 429 says nothing
 * definite about the payment, so it is unknown.
 */
export function refusedStart(refusal: Refusal): KoshReason | undefined {
  if (refusal.status === 401) return CASHFREE_AUTHENTICATION_ERROR;
  if (refusal.status === 400)
    return (
      lookup(CASHFREE_ERRORS, refusal.code) ??
      lookup(CASHFREE_UPI_ERRORS, refusal.code) ??
      CASHFREE_DEFAULT_DECLINE
    );
  return undefined;
}

/** Cashfree's `data` of a started payment → where Kosh's page sends the browser. */
export function nextStepOf(data: unknown): { next: NextStep; action: 'html_form' | 'redirect' } | string {
  const url = stringField(data, 'url');
  if (!url) return 'no data.url';
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return 'data.url is not a URL';
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') return 'data.url is not http(s)';
  const payload = field(data, 'payload') ?? {};
  if (typeof payload !== 'object' || Array.isArray(payload) || payload === null)
    return 'data.payload is not an object';
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(payload)) {
    if (typeof value === 'string') fields[name] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') fields[name] = String(value);
    else if (value !== null && value !== undefined) return `data.payload.${name} is not a plain value`;
  }
  const method = (stringField(data, 'method') ?? 'get').toLowerCase();
  if (method === 'post') {
    // A browser form sends its fields urlencoded; a POST that wants another body cannot be a form.
    const type = (stringField(data, 'content_type') ?? 'application/x-www-form-urlencoded').toLowerCase();
    if (!type.startsWith('application/x-www-form-urlencoded')) return `data.content_type ${type}`;
    return { next: { kind: 'form', url: target.toString(), fields }, action: 'html_form' };
  }
  if (method !== 'get') return `data.method ${method}`;
  for (const [name, value] of Object.entries(fields)) target.searchParams.set(name, value);
  return { next: { kind: 'redirect', url: target.toString() }, action: 'redirect' };
}
