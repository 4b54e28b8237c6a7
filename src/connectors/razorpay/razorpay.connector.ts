import { createHmac, timingSafeEqual } from 'node:crypto';
import type {
  BrowserDetails,
  Connector,
  ConnectorPayment,
  ConnectorRefund,
  InitiateResult,
  PaymentOutcome,
  RefundResult,
  StatusResult,
  WebhookResult,
} from '../connector.js';
import { callIdempotent, callProvider, numberField, type ProviderAnswer, stringField } from '../http.js';
import {
  type KoshFailure,
  RAZORPAY_ATTEMPT_PREFERENCE,
  RAZORPAY_BANKS,
  RAZORPAY_DEFAULT_ERROR,
  RAZORPAY_ERRORS,
  RAZORPAY_PAYMENT_STATUSES,
  RAZORPAY_REFUND_SPEEDS,
  RAZORPAY_REFUND_STATUSES,
  RAZORPAY_REFUSALS_TO_ASK_ABOUT,
  RAZORPAY_UNCAPTURED_REFUND,
  RAZORPAY_WALLETS,
} from './razorpay.tables.js';

/**
 * Razorpay's server-to-server JSON API (net banking and wallets): one Razorpay order per Kosh
 * payment (its receipt is Kosh's payment id), then a payment on it created once the customer's
 * browser is at Kosh (Razorpay wants the customer's address, user agent and referer), the bank's
 * page, Razorpay's signed return, its signed webhooks and its fetch APIs. Statuses and errors map
 * through razorpay.tables.ts; an answer the connector cannot read is `unknown` (docs/connectors.md).
 * Verified only against its fake (test/helpers/providers/razorpay-fake.ts).
 */
export interface RazorpayCredentials {
  key_id: string;
  key_secret: string;
  webhook_secret: string;
}

/** The notes that tie Razorpay's order, payment and refund to Kosh's ids (webhooks carry them). */
const NOTE_PAYMENT = 'kosh_payment_id';
const NOTE_ORDER = 'kosh_order_id';
const NOTE_REFUND = 'kosh_refund_id';

/**
 * How long after the payment Razorpay still captures an authorisation by itself: by default Kosh's
 * own late-authorisation window (three days), so everything Razorpay captures is something Kosh
 * still asks about. Later authorisations stay uncaptured and Razorpay returns the money.
 */
const DEFAULT_AUTO_CAPTURE_MINUTES = 3 * 24 * 60;
/** Razorpay's documented bounds for the automatic capture window, in minutes. */
const AUTO_CAPTURE_BOUNDS = { min: 12, max: 7200 } as const;

/** Razorpay's idempotency keys: at least 10 letters, digits, `-` or `_` (Kosh's refund ids are). */
const IDEMPOTENCY_KEY = /^[A-Za-z0-9_-]{10,}$/;

/** A table row by its own key only: `constructor` or `__proto__` from Razorpay is not a row. */
function row<T>(table: Readonly<Record<string, T>>, key: string | undefined): T | undefined {
  return key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

function hmacHex(secret: string, data: string | Buffer): string {
  return createHmac('sha256', secret).update(data).digest('hex');
}

/** Constant-time comparison of two hex signatures (an odd or empty one never matches). */
function equalHex(given: string, expected: string): boolean {
  if (!/^[0-9a-f]+$/i.test(given) || given.length !== expected.length) return false;
  const left = Buffer.from(given, 'hex');
  const right = Buffer.from(expected, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** The payment's signature on a successful return: HMAC-SHA256 hex of `order_id|payment_id`. */
export function razorpayPaymentSignature(keySecret: string, orderId: string, paymentId: string): string {
  return hmacHex(keySecret, `${orderId}|${paymentId}`);
}

/** Razorpay's failure (`error_reason` first, then `error_code`) in Kosh's words. */
export function razorpayFailure(reason: string | undefined, code: string | undefined): KoshFailure {
  return row(RAZORPAY_ERRORS, reason) ?? row(RAZORPAY_ERRORS, code) ?? RAZORPAY_DEFAULT_ERROR;
}

/** A Razorpay `notes` value: an object, or `[]` when empty. */
function note(entity: unknown, key: string): string | undefined {
  const notes = entity && typeof entity === 'object' ? (entity as { notes?: unknown }).notes : undefined;
  if (!notes || typeof notes !== 'object' || Array.isArray(notes)) return undefined;
  return text((notes as Record<string, unknown>)[key]);
}

/** A Razorpay payment entity in Kosh's words. Its order id is the reference Kosh cross-checks. */
export function razorpayPaymentStatus(entity: unknown): StatusResult {
  const raw = stringField(entity, 'status');
  let outcome: PaymentOutcome = row(RAZORPAY_PAYMENT_STATUSES, raw) ?? 'unknown';
  // `refunded` without a capture: the authorisation came too late and went back uncaptured.
  const uncaptured =
    raw === 'refunded' &&
    !!entity &&
    typeof entity === 'object' &&
    (entity as { captured?: unknown }).captured === false;
  if (uncaptured) outcome = 'failed';
  const failure =
    outcome !== 'failed'
      ? undefined
      : uncaptured
        ? RAZORPAY_UNCAPTURED_REFUND
        : razorpayFailure(stringField(entity, 'error_reason'), stringField(entity, 'error_code'));
  const paymentId = text(stringField(entity, 'id'));
  return {
    outcome,
    rawStatus: raw ?? null,
    amount: numberField(entity, 'amount'),
    currency: text(stringField(entity, 'currency')),
    reference: text(stringField(entity, 'order_id')) ?? null,
    bankReference:
      text(stringField(entity, 'acquirer_data', 'bank_transaction_id')) ??
      text(stringField(entity, 'acquirer_data', 'transaction_id')) ??
      null,
    // Razorpay's `fee` includes its `tax`; both are passed on as Razorpay states them.
    fee: numberField(entity, 'fee') ?? null,
    tax: numberField(entity, 'tax') ?? null,
    ...(paymentId ? { data: { razorpay_payment_id: paymentId } } : {}),
    ...(failure ? { errorCode: failure.code, errorReason: failure.reason } : {}),
    ...(outcome === 'unknown' ? { reason: `Razorpay payment status ${JSON.stringify(raw ?? null)}` } : {}),
  };
}

/** A Razorpay refund entity in Kosh's words. */
export function razorpayRefundResult(entity: unknown): RefundResult {
  const raw = stringField(entity, 'status');
  const outcome = row(RAZORPAY_REFUND_STATUSES, raw) ?? 'unknown';
  const id = text(stringField(entity, 'id'));
  const speed = text(stringField(entity, 'speed_processed'));
  return {
    outcome,
    rawStatus: raw ?? null,
    reference: id ?? null,
    data: { ...(id ? { razorpay_refund_id: id } : {}), ...(speed ? { speed_processed: speed } : {}) },
    ...(outcome === 'failed'
      ? { errorCode: 'refund_declined', errorReason: 'Razorpay could not process the refund.' }
      : {}),
    ...(outcome === 'unknown' ? { reason: `Razorpay refund status ${JSON.stringify(raw ?? null)}` } : {}),
  };
}

/** Razorpay's `method` and bank or wallet code for Kosh's, when the tables have it. */
function instrumentOf(
  payment: ConnectorPayment,
): { method: 'netbanking'; bank: string } | { method: 'wallet'; wallet: string } | undefined {
  if (payment.method === 'netbanking') {
    const bank = payment.code.toUpperCase();
    return RAZORPAY_BANKS.includes(bank) ? { method: 'netbanking', bank } : undefined;
  }
  const wallet = row(RAZORPAY_WALLETS, payment.code.toLowerCase());
  return wallet ? { method: 'wallet', wallet } : undefined;
}

/** Of an order's payment attempts, the one that speaks for it (razorpay.tables.ts). */
function attemptFor(items: readonly unknown[]): unknown {
  for (const status of RAZORPAY_ATTEMPT_PREFERENCE) {
    const found = items.find((item) => stringField(item, 'status') === status);
    if (found) return found;
  }
  return items.reduce((latest, item) =>
    (numberField(item, 'created_at') ?? 0) >= (numberField(latest, 'created_at') ?? 0) ? item : latest,
  );
}

/** Why an answer that is not the documented success counts as unknown (logged, never shown). */
function unreadable(answer: Extract<ProviderAnswer, { kind: 'answer' }>): string {
  const description = stringField(answer.body, 'error', 'description');
  return `HTTP ${answer.status}${description ? `: ${description}` : ''}`;
}

/**
 * Razorpay's own refusal of a request: HTTP 400 with its error object and a reason. Errors that
 * are not about the request itself (bad credentials, an idempotency clash) come with reason `NA`,
 * sometimes also as a 400: those say nothing about the payment or refund, so they are not refusals.
 */
function refusal(answer: ProviderAnswer): { code: string; reason: string; description?: string } | undefined {
  if (answer.kind !== 'answer' || answer.status !== 400) return undefined;
  const code = text(stringField(answer.body, 'error', 'code'));
  const reason = text(stringField(answer.body, 'error', 'reason'));
  if (!code || !reason || reason === 'NA') return undefined;
  return { code, reason, description: stringField(answer.body, 'error', 'description') };
}

/** The collection's `items`, when the answer is one. */
function itemsOf(body: unknown): unknown[] | undefined {
  const items = body && typeof body === 'object' ? (body as { items?: unknown }).items : undefined;
  return Array.isArray(items) ? items : undefined;
}

/** The `redirect` action's URL among the create answer's `next` steps (http or https only). */
function redirectOf(body: unknown): string | undefined {
  const next = body && typeof body === 'object' ? (body as { next?: unknown }).next : undefined;
  if (!Array.isArray(next)) return undefined;
  const url = text(
    stringField(
      next.find((step) => stringField(step, 'action') === 'redirect'),
      'url',
    ),
  );
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** A header of the webhook, whatever its case, the first when repeated. */
function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

/**
 * The failure fields of a return, however the form arrived: `error[code]=…` parsed one level deep
 * (`{ error: { code } }`) or kept flat. `error[metadata]` is JSON text (or, parsed deeper, an object).
 */
function returnedError(fields: Record<string, unknown>) {
  const nested =
    fields.error && typeof fields.error === 'object' ? (fields.error as Record<string, unknown>) : {};
  const pick = (key: string) => text(nested[key]) ?? text(fields[`error[${key}]`]);
  let metadata: unknown = nested.metadata ?? fields['error[metadata]'];
  if (typeof metadata === 'string') {
    try {
      metadata = JSON.parse(metadata);
    } catch {
      metadata = undefined;
    }
  }
  const orderId =
    text(stringField(metadata, 'order_id')) ?? text(fields['error[metadata][order_id]']) ?? undefined;
  const code = pick('code');
  const reason = pick('reason');
  return code || reason ? { code, reason, orderId } : undefined;
}

export function createRazorpayConnector(options: {
  baseUrl: string;
  credentials: RazorpayCredentials;
  timeoutMs?: number;
  /** Minutes after the payment during which Razorpay captures an authorisation by itself. */
  autoCaptureMinutes?: number;
}): Connector {
  const base = options.baseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const { key_id, key_secret, webhook_secret } = options.credentials;
  const auth = { authorization: `Basic ${Buffer.from(`${key_id}:${key_secret}`).toString('base64')}` };
  const captureMinutes = Math.min(
    AUTO_CAPTURE_BOUNDS.max,
    Math.max(AUTO_CAPTURE_BOUNDS.min, Math.round(options.autoCaptureMinutes ?? DEFAULT_AUTO_CAPTURE_MINUTES)),
  );
  const enc = encodeURIComponent;

  /** Reads are safe to repeat: a lost answer is asked once more before it is left unknown. */
  const get = (path: string) =>
    callIdempotent({ method: 'GET', url: `${base}${path}`, headers: auth, timeoutMs });

  /** The Razorpay order of a payment: what Kosh stored, or the reference it recorded. */
  const orderIdOf = (payment: ConnectorPayment): string | undefined =>
    text(payment.provider.data.razorpay_order_id) ?? text(payment.provider.reference);

  /**
   * The order made for a Kosh payment, found by its receipt (Kosh's payment id). Razorpay does not
   * refuse a second order with the same receipt, so this look-up is what keeps a retried start
   * from making another order.
   */
  async function findOrder(
    payment: ConnectorPayment,
  ): Promise<{ kind: 'found'; order: unknown } | { kind: 'none' } | { kind: 'unknown'; reason: string }> {
    const answer = await get(`/v1/orders?receipt=${enc(payment.id)}&count=100`);
    if (answer.kind === 'unknown') return { kind: 'unknown', reason: answer.reason };
    if (answer.status !== 200) return { kind: 'unknown', reason: unreadable(answer) };
    const items = itemsOf(answer.body);
    if (!items) return { kind: 'unknown', reason: 'orders: no items' };
    // The filter may match more than the exact receipt; only Kosh's own id counts.
    const mine = items.filter(
      (item) => stringField(item, 'receipt') === payment.id && stringField(item, 'id'),
    );
    const order = mine.find((item) => stringField(item, 'status') === 'paid') ?? mine[0];
    if (!order) return { kind: 'none' };
    if (
      numberField(order, 'amount') !== payment.amount ||
      stringField(order, 'currency') !== payment.currency
    ) {
      return { kind: 'unknown', reason: 'an order with this receipt has another amount or currency' };
    }
    return { kind: 'found', order };
  }

  function started(order: unknown): InitiateResult {
    const id = stringField(order, 'id') as string;
    return {
      outcome: 'started',
      action: 'redirect',
      next: { kind: 'browser' },
      reference: id,
      rawStatus: stringField(order, 'status') ?? null,
      data: { razorpay_order_id: id },
      reconcile: true,
    };
  }

  function refused(failure: KoshFailure, reference: string | null, raw: string | undefined): InitiateResult {
    return {
      outcome: 'failed',
      errorCode: failure.code,
      errorReason: failure.reason,
      reference,
      rawStatus: raw ?? null,
    };
  }

  /** The newest word on an order: its best payment attempt, or `not_started` when it has none. */
  async function orderStatus(orderId: string): Promise<StatusResult> {
    const answer = await get(`/v1/orders/${enc(orderId)}/payments`);
    if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
    if (answer.status !== 200) return { outcome: 'unknown', reason: unreadable(answer) };
    const items = itemsOf(answer.body);
    if (!items) return { outcome: 'unknown', reason: 'order payments: no items' };
    if (items.length === 0) return { outcome: 'not_started', rawStatus: 'no_payment', reference: orderId };
    return razorpayPaymentStatus(attemptFor(items));
  }

  async function status(payment: ConnectorPayment): Promise<StatusResult> {
    const paymentId = text(payment.provider.data.razorpay_payment_id);
    if (paymentId) {
      const answer = await get(`/v1/payments/${enc(paymentId)}`);
      if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
      if (answer.status !== 200) return { outcome: 'unknown', reason: unreadable(answer) };
      return razorpayPaymentStatus(answer.body);
    }
    const orderId = orderIdOf(payment);
    if (orderId) return orderStatus(orderId);
    // The order's answer was lost: it may still exist, under Kosh's payment id as its receipt.
    const found = await findOrder(payment);
    if (found.kind === 'unknown') return { outcome: 'unknown', reason: found.reason };
    if (found.kind === 'none') return { outcome: 'not_started', rawStatus: 'no_order' };
    return orderStatus(stringField(found.order, 'id') as string);
  }

  /** The Razorpay payment that took the money, which is what a refund is made on. */
  async function paidPaymentId(payment: ConnectorPayment): Promise<{ id: string } | { reason: string }> {
    const known = text(payment.provider.data.razorpay_payment_id);
    if (known) return { id: known };
    const orderId = orderIdOf(payment);
    if (!orderId) return { reason: 'no Razorpay order for this payment' };
    const answer = await get(`/v1/orders/${enc(orderId)}/payments`);
    if (answer.kind === 'unknown') return { reason: answer.reason };
    if (answer.status !== 200) return { reason: unreadable(answer) };
    const captured = itemsOf(answer.body)?.find((item) => stringField(item, 'status') === 'captured');
    const id = text(stringField(captured, 'id'));
    return id ? { id } : { reason: 'no captured Razorpay payment on the order' };
  }

  /** A refund already made for this Kosh refund (its receipt), among the payment's refunds. */
  async function refundByReceipt(
    paymentId: string,
    refundId: string,
  ): Promise<{ kind: 'found'; refund: unknown } | { kind: 'none' } | { kind: 'unknown'; reason: string }> {
    const answer = await get(`/v1/payments/${enc(paymentId)}/refunds?count=100`);
    if (answer.kind === 'unknown') return { kind: 'unknown', reason: answer.reason };
    if (answer.status !== 200) return { kind: 'unknown', reason: unreadable(answer) };
    const items = itemsOf(answer.body);
    if (!items) return { kind: 'unknown', reason: 'refunds: no items' };
    const refund = items.find((item) => stringField(item, 'receipt') === refundId);
    return refund ? { kind: 'found', refund } : { kind: 'none' };
  }

  return {
    name: 'razorpay',
    methods: { netbanking: RAZORPAY_BANKS, wallet: Object.keys(RAZORPAY_WALLETS) },

    async initiate(payment): Promise<InitiateResult> {
      const found = await findOrder(payment);
      if (found.kind === 'unknown') return { outcome: 'unknown', reason: found.reason };
      if (found.kind === 'found') return started(found.order);
      // Not retried on an unknown answer: the next start finds the order by its receipt instead.
      const answer = await callProvider({
        method: 'POST',
        url: `${base}/v1/orders`,
        headers: auth,
        json: {
          amount: payment.amount,
          currency: payment.currency,
          receipt: payment.id,
          notes: { [NOTE_PAYMENT]: payment.id, [NOTE_ORDER]: payment.orderId },
          payment: {
            capture: 'automatic',
            capture_options: {
              automatic_expiry_period: captureMinutes,
              // Kosh never captures by hand: what is not captured automatically goes straight back.
              manual_expiry_period: captureMinutes,
              refund_speed: 'normal',
            },
          },
        },
        timeoutMs,
      });
      if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
      if (answer.status === 200 && stringField(answer.body, 'id')) return started(answer.body);
      const refusedWith = refusal(answer);
      if (refusedWith) {
        return refused(razorpayFailure(refusedWith.reason, refusedWith.code), null, refusedWith.reason);
      }
      return { outcome: 'unknown', reason: unreadable(answer) };
    },

    async continueInBrowser(payment: ConnectorPayment, browser: BrowserDetails): Promise<InitiateResult> {
      const orderId = orderIdOf(payment);
      if (!orderId) return { outcome: 'unknown', reason: 'no Razorpay order yet' };
      const instrument = instrumentOf(payment);
      if (!instrument) {
        return refused(
          row(RAZORPAY_ERRORS, 'bank_not_enabled') ?? RAZORPAY_DEFAULT_ERROR,
          orderId,
          undefined,
        );
      }
      // Not retried: a second create would be a second attempt on the order. A lost answer is
      // asked about (`status`); the next visit of the page makes a new attempt, and Razorpay
      // captures at most one payment per order.
      const answer = await callProvider({
        method: 'POST',
        url: `${base}/v1/payments/create/json`,
        headers: auth,
        json: {
          amount: payment.amount,
          currency: payment.currency,
          order_id: orderId,
          email: payment.customer.email,
          contact: payment.customer.contact,
          ...instrument,
          callback_url: payment.callbackUrl,
          // The customer's own browser, never placeholders: missing values are left out.
          ip: browser.ip,
          ...(browser.referer ? { referer: browser.referer } : {}),
          ...(browser.userAgent ? { user_agent: browser.userAgent } : {}),
          ...(payment.description ? { description: payment.description } : {}),
          notes: { [NOTE_PAYMENT]: payment.id, [NOTE_ORDER]: payment.orderId },
        },
        timeoutMs,
      });
      if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
      if (answer.status === 200) {
        const paymentId = text(stringField(answer.body, 'razorpay_payment_id'));
        const url = redirectOf(answer.body);
        if (!paymentId || !url)
          return { outcome: 'unknown', reason: 'no payment id or redirect in the answer' };
        return {
          outcome: 'started',
          action: 'redirect',
          next: { kind: 'redirect', url },
          reference: orderId,
          rawStatus: 'created',
          data: { razorpay_order_id: orderId, razorpay_payment_id: paymentId },
          reconcile: true,
        };
      }
      const refusedWith = refusal(answer);
      if (refusedWith) {
        if (RAZORPAY_REFUSALS_TO_ASK_ABOUT.includes(refusedWith.reason)) {
          return { outcome: 'unknown', reason: `refused with ${refusedWith.reason}: asking instead` };
        }
        return refused(razorpayFailure(refusedWith.reason, refusedWith.code), orderId, refusedWith.reason);
      }
      return { outcome: 'unknown', reason: unreadable(answer) };
    },

    async handleReturn(payment, browserReturn) {
      const fields = { ...browserReturn.query, ...browserReturn.body } as Record<string, unknown>;
      const orderId = orderIdOf(payment);
      const signature = text(fields.razorpay_signature);
      const paymentId = text(fields.razorpay_payment_id);
      if (signature || paymentId) {
        const verified =
          orderId !== undefined &&
          signature !== undefined &&
          paymentId !== undefined &&
          text(fields.razorpay_order_id) === orderId &&
          equalHex(signature, razorpayPaymentSignature(key_secret, orderId, paymentId));
        // The signature proves the bank authorised a payment on this order, not that Razorpay
        // captured it (a capture can still fail): pending, and Kosh asks for the rest.
        return verified
          ? {
              verified: true,
              status: {
                outcome: 'pending',
                rawStatus: 'authorized',
                reference: orderId,
                data: { razorpay_payment_id: paymentId },
              },
            }
          : { verified: false };
      }
      const error = returnedError(fields);
      // An error return is unsigned: a hint at most, and only about this payment's own order.
      if (!error || (error.orderId !== undefined && error.orderId !== orderId)) return { verified: false };
      const failure = razorpayFailure(error.reason, error.code);
      return {
        verified: false,
        status: {
          outcome: 'failed',
          rawStatus: error.reason ?? error.code ?? 'failed',
          errorCode: failure.code,
          errorReason: failure.reason,
          reference: orderId ?? null,
        },
      };
    },

    async parseWebhook(webhook): Promise<WebhookResult> {
      let body: unknown;
      try {
        body = JSON.parse(webhook.rawBody.toString('utf8'));
      } catch {
        return { verified: false, paymentId: null, reason: 'not JSON' };
      }
      const payload = body && typeof body === 'object' ? (body as { payload?: unknown }).payload : undefined;
      const entityOf = (kind: string) => {
        const holder =
          payload && typeof payload === 'object' ? (payload as Record<string, unknown>)[kind] : undefined;
        return holder && typeof holder === 'object' ? (holder as { entity?: unknown }).entity : undefined;
      };
      const payment = entityOf('payment');
      const order = entityOf('order');
      const paymentId =
        note(payment, NOTE_PAYMENT) ??
        note(order, NOTE_PAYMENT) ??
        text(stringField(order, 'receipt')) ??
        null;
      const signature = header(webhook.headers, 'x-razorpay-signature');
      // Signed over the exact bytes Razorpay sent, never over re-serialised JSON.
      if (!signature || !equalHex(signature, hmacHex(webhook_secret, webhook.rawBody))) {
        return { verified: false, paymentId, reason: 'bad signature' };
      }
      const event = stringField(body, 'event') ?? '';
      const aboutPayment = event.startsWith('payment.') || event === 'order.paid';
      return {
        verified: true,
        eventId: text(header(webhook.headers, 'x-razorpay-event-id')) ?? null,
        paymentId,
        status: aboutPayment && payment ? razorpayPaymentStatus(payment) : null,
      };
    },

    status,

    async refund(refund: ConnectorRefund): Promise<RefundResult> {
      if (!IDEMPOTENCY_KEY.test(refund.id)) {
        return { outcome: 'unknown', reason: 'the refund id cannot be a Razorpay idempotency key' };
      }
      const paid = await paidPaymentId(refund.payment);
      if (!('id' in paid)) return { outcome: 'unknown', reason: paid.reason };
      // A refund made before (an answer lost, then resent) is found by its receipt. Should the
      // look-up fail, the idempotency key below still keeps Razorpay from refunding twice.
      const existing = await refundByReceipt(paid.id, refund.id);
      if (existing.kind === 'found') return razorpayRefundResult(existing.refund);
      // The same body every time: Razorpay refuses a key resent with another body.
      const answer = await callIdempotent(
        {
          method: 'POST',
          url: `${base}/v1/payments/${enc(paid.id)}/refund`,
          headers: { ...auth, 'X-Refund-Idempotency': refund.id },
          json: {
            amount: refund.amount,
            speed: RAZORPAY_REFUND_SPEEDS[refund.speed],
            receipt: refund.id,
            notes: { [NOTE_REFUND]: refund.id, [NOTE_PAYMENT]: refund.paymentId },
          },
          timeoutMs,
        },
        { attempts: 2 },
      );
      if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
      if (answer.status === 200) return razorpayRefundResult(answer.body);
      const refusedWith = refusal(answer);
      // A refusal about the key itself says nothing of the refund: it may exist. Ask instead.
      if (refusedWith && !/idempoten/i.test(refusedWith.description ?? '')) {
        return {
          outcome: 'failed',
          rawStatus: refusedWith.reason,
          errorCode: 'refund_declined',
          errorReason: refusedWith.description ?? 'Razorpay refused the refund.',
        };
      }
      return { outcome: 'unknown', reason: unreadable(answer) };
    },

    async refundStatus(refund: ConnectorRefund): Promise<RefundResult> {
      const reference = text(refund.provider.reference);
      if (reference) {
        const answer = await get(`/v1/refunds/${enc(reference)}`);
        if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
        if (answer.status !== 200) return { outcome: 'unknown', reason: unreadable(answer) };
        return razorpayRefundResult(answer.body);
      }
      const paid = await paidPaymentId(refund.payment);
      if (!('id' in paid)) return { outcome: 'unknown', reason: paid.reason };
      const existing = await refundByReceipt(paid.id, refund.id);
      if (existing.kind === 'found') return razorpayRefundResult(existing.refund);
      if (existing.kind === 'unknown') return { outcome: 'unknown', reason: existing.reason };
      return { outcome: 'unknown', reason: 'Razorpay holds no refund with this receipt' };
    },
  };
}
