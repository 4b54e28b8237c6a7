import type { ConnectorRefund, PaymentOutcome, RefundResult } from '../connector.js';

/**
 * What the Razorpay connector knows of Razorpay, as data (docs/connectors.md, "Tables, not
 * branches"). Every row comes from Razorpay's public API reference; a value that is not here is
 * unknown to Kosh, never guessed.
 */

/**
 * Kosh's bank codes Razorpay takes for `method: netbanking`. Kosh's codes are Razorpay's own
 * (the IFSC prefix, `_R` / `_C` for retail and corporate log-ins), so the code is sent as it is.
 */
export const RAZORPAY_BANKS: readonly string[] = [
  'ICIC',
  'HDFC',
  'SBIN',
  'UTIB',
  'KKBK',
  'PUNB_R',
  'PUNB_C',
  'BARB_R',
  'BARB_C',
  'YESB',
  'IDFB',
  'INDB',
  'CNRB',
  'UBIN',
  'FDRL',
  'IOBA',
  'BKID',
  'MAHB',
  'RATN',
  'AUBL',
];

/**
 * Kosh wallet code → Razorpay wallet code (`method: wallet`), only the wallets Razorpay lists.
 * Freecharge is not among them, so Kosh does not offer it through Razorpay.
 */
export const RAZORPAY_WALLETS: Readonly<Record<string, string>> = {
  airtelmoney: 'airtelmoney',
  payzapp: 'payzapp',
  amazonpay: 'amazonpay',
  mobikwik: 'mobikwik',
  jiomoney: 'jiomoney',
  olamoney: 'olamoney',
  phonepe: 'phonepe',
};

/**
 * A Razorpay payment's `status` → Kosh's outcome.
 * - `created`: the payment went to the bank and the bank has not answered (Razorpay shows a
 *   payment without the bank's answer as created, and fails it only after its own timeout).
 * - `authorized`: the bank took the money; Razorpay captures it by itself (the order asks for
 *   automatic capture), so Kosh waits for `captured` instead of calling it done.
 * - `refunded`: a captured payment later refunded; the payment itself was captured. (An
 *   authorisation Razorpay returned without ever capturing it is told apart by the connector.)
 * Anything else is `unknown` by its absence.
 */
export const RAZORPAY_PAYMENT_STATUSES: Readonly<Record<string, PaymentOutcome>> = {
  created: 'pending',
  authorized: 'pending',
  captured: 'captured',
  failed: 'failed',
  refunded: 'captured',
};

export interface KoshFailure {
  code: string;
  reason: string;
}

const DECLINED: KoshFailure = {
  code: 'payment_declined',
  reason: 'The bank or wallet declined the payment.',
};
const BANK_DOWN: KoshFailure = {
  code: 'bank_unavailable',
  reason: 'The bank or wallet had a technical problem; the customer can try again or use another.',
};
const NOT_ENABLED: KoshFailure = {
  code: 'method_unavailable',
  reason: 'This bank or wallet is not enabled for the merchant at Razorpay.',
};
const LIMIT: KoshFailure = {
  code: 'limit_exceeded',
  reason: "The payment is over the customer's transaction limit.",
};

/**
 * Razorpay's `error_reason` (first) or `error_code` (when the reason is not known) → Kosh's error
 * code and reason. A failure that matches neither is `RAZORPAY_DEFAULT_ERROR`.
 */
export const RAZORPAY_ERRORS: Readonly<Record<string, KoshFailure>> = {
  // error_reason values (Razorpay's "Error Reasons" list)
  payment_cancelled: { code: 'payment_cancelled', reason: 'The customer cancelled the payment.' },
  payment_failed: DECLINED,
  authentication_failed: {
    code: 'authentication_failed',
    reason: 'The customer did not complete the authentication at the bank or wallet.',
  },
  payment_timed_out: { code: 'payment_timed_out', reason: 'The bank or wallet gave no answer in time.' },
  insufficient_funds: {
    code: 'insufficient_funds',
    reason: "The customer's account does not have enough money.",
  },
  payment_risk_check_failed: {
    code: 'payment_declined',
    reason: 'The payment was declined by a risk check.',
  },
  debit_declined: DECLINED,
  debit_instrument_blocked: DECLINED,
  debit_instrument_inactive: DECLINED,
  user_not_registered_for_netbanking: {
    code: 'payment_declined',
    reason: "The customer's account is not registered for net banking.",
  },
  transaction_limit_exceeded: LIMIT,
  transaction_daily_limit_exceeded: LIMIT,
  bank_technical_error: BANK_DOWN,
  bank_not_available: BANK_DOWN,
  bank_cutoff_in_progress: BANK_DOWN,
  gateway_technical_error: BANK_DOWN,
  invalid_response_from_gateway: BANK_DOWN,
  server_error: BANK_DOWN,
  bank_not_enabled: NOT_ENABLED,
  payment_method_not_enabled: NOT_ENABLED,
  amount_less_than_minimum_amount: {
    code: 'amount_too_small',
    reason: 'The amount is below the minimum this bank or wallet takes.',
  },
  input_validation_failed: {
    code: 'invalid_request',
    reason: 'Razorpay refused the payment request as invalid.',
  },
  order_already_paid: {
    code: 'order_already_paid',
    reason: 'Razorpay already holds a captured payment for this order.',
  },
  // error_code values, for a failure whose reason is missing or not listed above
  BAD_REQUEST_ERROR: DECLINED,
  GATEWAY_ERROR: BANK_DOWN,
  SERVER_ERROR: BANK_DOWN,
};

export const RAZORPAY_DEFAULT_ERROR: KoshFailure = {
  code: 'payment_declined',
  reason: 'Razorpay declined the payment.',
};

/**
 * An authorisation Razorpay gave back without capturing it (it came after the capture window):
 * the payment reads `refunded` with `captured: false`, and no money was taken.
 */
export const RAZORPAY_UNCAPTURED_REFUND: KoshFailure = {
  code: 'payment_timed_out',
  reason: 'The bank authorised the payment too late to be captured; Razorpay returned the money.',
};

/**
 * Which of an order's payment attempts speaks for it, best first: the one that took the money,
 * then one the bank authorised. When Kosh recorded none of the order's attempts (their create
 * answers were lost, so the customer never saw them), only these count: `created` is an attempt
 * nobody is at, and `failed` one Razorpay gave up on without the customer.
 */
export const RAZORPAY_ATTEMPT_PREFERENCE: readonly string[] = ['captured', 'refunded', 'authorized'];

/**
 * Refusals that do not mean "this payment failed". Each Razorpay order belongs to one Kosh payment,
 * so a refusal because the order is already paid means an earlier attempt of this very payment
 * took the money: Kosh must ask, not fail it.
 */
export const RAZORPAY_REFUSALS_TO_ASK_ABOUT: readonly string[] = ['order_already_paid'];

/** A Razorpay refund's `status` → Kosh's refund outcome; anything else is `unknown`. */
export const RAZORPAY_REFUND_STATUSES: Readonly<Record<string, RefundResult['outcome']>> = {
  pending: 'pending',
  processed: 'processed',
  failed: 'failed',
};

/** Kosh's refund speed → Razorpay's `speed`: `optimum` is instant where Razorpay can, else normal. */
export const RAZORPAY_REFUND_SPEEDS: Readonly<Record<ConnectorRefund['speed'], string>> = {
  normal: 'normal',
  instant: 'optimum',
};

/**
 * The UPI flows the connector takes (`intent` covers intent and QR: Razorpay's intent link is the
 * QR Kosh renders), both through Razorpay's S2S UPI payment (`POST /v1/payments/create/upi`).
 */
export const RAZORPAY_UPI = { intent: true, collect: true } as const;

/**
 * A UPI payment's `status` → Kosh's outcome. Unlike net banking, a UPI payment is `created` from
 * the moment Razorpay answers the create (the link exists, the collect request is on the phone)
 * until the customer approves it in a UPI app: the customer has done nothing yet, so the payment
 * stays open (`not_started`) until approved, declined, or Kosh's own `expires_at`.
 * - `authorized`: approved; Razorpay captures it by itself (the order asks for automatic capture),
 *   so Kosh waits for `captured`, as for net banking.
 * - `refunded`: captured, then refunded (an uncaptured return is told apart by the connector).
 */
export const RAZORPAY_UPI_PAYMENT_STATUSES: Readonly<Record<string, PaymentOutcome>> = {
  created: 'not_started',
  authorized: 'pending',
  captured: 'captured',
  failed: 'failed',
  refunded: 'captured',
};

/** Razorpay's documented bounds for `upi.expiry_time`, in minutes. */
export const RAZORPAY_UPI_EXPIRY_MINUTES = { min: 5, max: 5760 } as const;
