import type { ConnectorPayment, InitiateResult } from '../connector.js';
import { type ProviderAnswer, stringField } from '../http.js';
import { attemptResult, NOTE_ORDER, NOTE_PAYMENT, text } from './razorpay.shapes.js';
import { RAZORPAY_UPI_EXPIRY_MINUTES } from './razorpay.tables.js';

/**
 * UPI through Razorpay's S2S UPI payment (`POST /v1/payments/create/upi`, docs/connectors.md, "UPI
 * through Razorpay"): an attempt on the payment's Razorpay order, made at the merchant's S2S call.
 * Intent answers the provider's `upi://pay` link (Kosh shows it as a button, or renders it as the
 * QR: Razorpay's QR flow is its intent link); collect answers only the payment id, the request
 * being on the customer's phone already.
 */

export type UpiPayment = ConnectorPayment & { upi: NonNullable<ConnectorPayment['upi']> };

/** Kosh's UPI flow → Razorpay's `upi.flow`: a QR is the intent link, drawn by Kosh. */
const RAZORPAY_UPI_FLOWS = { intent: 'intent', qr: 'intent', collect: 'collect' } as const;

/**
 * `upi.expiry_time`: the window Kosh gave the payment (its expires_at from its creation), in whole
 * minutes within Razorpay's bounds. A fresh attempt made later gets the same window: Kosh still
 * fails the payment at its own expires_at, and a later approval is a late success (captured or
 * refunded by Kosh's late window).
 */
export function upiExpiryMinutes(payment: UpiPayment): number {
  const minutes = Math.ceil((payment.upi.expiresAt.getTime() - payment.createdAt.getTime()) / 60_000);
  return Math.min(RAZORPAY_UPI_EXPIRY_MINUTES.max, Math.max(RAZORPAY_UPI_EXPIRY_MINUTES.min, minutes));
}

/**
 * The S2S UPI create. No `ip`, `referer` or `user_agent`: the payment starts at the merchant's
 * server-to-server call, where Kosh has no customer browser to report, and Kosh never sends
 * placeholders (the merchant's server address would be someone else's). `callback_url` is Kosh's
 * callback, where Razorpay may send a browser back after an intent payment on a phone.
 */
export function razorpayUpiRequest(payment: UpiPayment, orderId: string) {
  const flow = RAZORPAY_UPI_FLOWS[payment.upi.flow];
  return {
    amount: payment.amount,
    currency: payment.currency,
    order_id: orderId,
    email: payment.customer.email,
    contact: payment.customer.contact,
    method: 'upi' as const,
    upi: {
      flow,
      ...(flow === 'collect' && payment.upi.vpa ? { vpa: payment.upi.vpa } : {}),
      expiry_time: upiExpiryMinutes(payment),
    },
    callback_url: payment.callbackUrl,
    ...(payment.description ? { description: payment.description } : {}),
    notes: { [NOTE_PAYMENT]: payment.id, [NOTE_ORDER]: payment.orderId },
  };
}
export type RazorpayUpiRequest = ReturnType<typeof razorpayUpiRequest>;

/** The intent answer's `link`, as Razorpay gave it (never changed), when it is a `upi://pay` link. */
export function upiLinkOf(body: unknown): string | undefined {
  const link = text(stringField(body, 'link'));
  if (!link) return undefined;
  try {
    const url = new URL(link);
    return url.protocol === 'upi:' && url.host === 'pay' && url.searchParams.get('pa') ? link : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes a UPI attempt on the order. Not retried: a second create is a second attempt (for collect,
 * a second request on the customer's phone). A lost answer is asked about (`status`), and Kosh's
 * page makes a fresh attempt on the same order; Razorpay captures one payment per order at most.
 */
export async function startUpi(
  /** The client's `createUpiPayment`. */
  create: (request: RazorpayUpiRequest) => Promise<ProviderAnswer>,
  payment: UpiPayment,
  orderId: string,
): Promise<InitiateResult> {
  const request = razorpayUpiRequest(payment, orderId);
  const flow = request.upi.flow;
  // A UPI failure keeps Razorpay's own description as its reason.
  return attemptResult(
    await create(request),
    orderId,
    (body) => {
      const link = flow === 'intent' ? upiLinkOf(body) : null;
      return link === undefined
        ? 'no upi://pay link in the intent answer'
        : { action: 'upi', next: { kind: 'upi', link } };
    },
    true,
  );
}
