import type { FakeRazorpay, FakeRazorpayPayment } from './razorpay-fake.js';
import {
  type Answer,
  error,
  extraField,
  isObject,
  newId,
  notesOf,
  parseBody,
} from './razorpay-fake-common.js';
import { recordAttempt } from './razorpay-fake-model.js';

/**
 * The local Razorpay's S2S UPI payment (`POST /v1/payments/create/upi`), shaped after Razorpay's
 * public S2S UPI intent and collect pages: an attempt on an order, answered with
 * `{ razorpay_payment_id, link }` (intent: a `upi://pay` link whose payee is the fake's VPA) or
 * `{ razorpay_payment_id }` (collect: the request went to the customer's VPA). The attempt stays
 * `created` until the simulated customer approves or declines it in a UPI app (`upiCustomer`).
 */

/** A UPI attempt's own facts. */
export interface FakeRazorpayUpi {
  flow: 'intent' | 'collect';
  /** The VPA a collect request went to (null for intent). */
  requestedVpa: string | null;
  expiryMinutes: number;
  link: string | null;
}

const UPI_PAY_FIELDS = new Set([
  'amount',
  'currency',
  'order_id',
  'email',
  'contact',
  'method',
  'upi',
  'callback_url',
  'ip',
  'referer',
  'user_agent',
  'description',
  'notes',
  'customer_id',
]);
const UPI_FIELDS = new Set(['flow', 'vpa', 'expiry_time']);
/** Razorpay's bounds for `upi.expiry_time`, in minutes. */
const EXPIRY = { min: 5, max: 5760, default: 5 } as const;
const VPA = /^[A-Za-z0-9._-]{2,256}@[A-Za-z][A-Za-z0-9.]{1,64}$/;

/** The `upi` object of a create, or Razorpay's refusal of it. */
function readUpi(value: unknown): Omit<FakeRazorpayUpi, 'link'> | Answer {
  if (!isObject(value)) return error(400, 'The upi field is required.', { field: 'upi' });
  const extra = extraField(value, UPI_FIELDS);
  if (extra) return error(400, `upi.${extra} is/are not required and should not be sent`, { field: extra });
  const flow = value.flow;
  if (flow !== 'intent' && flow !== 'collect') {
    return error(400, 'The selected upi.flow is invalid.', { field: 'flow' });
  }
  const expiry = value.expiry_time ?? EXPIRY.default;
  if (typeof expiry !== 'number' || !Number.isInteger(expiry) || expiry < EXPIRY.min || expiry > EXPIRY.max) {
    return error(400, `upi.expiry_time must be between ${EXPIRY.min} and ${EXPIRY.max} minutes.`, {
      field: 'expiry_time',
    });
  }
  if (flow === 'intent') {
    if (value.vpa !== undefined) return error(400, 'upi.vpa is not required for intent', { field: 'vpa' });
    return { flow, requestedVpa: null, expiryMinutes: expiry };
  }
  if (typeof value.vpa !== 'string' || !VPA.test(value.vpa)) {
    return error(400, 'Invalid VPA. Please enter a valid Virtual Payment Address', { field: 'vpa' });
  }
  return { flow, requestedVpa: value.vpa, expiryMinutes: expiry };
}

/** The fake's intent link: Razorpay's VPA for the merchant as payee, the attempt as reference. */
function intentLink(fake: FakeRazorpay, payment: { id: string; amount: number }): string {
  const query = new URLSearchParams({
    pa: fake.upiPayeeVpa,
    pn: 'Fake Razorpay Merchant',
    tr: payment.id.slice(4),
    tn: `Payment ${payment.id}`,
    am: (payment.amount / 100).toFixed(2),
    cu: 'INR',
    mc: '5411',
  });
  return `upi://pay?${query.toString().replace(/\+/g, '%20')}`;
}

/** `POST /v1/payments/create/upi`. */
export function createUpiPayment(fake: FakeRazorpay, body: string): Answer {
  const parsed = parseBody(body);
  if ('refused' in parsed) return parsed.refused;
  const input = parsed.input;
  fake.lastUpiRequest = input;
  const extra = extraField(input, UPI_PAY_FIELDS);
  if (extra) return error(400, `${extra} is/are not required and should not be sent`, { field: extra });
  for (const field of ['currency', 'order_id', 'email', 'contact', 'method']) {
    if (typeof input[field] !== 'string' || input[field] === '') {
      return error(400, `The ${field} field is required.`, { field });
    }
  }
  if (input.method !== 'upi') return error(400, 'Invalid payment method given', { field: 'method' });
  const checked = fake.orderForAttempt(input);
  if ('status' in checked) return checked;
  const { order, amount } = checked;
  const upi = readUpi(input.upi);
  if ('status' in upi) return upi;
  const notes = notesOf(input.notes);
  if (!notes) return error(400, 'The notes must be at most 15 short string values.', { field: 'notes' });
  const id = newId('pay');
  const link = upi.flow === 'intent' ? intentLink(fake, { id, amount }) : null;
  const payment = recordAttempt(fake, order, input, {
    id,
    amount,
    method: 'upi',
    bank: null,
    wallet: null,
    upi: { ...upi, link },
    vpa: upi.requestedVpa,
    notes,
    callbackUrl: typeof input.callback_url === 'string' ? input.callback_url : '',
  });
  return {
    status: 200,
    body: link === null ? { razorpay_payment_id: payment.id } : { razorpay_payment_id: payment.id, link },
  };
}

/** The UPI attempt waiting for its customer for a Kosh payment (its order's receipt), the latest first. */
export function openUpiAttempt(fake: FakeRazorpay, paymentId: string): FakeRazorpayPayment | undefined {
  return fake
    .ordersFor(paymentId)
    .flatMap((order) => fake.paymentsFor(order.id))
    .filter((payment) => payment.method === 'upi' && payment.status === 'created')
    .at(-1);
}

/**
 * The simulated customer approves or declines the attempt in a UPI app; Razorpay's webhook goes
 * per the fake's timing: `before` and `instead` now (before any later question), `after` once the
 * next question Kosh asks has been answered, `none` never.
 */
export async function upiCustomer(
  fake: FakeRazorpay,
  paymentId: string,
  action: 'approve' | 'decline',
): Promise<void> {
  const payment = openUpiAttempt(fake, paymentId);
  if (!payment) throw new Error(`no UPI attempt awaiting the customer for ${paymentId}`);
  fake.decide(payment, action === 'approve' ? 'success' : 'upi_decline');
  if (fake.webhookTiming === 'before' || fake.webhookTiming === 'instead') await fake.sendWebhook(payment);
  else if (fake.webhookTiming === 'after') fake.sendAfterNextQuestion(payment);
}
