import type {
  BrowserDetails,
  ConnectorPayment,
  ConnectorRefund,
  InitiateResult,
  NextStep,
  PaymentOutcome,
  RefundResult,
  StatusResult,
} from '../connector.js';
import { numberField, type ProviderAnswer, stringField } from '../http.js';
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
  RAZORPAY_UPI_PAYMENT_STATUSES,
  RAZORPAY_WALLETS,
} from './razorpay.tables.js';

/**
 * What Razorpay is sent and what it answers, and the reading of those answers in Kosh's words.
 * An answer that is not the documented shape reads as `unknown`.
 */

export interface RazorpayCredentials {
  key_id: string;
  key_secret: string;
  webhook_secret: string;
}

/** The notes that tie Razorpay's order, payment and refund to Kosh's ids (webhooks carry them). */
export const NOTE_PAYMENT = 'kosh_payment_id';
export const NOTE_ORDER = 'kosh_order_id';
const NOTE_REFUND = 'kosh_refund_id';

/**
 * How long after the payment Razorpay still captures an authorisation by itself: by default Kosh's
 * own late-authorisation window (three days), so everything Razorpay captures is something Kosh
 * still asks about. Later authorisations stay uncaptured and Razorpay returns the money.
 */
const DEFAULT_AUTO_CAPTURE_MINUTES = 3 * 24 * 60;
/** Razorpay's documented bounds for the automatic capture window, in minutes. */
const AUTO_CAPTURE_BOUNDS = { min: 12, max: 7200 } as const;

/** The automatic capture window sent, within Razorpay's bounds. */
export function autoCaptureMinutes(requested: number | undefined): number {
  return Math.min(
    AUTO_CAPTURE_BOUNDS.max,
    Math.max(AUTO_CAPTURE_BOUNDS.min, Math.round(requested ?? DEFAULT_AUTO_CAPTURE_MINUTES)),
  );
}

/** A table row by its own key only: `constructor` or `__proto__` from Razorpay is not a row. */
export function row<T>(table: Readonly<Record<string, T>>, key: string | undefined): T | undefined {
  return key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}

export const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/** Razorpay's failure (`error_reason` first, then `error_code`) in Kosh's words. */
export function razorpayFailure(reason: string | undefined, code: string | undefined): KoshFailure {
  return row(RAZORPAY_ERRORS, reason) ?? row(RAZORPAY_ERRORS, code) ?? RAZORPAY_DEFAULT_ERROR;
}

/** A Razorpay `notes` value: an object, or `[]` when empty. */
export function note(entity: unknown, key: string): string | undefined {
  const notes = entity && typeof entity === 'object' ? (entity as { notes?: unknown }).notes : undefined;
  if (!notes || typeof notes !== 'object' || Array.isArray(notes)) return undefined;
  return text((notes as Record<string, unknown>)[key]);
}

/** Razorpay's `method` and bank or wallet code for Kosh's, when the tables have it. */
export type RazorpayInstrument =
  | { method: 'netbanking'; bank: string }
  | { method: 'wallet'; wallet: string };

export function instrumentOf(payment: ConnectorPayment): RazorpayInstrument | undefined {
  if (payment.method === 'netbanking') {
    const bank = payment.code.toUpperCase();
    return RAZORPAY_BANKS.includes(bank) ? { method: 'netbanking', bank } : undefined;
  }
  const wallet = row(RAZORPAY_WALLETS, payment.code.toLowerCase());
  return wallet ? { method: 'wallet', wallet } : undefined;
}

/** `POST /v1/orders`: one order per Kosh payment, its receipt Kosh's payment id. */
export function razorpayOrderRequest(payment: ConnectorPayment, captureMinutes: number) {
  return {
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
  };
}
export type RazorpayOrderRequest = ReturnType<typeof razorpayOrderRequest>;

/** `POST /v1/payments/create/json`: a payment attempt on the order, from the customer's browser. */
export function razorpayPaymentRequest(
  payment: ConnectorPayment,
  orderId: string,
  instrument: RazorpayInstrument,
  browser: BrowserDetails,
) {
  return {
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
  };
}
export type RazorpayPaymentRequest = ReturnType<typeof razorpayPaymentRequest>;

/** `POST /v1/payments/{id}/refund`: the same body every time (Razorpay refuses a key resent with another). */
export function razorpayRefundRequest(refund: ConnectorRefund) {
  return {
    amount: refund.amount,
    speed: RAZORPAY_REFUND_SPEEDS[refund.speed],
    receipt: refund.id,
    notes: { [NOTE_REFUND]: refund.id, [NOTE_PAYMENT]: refund.paymentId },
  };
}
export type RazorpayRefundRequest = ReturnType<typeof razorpayRefundRequest>;

/**
 * A Razorpay payment entity in Kosh's words. Its order id is the reference Kosh cross-checks. A UPI
 * payment (`method: upi`) reads through its own status table, names the VPA that paid (`vpa`) and
 * the UPI RRN (`acquirer_data.rrn`), and fails with Razorpay's own description of the failure.
 */
export function razorpayPaymentStatus(entity: unknown): StatusResult {
  const raw = stringField(entity, 'status');
  const upi = stringField(entity, 'method') === 'upi';
  const statuses = upi ? RAZORPAY_UPI_PAYMENT_STATUSES : RAZORPAY_PAYMENT_STATUSES;
  let outcome: PaymentOutcome = row(statuses, raw) ?? 'unknown';
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
        : upiFailure(
            upi,
            razorpayFailure(stringField(entity, 'error_reason'), stringField(entity, 'error_code')),
            stringField(entity, 'error_description'),
          );
  const paymentId = text(stringField(entity, 'id'));
  return {
    outcome,
    rawStatus: raw ?? null,
    amount: numberField(entity, 'amount'),
    currency: text(stringField(entity, 'currency')),
    reference: text(stringField(entity, 'order_id')) ?? null,
    bankReference:
      text(stringField(entity, 'acquirer_data', 'rrn')) ??
      text(stringField(entity, 'acquirer_data', 'bank_transaction_id')) ??
      text(stringField(entity, 'acquirer_data', 'transaction_id')) ??
      null,
    // Razorpay's `fee` includes its `tax`; both are passed on as Razorpay states them.
    fee: numberField(entity, 'fee') ?? null,
    tax: numberField(entity, 'tax') ?? null,
    ...(upi ? { payerVpa: text(stringField(entity, 'vpa')) ?? null } : {}),
    ...(paymentId ? { data: { razorpay_payment_id: paymentId } } : {}),
    ...(failure ? { errorCode: failure.code, errorReason: failure.reason } : {}),
    ...(outcome === 'unknown' ? { reason: `Razorpay payment status ${JSON.stringify(raw ?? null)}` } : {}),
  };
}

/**
 * A UPI failure keeps Kosh's code for it (razorpay.tables.ts) with Razorpay's own description (what
 * the UPI app or bank said: a decline, a wrong PIN, an expired request), when it gives one.
 */
function upiFailure(upi: boolean, failure: KoshFailure, description: string | undefined): KoshFailure {
  const said = upi ? text(description)?.slice(0, 255) : undefined;
  return said ? { code: failure.code, reason: said } : failure;
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

/** Of an order's payment attempts, the one that speaks for it (razorpay.tables.ts). */
export function attemptFor(items: readonly unknown[]): unknown {
  for (const status of RAZORPAY_ATTEMPT_PREFERENCE) {
    const found = items.find((item) => stringField(item, 'status') === status);
    if (found) return found;
  }
  return items.reduce((latest, item) =>
    (numberField(item, 'created_at') ?? 0) >= (numberField(latest, 'created_at') ?? 0) ? item : latest,
  );
}

/** Why an answer that is not the documented success counts as unknown (logged, never shown). */
export function unreadable(answer: Extract<ProviderAnswer, { kind: 'answer' }>): string {
  const description = stringField(answer.body, 'error', 'description');
  return `HTTP ${answer.status}${description ? `: ${description}` : ''}`;
}

/**
 * Razorpay's own refusal of a request: HTTP 400 with its error object and a reason. Errors that
 * are not about the request itself (bad credentials, an idempotency clash) come with reason `NA`,
 * sometimes also as a 400: those say nothing about the payment or refund, so they are not refusals.
 */
export function refusal(
  answer: ProviderAnswer,
): { code: string; reason: string; description?: string } | undefined {
  if (answer.kind !== 'answer' || answer.status !== 400) return undefined;
  const code = text(stringField(answer.body, 'error', 'code'));
  const reason = text(stringField(answer.body, 'error', 'reason'));
  if (!code || !reason || reason === 'NA') return undefined;
  return { code, reason, description: stringField(answer.body, 'error', 'description') };
}

/**
 * Razorpay's answer to a payment attempt (net banking, wallet or UPI) in Kosh's words: started,
 * with the step `stepOf` reads from the answer (its reason for `unknown` when it cannot); refused
 * (Razorpay's description as the reason when `describe`, Kosh's own otherwise), or asked about
 * when the refusal may hide a payment; unknown when unreadable.
 */
export function attemptResult(
  answer: ProviderAnswer,
  orderId: string,
  stepOf: (body: unknown) => { action: 'redirect' | 'upi'; next: NextStep } | string,
  describe = false,
): InitiateResult {
  if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
  if (answer.status === 200) {
    const paymentId = text(stringField(answer.body, 'razorpay_payment_id'));
    if (!paymentId) return { outcome: 'unknown', reason: 'no payment id in the answer' };
    const step = stepOf(answer.body);
    if (typeof step === 'string') return { outcome: 'unknown', reason: step };
    return {
      outcome: 'started',
      ...step,
      reference: orderId,
      rawStatus: 'created',
      data: { razorpay_order_id: orderId, razorpay_payment_id: paymentId },
      reconcile: true,
    };
  }
  const refusedWith = refusal(answer);
  if (!refusedWith) return { outcome: 'unknown', reason: unreadable(answer) };
  if (RAZORPAY_REFUSALS_TO_ASK_ABOUT.includes(refusedWith.reason)) {
    return { outcome: 'unknown', reason: `refused with ${refusedWith.reason}: asking instead` };
  }
  const failure = razorpayFailure(refusedWith.reason, refusedWith.code);
  return {
    outcome: 'failed',
    errorCode: failure.code,
    errorReason: (describe ? text(refusedWith.description)?.slice(0, 255) : undefined) ?? failure.reason,
    reference: orderId,
    rawStatus: refusedWith.reason,
  };
}

/** The collection's `items`, when the answer is one. */
export function itemsOf(body: unknown): unknown[] | undefined {
  const items = body && typeof body === 'object' ? (body as { items?: unknown }).items : undefined;
  return Array.isArray(items) ? items : undefined;
}

/** The `redirect` action's URL among the create answer's `next` steps (http or https only). */
export function redirectOf(body: unknown): string | undefined {
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
