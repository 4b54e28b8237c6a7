import { escapeHtml } from '../../../src/modules/payments/html.js';
import type { ProviderFault } from '../local-server.js';
import type { FakeRazorpayUpi } from './razorpay-fake-upi.js';

/**
 * The local Razorpay's records, the codes and fields it takes, and the JSON views and pages it
 * answers with, apart from its server (razorpay-fake.ts) and its API handlers (razorpay-fake-api.ts).
 */

export type RazorpayFault = ProviderFault;
export type RazorpayEndpoint = 'order' | 'pay' | 'status' | 'refund' | 'refundStatus';
export type RazorpayWebhookTiming = 'after' | 'before' | 'instead' | 'none';

export interface FakeRazorpayOrder {
  id: string;
  amount: number;
  currency: string;
  receipt: string | null;
  notes: Record<string, string>;
  status: 'created' | 'attempted' | 'paid';
  attempts: number;
  /** The `payment` capture settings it was created with. */
  capture: unknown;
  createdAt: number;
}

export interface FakeRazorpayPayment {
  id: string;
  orderId: string;
  amount: number;
  currency: string;
  method: 'netbanking' | 'wallet' | 'upi';
  bank: string | null;
  wallet: string | null;
  /** A UPI attempt's flow and link (null for net banking and wallets). */
  upi: FakeRazorpayUpi | null;
  /** The VPA of a UPI attempt: the collect request's, or the payer's once approved. */
  vpa: string | null;
  email: string;
  contact: string;
  description: string | null;
  notes: Record<string, string>;
  callbackUrl: string;
  status: 'created' | 'authorized' | 'captured' | 'failed' | 'refunded';
  captured: boolean;
  error: { code: string; description: string; source: string; step: string; reason: string } | null;
  /** The bank's reference: its transaction id (net banking, wallets) or the UPI RRN. */
  bankTransactionId: string | null;
  createdAt: number;
}

export interface FakeRazorpayRefund {
  id: string;
  paymentId: string;
  amount: number;
  currency: string;
  receipt: string | null;
  notes: Record<string, string>;
  speedRequested: string;
  status: 'pending' | 'processed' | 'failed';
  createdAt: number;
}

/** The customer's browser as the payment create reported it. */
export interface FakeRazorpayBrowser {
  ip: string;
  user_agent: string;
  referer: string | null;
}

export interface SentRazorpayWebhook {
  event: string;
  eventId: string;
  body: string;
  status: number | undefined;
}

/** Razorpay's net banking codes (its methods list, with the corporate log-ins it also takes). */
export const BANKS = new Set([
  'AUBL',
  'UTIB',
  'BARB_R',
  'BARB_C',
  'BKID',
  'MAHB',
  'CNRB',
  'CBIN',
  'FDRL',
  'HDFC',
  'ICIC',
  'IBKL',
  'IDFB',
  'IDIB',
  'IOBA',
  'INDB',
  'KKBK',
  'PUNB_R',
  'PUNB_C',
  'RATN',
  'SBIN',
  'UBIN',
  'YESB',
]);
/** Razorpay's wallet codes. */
export const WALLETS = new Set([
  'airtelmoney',
  'amazonpay',
  'jiomoney',
  'mobikwik',
  'olamoney',
  'payzapp',
  'paypal',
  'phonepe',
]);

export const ORDER_FIELDS = new Set(['amount', 'currency', 'receipt', 'notes', 'partial_payment', 'payment']);
export const PAY_FIELDS = new Set([
  'amount',
  'currency',
  'order_id',
  'email',
  'contact',
  'method',
  'bank',
  'wallet',
  'callback_url',
  'ip',
  'referer',
  'user_agent',
  'description',
  'notes',
]);
export const REFUND_FIELDS = new Set(['amount', 'speed', 'receipt', 'notes']);

/** The amount refunded of a payment so far (refunds not failed). */
export function refundedAmount(
  refunds: ReadonlyMap<string, FakeRazorpayRefund>,
  payment: FakeRazorpayPayment,
): number {
  return [...refunds.values()]
    .filter((refund) => refund.paymentId === payment.id && refund.status !== 'failed')
    .reduce((sum, refund) => sum + refund.amount, 0);
}

/** A captured payment's status once its refunds count: `refunded` when they cover it. */
export function markRefunded(
  refunds: ReadonlyMap<string, FakeRazorpayRefund>,
  payment: FakeRazorpayPayment,
): void {
  if (!payment.captured) return;
  payment.status = refundedAmount(refunds, payment) >= payment.amount ? 'refunded' : 'captured';
}

/**
 * A payment attempt recorded, whatever its method: the payment kept with the customer's details
 * from the request, the order counted as attempted.
 */
export function recordAttempt(
  book: { payments: Map<string, FakeRazorpayPayment> },
  order: FakeRazorpayOrder,
  input: Record<string, unknown>,
  attempt: Pick<
    FakeRazorpayPayment,
    'id' | 'amount' | 'method' | 'bank' | 'wallet' | 'upi' | 'vpa' | 'notes' | 'callbackUrl'
  >,
): FakeRazorpayPayment {
  const payment: FakeRazorpayPayment = {
    ...attempt,
    orderId: order.id,
    currency: order.currency,
    email: input.email as string,
    contact: input.contact as string,
    description: typeof input.description === 'string' ? input.description : null,
    status: 'created',
    captured: false,
    error: null,
    bankTransactionId: null,
    createdAt: Math.floor(Date.now() / 1000),
  };
  book.payments.set(payment.id, payment);
  order.attempts += 1;
  order.status = 'attempted';
  return payment;
}

/** An order as Razorpay answers it. */
export function orderView(order: FakeRazorpayOrder) {
  const paid = order.status === 'paid' ? order.amount : 0;
  return {
    id: order.id,
    entity: 'order',
    amount: order.amount,
    amount_paid: paid,
    amount_due: order.amount - paid,
    currency: order.currency,
    receipt: order.receipt,
    offer_id: null,
    status: order.status,
    attempts: order.attempts,
    // Razorpay answers an empty notes object as a list.
    notes: Object.keys(order.notes).length ? order.notes : [],
    created_at: order.createdAt,
  };
}

/** A payment as Razorpay answers it, with what its refunds took. */
export function paymentView(payment: FakeRazorpayPayment, refunds: ReadonlyMap<string, FakeRazorpayRefund>) {
  const refunded = refundedAmount(refunds, payment);
  const fee = payment.captured ? Math.round(payment.amount * 0.02) : null;
  return {
    id: payment.id,
    entity: 'payment',
    amount: payment.amount,
    currency: payment.currency,
    status: payment.status,
    order_id: payment.orderId,
    invoice_id: null,
    international: false,
    method: payment.method,
    amount_refunded: refunded,
    refund_status: refunded === 0 ? null : refunded >= payment.amount ? 'full' : 'partial',
    captured: payment.captured,
    description: payment.description,
    card_id: null,
    bank: payment.bank,
    wallet: payment.wallet,
    vpa: payment.vpa,
    email: payment.email,
    contact: payment.contact,
    notes: Object.keys(payment.notes).length ? payment.notes : [],
    // The fee includes the tax (18% GST on it).
    fee,
    tax: fee === null ? null : Math.round((fee * 18) / 118),
    error_code: payment.error?.code ?? null,
    error_description: payment.error?.description ?? null,
    error_source: payment.error?.source ?? null,
    error_step: payment.error?.step ?? null,
    error_reason: payment.error?.reason ?? null,
    acquirer_data:
      payment.method === 'upi'
        ? { rrn: payment.bankTransactionId }
        : payment.method === 'netbanking'
          ? { bank_transaction_id: payment.bankTransactionId }
          : { transaction_id: payment.bankTransactionId },
    ...(payment.upi
      ? { upi: { payer_account_type: 'bank_account', vpa: payment.vpa, flow: payment.upi.flow } }
      : {}),
    created_at: payment.createdAt,
  };
}

/** A refund as Razorpay answers it. */
export function refundView(refund: FakeRazorpayRefund) {
  return {
    id: refund.id,
    entity: 'refund',
    amount: refund.amount,
    currency: refund.currency,
    payment_id: refund.paymentId,
    notes: Object.keys(refund.notes).length ? refund.notes : [],
    receipt: refund.receipt,
    acquirer_data: { arn: refund.status === 'processed' ? `ARN${refund.id.slice(5)}` : null },
    created_at: refund.createdAt,
    batch_id: null,
    status: refund.status,
    speed_processed:
      refund.speedRequested === 'optimum' && refund.status === 'processed' ? 'instant' : 'normal',
    speed_requested: refund.speedRequested,
  };
}

/** The bank (or wallet) page: the customer's decision. */
export function bankPage(payment: FakeRazorpayPayment): string {
  const instrument = payment.bank ?? payment.wallet ?? '';
  return `<!DOCTYPE html><html><head><title>Razorpay (fake) bank</title></head><body>
<h1>${escapeHtml(instrument)}</h1><p id="amount">${payment.amount} ${escapeHtml(payment.currency)}</p>
<form method="POST" action="/bank/${payment.id}/decide">
<button type="submit" name="choice" value="success">Success</button>
<button type="submit" name="choice" value="failure">Failure</button>
<button type="submit" name="choice" value="cancel">Cancel</button>
</form></body></html>`;
}

/** Sends the browser back to the merchant's server by an auto-submitting POST. */
export function returnPage(payment: FakeRazorpayPayment, fields: Record<string, string>): string {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  return `<!DOCTYPE html><html><body><form id="back" method="POST" action="${escapeHtml(payment.callbackUrl)}">${inputs}</form>
<script>document.getElementById('back').submit();</script></body></html>`;
}
