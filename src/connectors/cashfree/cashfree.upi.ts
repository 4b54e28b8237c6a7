import type { ConnectorPayment, NextStep } from '../connector.js';
import { stringField } from '../http.js';
import { isVpa, rupees } from '../upi.js';
import { CASHFREE_UPI_COLLECT_MINUTES } from './cashfree.tables.js';

/**
 * UPI through Cashfree's Order Pay (`POST /orders/sessions`, API version 2023-08-01):
 *
 * - intent and QR: `payment_method.upi.channel = "link"`; the answer's `data.payload.default` is the
 *   `upi://pay?…` link any UPI app opens. Kosh shows it (intent) or renders its own QR code of it
 *   (QR), so the image always decodes to exactly the link Kosh recorded. Cashfree's `qrcode`
 *   channel answers a PNG only (`data.payload.qrcode`), whose text Kosh would have to decode from
 *   pixels to keep that promise (docs/connectors.md, "UPI through Cashfree");
 * - collect: `channel = "collect"` with the customer's VPA as `upi_id` and `upi_expiry_minutes`
 *   (Cashfree takes 5 to 15); the request goes to the customer's app, the answer has no link.
 */

/** The `payment_method` of a UPI payment's Order Pay request. */
export function cashfreeUpiMethod(
  upi: NonNullable<ConnectorPayment['upi']>,
  now: Date,
): Record<string, unknown> | undefined {
  if (upi.flow !== 'collect') return { upi: { channel: 'link' } };
  if (!upi.vpa || !isVpa(upi.vpa)) return undefined;
  const left = Math.ceil((upi.expiresAt.getTime() - now.getTime()) / 60_000);
  const { min, max } = CASHFREE_UPI_COLLECT_MINUTES;
  return {
    upi: { channel: 'collect', upi_id: upi.vpa, upi_expiry_minutes: Math.min(max, Math.max(min, left)) },
  };
}

/**
 * A UPI link Kosh can hand to a UPI app: `upi://pay?` with a payee address, and (when it names
 * one) this payment's amount in rupees. Anything else is not one, so the answer is unknown.
 */
function checkUpiLink(link: string, amount: number): string | undefined {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return 'data.payload.default is not a URL';
  }
  if (url.protocol !== 'upi:' || !link.toLowerCase().startsWith('upi://pay?')) {
    return 'data.payload.default is not a upi://pay link';
  }
  const payee = url.searchParams.get('pa');
  if (!payee || !isVpa(payee)) return 'the upi://pay link has no payee address';
  const am = url.searchParams.get('am');
  if (am !== null && Number(am) !== Number(rupees(amount))) return 'the upi://pay link is for another amount';
  return undefined;
}

/** Cashfree's answer to a UPI Order Pay → Kosh's `upi` step; a string says why it cannot be read. */
export function upiStepOf(
  body: unknown,
  payment: Pick<ConnectorPayment, 'amount' | 'upi'>,
): { next: NextStep; action: 'upi' } | string {
  const flow = payment.upi?.flow;
  const method = stringField(body, 'payment_method');
  if (method !== undefined && method !== 'upi') return `payment_method ${method}`;
  const channel = stringField(body, 'channel');
  const wanted = flow === 'collect' ? 'collect' : 'link';
  if (channel !== undefined && channel !== wanted) return `channel ${channel}`;
  if (flow === 'collect') return { next: { kind: 'upi', link: null }, action: 'upi' };
  const link = stringField(body, 'data', 'payload', 'default');
  if (!link) return 'no data.payload.default';
  const wrong = checkUpiLink(link, payment.amount);
  if (wrong) return wrong;
  return { next: { kind: 'upi', link }, action: 'upi' };
}

/** The VPA that paid, from an attempt's `payment_method.upi.upi_id`; null when there is none. */
export function payerVpaOf(attempt: unknown): string | null {
  const vpa = stringField(attempt, 'payment_method', 'upi', 'upi_id');
  return vpa && isVpa(vpa) ? vpa : null;
}

/** Whether an attempt (from the list of an order's payments, or a webhook) is a UPI one. */
export function isUpiAttempt(attempt: unknown): boolean {
  if (stringField(attempt, 'payment_group')?.startsWith('upi')) return true;
  const method =
    attempt && typeof attempt === 'object' ? (attempt as Record<string, unknown>).payment_method : undefined;
  return !!method && typeof method === 'object' && 'upi' in method;
}
