import { createHmac, timingSafeEqual } from 'node:crypto';
import type { BrowserReturn, ProviderWebhook, ReturnResult, WebhookResult } from '../connector.js';
import { stringField } from '../http.js';
import { NOTE_PAYMENT, note, razorpayFailure, razorpayPaymentStatus, text } from './razorpay.shapes.js';

/**
 * What Razorpay signs: its webhooks (HMAC-SHA256 hex of the raw body with the webhook secret) and
 * the browser's successful return (HMAC-SHA256 hex of `order_id|payment_id` with the key secret).
 */

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

/**
 * The browser's return from Razorpay to the payment's order (`orderId`, when Kosh knows it): a
 * signed success, or an unsigned error that is a hint at most.
 */
export function parseRazorpayReturn(
  orderId: string | undefined,
  browserReturn: BrowserReturn,
  keySecret: string,
): ReturnResult {
  const fields = { ...browserReturn.query, ...browserReturn.body } as Record<string, unknown>;
  const signature = text(fields.razorpay_signature);
  const paymentId = text(fields.razorpay_payment_id);
  if (signature || paymentId) {
    const verified =
      orderId !== undefined &&
      signature !== undefined &&
      paymentId !== undefined &&
      text(fields.razorpay_order_id) === orderId &&
      equalHex(signature, razorpayPaymentSignature(keySecret, orderId, paymentId));
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
}

/** A Razorpay webhook: its signature checked over the exact bytes sent, its payment in Kosh's words. */
export function parseRazorpayWebhook(webhook: ProviderWebhook, webhookSecret: string): WebhookResult {
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
    note(payment, NOTE_PAYMENT) ?? note(order, NOTE_PAYMENT) ?? text(stringField(order, 'receipt')) ?? null;
  const signature = header(webhook.headers, 'x-razorpay-signature');
  // Signed over the exact bytes Razorpay sent, never over re-serialised JSON.
  if (!signature || !equalHex(signature, hmacHex(webhookSecret, webhook.rawBody))) {
    return { verified: false, paymentId, reason: 'bad signature' };
  }
  const event = stringField(body, 'event') ?? '';
  // A refund's event names Kosh's refund by the receipt Kosh gave it.
  const refundId = event.startsWith('refund.') ? text(stringField(entityOf('refund'), 'receipt')) : undefined;
  if (refundId) {
    const eventId = text(header(webhook.headers, 'x-razorpay-event-id')) ?? null;
    return { verified: true, eventId, paymentId, status: null, refundId };
  }
  const aboutPayment = event.startsWith('payment.') || event === 'order.paid';
  const status = aboutPayment && payment ? razorpayPaymentStatus(payment) : null;
  return {
    verified: true,
    eventId: text(header(webhook.headers, 'x-razorpay-event-id')) ?? null,
    paymentId,
    // A failure may be of an attempt the customer never saw (its create answer was lost, and
    // Razorpay fails an attempt nobody is at after its own timeout): Kosh asks `status`, which
    // knows the attempt Kosh sent the customer to. What took the money is taken as it is.
    status: status?.outcome === 'failed' ? null : status,
  };
}
