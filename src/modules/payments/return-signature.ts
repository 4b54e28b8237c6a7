import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signature on the browser's return POST: HMAC-SHA256, hex, over `payment_id|order_id|status`,
 * keyed with the account's return signing secret (GET /v1/payments/return-signing-secret/).
 * It proves the values came from Kosh; the payment must still be fetched to confirm the outcome.
 */
export function signReturn(secret: string, paymentId: string, orderId: string, status: string): string {
  return createHmac('sha256', secret).update(`${paymentId}|${orderId}|${status}`).digest('hex');
}

export function verifyReturn(
  secret: string,
  fields: { payment_id: string; order_id: string; status: string; signature: string },
): boolean {
  const expected = Buffer.from(signReturn(secret, fields.payment_id, fields.order_id, fields.status), 'hex');
  const given = Buffer.from(fields.signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
