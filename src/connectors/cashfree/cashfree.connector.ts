import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type {
  Connector,
  ConnectorPayment,
  ConnectorRefund,
  InitiateResult,
  NextStep,
  PaymentOutcome,
  RefundResult,
  StatusResult,
  WebhookResult,
} from '../connector.js';
import { callIdempotent, callProvider, type ProviderAnswer, stringField } from '../http.js';
import {
  CASHFREE_API_VERSION,
  CASHFREE_AUTHENTICATION_ERROR,
  CASHFREE_BANKS,
  CASHFREE_DEFAULT_DECLINE,
  CASHFREE_ERRORS,
  CASHFREE_PAYMENT_STATUSES,
  CASHFREE_REFUND_DECLINE,
  CASHFREE_REFUND_STATUSES,
  CASHFREE_STATUS_ERRORS,
  CASHFREE_WALLETS,
  type KoshReason,
} from './cashfree.tables.js';

/**
 * The Cashfree Payment Gateway (API version 2023-08-01), written as docs/connectors.md asks: Kosh's
 * payment id is Cashfree's `order_id` (unique there, so a retried start finds the first order),
 * every status and error maps through cashfree.tables.ts, every call has a deadline, and an answer
 * this connector cannot read is `unknown`, never a failure.
 *
 * The flow: create the order (`POST /orders`), then start its payment with the customer's bank or
 * wallet (`POST /orders/sessions`); Cashfree answers where the browser goes (a POST form or a GET
 * link). The browser comes back unsigned, so Kosh asks `GET /orders/{id}/payments`; Cashfree's
 * signed webhooks say the same sooner.
 */

export interface CashfreeCredentials {
  client_id: string;
  client_secret: string;
}

export interface CashfreeOptions {
  /** The API's base, with its `/pg`: `https://api.cashfree.com/pg` (or the sandbox's). */
  baseUrl: string;
  credentials: CashfreeCredentials;
  timeoutMs?: number;
  now?: () => Date;
  /** How far a webhook's `x-webhook-timestamp` may be from now (replays older than it are refused). */
  webhookToleranceSeconds?: number;
}

/** A table lookup that only finds the table's own rows (a status `constructor` is not a row). */
function lookup<T>(table: Record<string, T>, key: string | undefined): T | undefined {
  return key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
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
 * Cashfree documents `x-idempotency-key` as a UUID: one derived from Kosh's id, so that the same
 * request sent again (after a timeout) carries the same key and Cashfree answers it as the first.
 */
export function cashfreeIdempotencyKey(id: string): string {
  const hex = createHash('sha256').update(`kosh:${id}`).digest('hex');
  const variant = ((Number.parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The payment method Cashfree's `/orders/sessions` takes for a Kosh bank or wallet code. */
export function cashfreePaymentMethod(
  payment: Pick<ConnectorPayment, 'method' | 'code' | 'customer'>,
): Record<string, unknown> | undefined {
  if (payment.method === 'netbanking') {
    const bank = lookup(CASHFREE_BANKS, payment.code.toUpperCase());
    return bank === undefined ? undefined : { netbanking: { channel: 'link', netbanking_bank_code: bank } };
  }
  const provider = lookup(CASHFREE_WALLETS, payment.code.toLowerCase());
  return provider === undefined
    ? undefined
    : { app: { channel: 'link', provider, phone: cashfreePhone(payment.customer.contact) } };
}

/**
 * Kosh keeps the contact with its country code (+919876543210); Cashfree documents Indian phone
 * numbers as their 10 digits. Other numbers are sent as Kosh has them.
 */
export function cashfreePhone(contact: string): string {
  const indian = /^\+?91(\d{10})$/.exec(contact);
  return indian ? (indian[1] as string) : contact;
}

/** A field that is a string or a number (Cashfree's ids were numbers before 2023-08-01). */
function idField(body: unknown, key: string): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const value = (body as Record<string, unknown>)[key];
  if (typeof value === 'string' && value !== '') return value;
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
}

function field(body: unknown, key: string): unknown {
  return body && typeof body === 'object' ? (body as Record<string, unknown>)[key] : undefined;
}

/** Why a failed attempt failed, from its `error_details`, else its status, else a plain decline. */
function declineOf(rawStatus: string | undefined, errorDetails: unknown): KoshReason {
  return (
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
  const decline =
    outcome === 'failed' ? declineOf(raw, errorDetails ?? field(attempt, 'error_details')) : null;
  return {
    outcome,
    rawStatus: raw ?? null,
    amount,
    currency: stringField(attempt, 'payment_currency'),
    bankReference: stringField(attempt, 'bank_reference') ?? null,
    ...(cfPaymentId ? { data: { cf_payment_id: cfPaymentId } } : {}),
    ...(decline ? { errorCode: decline.code, errorReason: decline.reason } : {}),
    ...(outcome === 'unknown' ? { reason: `payment_status ${raw ?? 'missing'} is not in the table` } : {}),
  };
}

/**
 * The attempt that speaks for the order: a successful one if there is one (Cashfree takes no
 * attempt after it), otherwise the latest by `payment_time` (the list's order breaks ties).
 */
function latestAttempt(attempts: unknown[]): unknown {
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
function refundOf(body: unknown, refund: ConnectorRefund): RefundResult {
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
interface Refusal {
  status: number;
  code: string;
  type: string;
  message: string;
}

function refusalOf(answer: Extract<ProviderAnswer, { kind: 'answer' }>): Refusal {
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
function refusedStart(refusal: Refusal): KoshReason | undefined {
  if (refusal.status === 401) return CASHFREE_AUTHENTICATION_ERROR;
  if (refusal.status === 400) return lookup(CASHFREE_ERRORS, refusal.code) ?? CASHFREE_DEFAULT_DECLINE;
  return undefined;
}

function headerValue(
  headers: Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** Cashfree's `data` of a started payment → where Kosh's page sends the browser. */
function nextStepOf(data: unknown): { next: NextStep; action: 'html_form' | 'redirect' } | string {
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

export function createCashfreeConnector(options: CashfreeOptions): Connector {
  const base = options.baseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const now = options.now ?? (() => new Date());
  const toleranceMs = (options.webhookToleranceSeconds ?? 300) * 1000;
  const secret = options.credentials.client_secret;
  const headers = {
    'x-client-id': options.credentials.client_id,
    'x-client-secret': secret,
    'x-api-version': CASHFREE_API_VERSION,
  };
  const orderUrl = (orderId: string) => `${base}/orders/${encodeURIComponent(orderId)}`;

  type OrderAnswer = { kind: 'order'; body: unknown } | { kind: 'result'; result: InitiateResult };

  /**
   * Creates the payment's order, or finds it: the `order_id` is unique at Cashfree and the request
   * carries an idempotency key, so sending it again (after a lost answer) never makes a second.
   */
  async function createOrder(payment: ConnectorPayment): Promise<OrderAnswer> {
    const customer = payment.customer;
    const answer = await callIdempotent({
      method: 'POST',
      url: `${base}/orders`,
      headers: { ...headers, 'x-idempotency-key': cashfreeIdempotencyKey(payment.id) },
      json: {
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
      },
      timeoutMs,
    });
    if (answer.kind === 'unknown')
      return { kind: 'result', result: { outcome: 'unknown', reason: answer.reason } };
    if (answer.status === 200) return { kind: 'order', body: answer.body };
    const refusal = refusalOf(answer);
    if (answer.status === 409 && refusal.code === 'order_already_exists') {
      const existing = await callProvider({ method: 'GET', url: orderUrl(payment.id), headers, timeoutMs });
      if (existing.kind === 'unknown') {
        return {
          kind: 'result',
          result: { outcome: 'unknown', reason: `existing order: ${existing.reason}` },
        };
      }
      if (existing.status === 200) return { kind: 'order', body: existing.body };
      return {
        kind: 'result',
        result: { outcome: 'unknown', reason: `existing order: HTTP ${existing.status}` },
      };
    }
    const refused = refusedStart(refusal);
    if (!refused) {
      return {
        kind: 'result',
        result: { outcome: 'unknown', reason: `create order: HTTP ${answer.status} ${refusal.code}` },
      };
    }
    return {
      kind: 'result',
      result: {
        outcome: 'failed',
        errorCode: refused.code,
        errorReason: refused.reason,
        reference: null,
        rawStatus: refusal.code || null,
      },
    };
  }

  async function status(payment: ConnectorPayment): Promise<StatusResult> {
    const answer = await callProvider({
      method: 'GET',
      url: `${orderUrl(payment.id)}/payments`,
      headers,
      timeoutMs,
    });
    if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
    const refusal = refusalOf(answer);
    if (answer.status === 404 && refusal.type === 'invalid_request_error' && /not_found/.test(refusal.code)) {
      // Cashfree holds no order for this payment: the start never reached it. (Its answer to a bad
      // URL is a 404 too, `request_failed`: that one says nothing about the payment.)
      return { outcome: 'not_started', rawStatus: null };
    }
    if (answer.status !== 200) return { outcome: 'unknown', reason: `HTTP ${answer.status}` };
    if (!Array.isArray(answer.body)) return { outcome: 'unknown', reason: 'payments is not a list' };
    if (answer.body.length === 0) return { outcome: 'not_started', rawStatus: null };
    const attempt = latestAttempt(answer.body);
    const orderId = stringField(attempt, 'order_id');
    if (orderId !== undefined && orderId !== payment.id) {
      return { outcome: 'unknown', reason: `answer about order ${orderId}` };
    }
    return cashfreeStatus(attempt);
  }

  async function refundStatus(refund: ConnectorRefund): Promise<RefundResult> {
    const answer = await callProvider({
      method: 'GET',
      url: `${orderUrl(refund.payment.id)}/refunds/${encodeURIComponent(refund.id)}`,
      headers,
      timeoutMs,
    });
    if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
    if (answer.status !== 200) return { outcome: 'unknown', reason: `HTTP ${answer.status}` };
    return refundOf(answer.body, refund);
  }

  return {
    name: 'cashfree',
    methods: { netbanking: Object.keys(CASHFREE_BANKS), wallet: Object.keys(CASHFREE_WALLETS) },

    async initiate(payment): Promise<InitiateResult> {
      const paymentMethod = cashfreePaymentMethod(payment);
      if (!paymentMethod) {
        return {
          outcome: 'failed',
          errorCode: 'bank_unavailable',
          errorReason: 'The provider does not take payments from this bank or wallet.',
          reference: null,
          rawStatus: null,
        };
      }
      const order = await createOrder(payment);
      if (order.kind === 'result') return order.result;
      const cfOrderId = idField(order.body, 'cf_order_id') ?? null;
      const orderStatus = stringField(order.body, 'order_status');
      // An order found again must be this payment's: same amount and currency.
      if (
        paiseFromCashfree(field(order.body, 'order_amount')) !== payment.amount ||
        stringField(order.body, 'order_currency') !== payment.currency
      ) {
        return { outcome: 'unknown', reason: 'the order at Cashfree differs from the payment' };
      }
      if (orderStatus === 'PAID')
        return { outcome: 'unknown', reason: 'the order is paid already: ask status' };
      if (
        orderStatus === 'EXPIRED' ||
        orderStatus === 'TERMINATED' ||
        orderStatus === 'TERMINATION_REQUESTED'
      ) {
        const inactive = lookup(CASHFREE_ERRORS, 'order_inactive') ?? CASHFREE_DEFAULT_DECLINE;
        return {
          outcome: 'failed',
          errorCode: inactive.code,
          errorReason: inactive.reason,
          reference: cfOrderId,
          rawStatus: orderStatus,
        };
      }
      if (orderStatus !== 'ACTIVE')
        return { outcome: 'unknown', reason: `order_status ${orderStatus ?? 'missing'}` };
      const sessionId = stringField(order.body, 'payment_session_id');
      if (!sessionId) return { outcome: 'unknown', reason: 'no payment_session_id' };

      // Not retried: each call starts another attempt (the order still takes one payment only).
      const pay = await callProvider({
        method: 'POST',
        url: `${base}/orders/sessions`,
        headers,
        json: { payment_session_id: sessionId, payment_method: paymentMethod },
        timeoutMs,
      });
      if (pay.kind === 'unknown') return { outcome: 'unknown', reason: `pay: ${pay.reason}` };
      if (pay.status !== 200) {
        const refusal = refusalOf(pay);
        const refused = refusedStart(refusal);
        if (!refused) return { outcome: 'unknown', reason: `pay: HTTP ${pay.status} ${refusal.code}` };
        return {
          outcome: 'failed',
          errorCode: refused.code,
          errorReason: refused.reason,
          reference: cfOrderId,
          rawStatus: refusal.code || null,
        };
      }
      const step = nextStepOf(field(pay.body, 'data'));
      if (typeof step === 'string') return { outcome: 'unknown', reason: `pay: ${step}` };
      const cfPaymentId = idField(pay.body, 'cf_payment_id');
      return {
        outcome: 'started',
        action: step.action,
        next: step.next,
        reference: cfOrderId,
        rawStatus: orderStatus,
        data: {
          ...(cfOrderId ? { cf_order_id: cfOrderId } : {}),
          payment_session_id: sessionId,
          ...(cfPaymentId ? { cf_payment_id: cfPaymentId } : {}),
        },
        reconcile: true,
      };
    },

    /** Cashfree's return carries the order id only, unsigned: Kosh asks `status`. */
    async handleReturn() {
      return { verified: false };
    },

    async parseWebhook(webhook): Promise<WebhookResult> {
      let body: unknown;
      try {
        body = JSON.parse(webhook.rawBody.toString('utf8'));
      } catch {
        return { verified: false, paymentId: null, reason: 'not JSON' };
      }
      const data = field(body, 'data');
      const paymentId =
        stringField(data, 'order', 'order_id') ?? stringField(data, 'refund', 'order_id') ?? null;
      const signature = headerValue(webhook.headers, 'x-webhook-signature');
      const timestamp = headerValue(webhook.headers, 'x-webhook-timestamp');
      if (!signature || !timestamp) return { verified: false, paymentId, reason: 'unsigned' };
      // Signed: base64(HMAC-SHA256(timestamp + raw body, client secret)), over the bytes received.
      const expected = createHmac('sha256', secret)
        .update(timestamp, 'utf8')
        .update(webhook.rawBody)
        .digest('base64');
      const given = Buffer.from(signature, 'utf8');
      const wanted = Buffer.from(expected, 'utf8');
      if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
        return { verified: false, paymentId, reason: 'bad signature' };
      }
      // Cashfree's timestamp is in milliseconds; an old one is a replay of a signed body.
      if (!/^\d{1,16}$/.test(timestamp) || Math.abs(now().getTime() - Number(timestamp)) > toleranceMs) {
        return { verified: false, paymentId, reason: 'timestamp outside the tolerance' };
      }
      const attempt = field(data, 'payment');
      const type = stringField(body, 'type');
      const cfPaymentId = idField(attempt, 'cf_payment_id');
      const eventId =
        headerValue(webhook.headers, 'x-idempotency-key') ??
        (type && cfPaymentId ? `${type}:${cfPaymentId}` : null);
      if (!attempt || typeof attempt !== 'object')
        return { verified: true, eventId, paymentId, status: null };
      const orderId = stringField(attempt, 'order_id');
      if (orderId !== undefined && orderId !== paymentId) {
        return { verified: false, paymentId, reason: 'data.payment is about another order' };
      }
      return {
        verified: true,
        eventId,
        paymentId,
        status: cashfreeStatus(attempt, field(data, 'error_details') ?? field(attempt, 'error_details')),
      };
    },

    status,

    async refund(refund): Promise<RefundResult> {
      // The refund id is unique per order at Cashfree and the request carries an idempotency key:
      // sending it again answers the first request, or finds the refund; it never refunds twice.
      const answer = await callIdempotent({
        method: 'POST',
        url: `${orderUrl(refund.payment.id)}/refunds`,
        headers: { ...headers, 'x-idempotency-key': cashfreeIdempotencyKey(refund.id) },
        json: {
          refund_id: refund.id,
          refund_amount: cashfreeAmount(refund.amount),
          refund_speed: refund.speed === 'instant' ? 'INSTANT' : 'STANDARD',
        },
        timeoutMs,
      });
      if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
      if (answer.status === 200) return refundOf(answer.body, refund);
      const refusal = refusalOf(answer);
      if (answer.status === 409 || /already_exist|duplicate/i.test(refusal.code)) return refundStatus(refund);
      if (answer.status === 401) {
        return {
          outcome: 'failed',
          rawStatus: refusal.code || null,
          errorCode: CASHFREE_AUTHENTICATION_ERROR.code,
          errorReason: CASHFREE_AUTHENTICATION_ERROR.reason,
        };
      }
      if (answer.status === 400 || answer.status === 404) {
        return {
          outcome: 'failed',
          rawStatus: refusal.code || null,
          errorCode: CASHFREE_REFUND_DECLINE.code,
          errorReason: refusal.message || CASHFREE_REFUND_DECLINE.reason,
        };
      }
      return { outcome: 'unknown', reason: `HTTP ${answer.status} ${refusal.code}` };
    },

    refundStatus,
  };
}
