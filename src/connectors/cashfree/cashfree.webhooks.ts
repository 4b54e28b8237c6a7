import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ProviderWebhook, WebhookResult } from '../connector.js';
import { stringField } from '../http.js';
import { cashfreeStatus, field, idField } from './cashfree.shapes.js';

function headerValue(
  headers: Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A Cashfree webhook: its signature checked over the bytes received, its timestamp within the
 * tolerance (an old one is a replay of a signed body), and its payment attempt in Kosh's words.
 */
export function parseCashfreeWebhook(
  webhook: ProviderWebhook,
  options: { clientSecret: string; now: () => Date; toleranceMs: number },
): WebhookResult {
  let body: unknown;
  try {
    body = JSON.parse(webhook.rawBody.toString('utf8'));
  } catch {
    return { verified: false, paymentId: null, reason: 'not JSON' };
  }
  const data = field(body, 'data');
  const paymentId = stringField(data, 'order', 'order_id') ?? stringField(data, 'refund', 'order_id') ?? null;
  const signature = headerValue(webhook.headers, 'x-webhook-signature');
  const timestamp = headerValue(webhook.headers, 'x-webhook-timestamp');
  if (!signature || !timestamp) return { verified: false, paymentId, reason: 'unsigned' };
  // Signed: base64(HMAC-SHA256(timestamp + raw body, client secret)), over the bytes received.
  const expected = createHmac('sha256', options.clientSecret)
    .update(timestamp, 'utf8')
    .update(webhook.rawBody)
    .digest('base64');
  const given = Buffer.from(signature, 'utf8');
  const wanted = Buffer.from(expected, 'utf8');
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
    return { verified: false, paymentId, reason: 'bad signature' };
  }
  // Cashfree's timestamp is in milliseconds; an old one is a replay of a signed body.
  if (
    !/^\d{1,16}$/.test(timestamp) ||
    Math.abs(options.now().getTime() - Number(timestamp)) > options.toleranceMs
  ) {
    return { verified: false, paymentId, reason: 'timestamp outside the tolerance' };
  }
  const attempt = field(data, 'payment');
  const type = stringField(body, 'type');
  const cfPaymentId = idField(attempt, 'cf_payment_id');
  const eventId =
    headerValue(webhook.headers, 'x-idempotency-key') ??
    (type && cfPaymentId ? `${type}:${cfPaymentId}` : null);
  // A refund's webhook names Kosh's refund by the refund_id Kosh gave it.
  const refundId = type?.startsWith('REFUND') ? stringField(data, 'refund', 'refund_id') : undefined;
  if (refundId) return { verified: true, eventId, paymentId, status: null, refundId };
  if (!attempt || typeof attempt !== 'object') return { verified: true, eventId, paymentId, status: null };
  const orderId = stringField(attempt, 'order_id');
  if (orderId !== undefined && orderId !== paymentId) {
    return { verified: false, paymentId, reason: 'data.payment is about another order' };
  }
  const status = cashfreeStatus(attempt, field(data, 'error_details') ?? field(attempt, 'error_details'));
  // An attempt that did not take the money may not be the one the customer is at: one whose start
  // answer Kosh never recorded (rule 7), after which Kosh's page made another on the same order.
  // Only `status`, which reads every attempt on the order, can say what the payment is; Kosh asks
  // it. What took the money is taken as it is.
  if (status.outcome !== 'captured') return { verified: true, eventId, paymentId, status: null };
  return { verified: true, eventId, paymentId, status };
}
