import type { PaymentOutcome, RefundResult } from '../connector.js';

/**
 * Cashfree's words and Kosh's, as data (docs/connectors.md, "Tables, not branches"). Every row is
 * one Cashfree documents for the pinned API version; a value that is not here is not guessed: an
 * unknown status is `unknown`, a Kosh code without a row is not offered through Cashfree.
 */

/** The API version every request pins (`x-api-version`): the shapes below are this version's. */
export const CASHFREE_API_VERSION = '2023-08-01';

/**
 * Kosh bank code → Cashfree `netbanking_bank_code` (its retail net banking, unless the Kosh code
 * names the corporate one), from Cashfree's published list of net banking codes.
 */
export const CASHFREE_BANKS: Record<string, number> = {
  ICIC: 3022,
  HDFC: 3021,
  SBIN: 3044,
  UTIB: 3003,
  KKBK: 3032,
  PUNB_R: 3038,
  PUNB_C: 3065,
  BARB_R: 3005,
  BARB_C: 3060,
  YESB: 3058,
  IDFB: 3024,
  INDB: 3028,
  CNRB: 3009,
  UBIN: 3055,
  FDRL: 3020,
  IOBA: 3027,
  BKID: 3006,
  MAHB: 3007,
  RATN: 3039,
  AUBL: 3087,
};

/**
 * Kosh wallet code → Cashfree `app.provider`. Cashfree documents no provider for PayZapp, so
 * `payzapp` is not offered through it.
 */
export const CASHFREE_WALLETS: Record<string, string> = {
  phonepe: 'phonepe',
  amazonpay: 'amazon',
  airtelmoney: 'airtel',
  freecharge: 'freecharge',
  mobikwik: 'mobikwik',
  jiomoney: 'jio',
  olamoney: 'ola',
};

/**
 * A payment attempt's `payment_status` → Kosh's outcome. Anything else Cashfree may add later is
 * `unknown` by its absence here (Kosh asks again), never a failure.
 */
export const CASHFREE_PAYMENT_STATUSES: Record<string, PaymentOutcome> = {
  SUCCESS: 'captured',
  FAILED: 'failed',
  USER_DROPPED: 'failed',
  CANCELLED: 'failed',
  VOID: 'failed',
  PENDING: 'pending',
  NOT_ATTEMPTED: 'not_started',
};

/** A refund's `refund_status` → Kosh's refund outcome; anything else is `unknown`. */
export const CASHFREE_REFUND_STATUSES: Record<string, RefundResult['outcome']> = {
  SUCCESS: 'processed',
  PENDING: 'pending',
  ONHOLD: 'pending',
  CANCELLED: 'failed',
  FAILED: 'failed',
};

export interface KoshReason {
  code: string;
  reason: string;
}

/** What a decline Kosh cannot name more precisely is called. */
export const CASHFREE_DEFAULT_DECLINE: KoshReason = {
  code: 'payment_declined',
  reason: 'The bank or wallet declined the payment.',
};

/**
 * Why Cashfree refused or a payment failed, in Kosh's words: keyed by a failed attempt's
 * `error_details.error_code` or `error_details.error_reason`, and by the `code` of an API refusal
 * (a 4xx `{ message, code, type }`). A value without a row is CASHFREE_DEFAULT_DECLINE.
 */
export const CASHFREE_ERRORS: Record<string, KoshReason> = {
  // A failed attempt's error_details.
  TRANSACTION_DECLINED: { code: 'payment_declined', reason: 'The bank declined the payment.' },
  bank_rejected: { code: 'payment_declined', reason: 'The bank declined the payment.' },
  // API refusals when the order or its payment is started.
  payment_method_unsupported: {
    code: 'bank_unavailable',
    reason: 'The provider does not take payments from this bank or wallet for this account.',
  },
  payment_gateway_unsupported: {
    code: 'bank_unavailable',
    reason: 'The provider does not take payments from this bank or wallet for this account.',
  },
  order_amount_invalid: { code: 'amount_not_accepted', reason: 'The provider does not accept this amount.' },
  order_inactive: {
    code: 'payment_expired',
    reason: 'The provider no longer takes payments for this order.',
  },
  customer_email_invalid: {
    code: 'customer_details_invalid',
    reason: "The provider refused the customer's email address.",
  },
};

/**
 * A failed attempt that says no more than its status (a customer who left the bank's page, a
 * voided or cancelled attempt): the status names the reason.
 */
export const CASHFREE_STATUS_ERRORS: Record<string, KoshReason> = {
  USER_DROPPED: { code: 'payment_cancelled', reason: 'The customer left the payment at the bank or wallet.' },
  CANCELLED: { code: 'payment_cancelled', reason: 'The payment was cancelled.' },
  VOID: { code: 'payment_cancelled', reason: 'The payment was voided.' },
};

/** An API refusal of the merchant's credentials (HTTP 401, `authentication_error`). */
export const CASHFREE_AUTHENTICATION_ERROR: KoshReason = {
  code: 'provider_authentication_failed',
  reason: "The payment provider refused the merchant's credentials.",
};

/** A refund the provider refused or could not pay out. */
export const CASHFREE_REFUND_DECLINE: KoshReason = {
  code: 'refund_declined',
  reason: 'The provider refused the refund.',
};

/** The UPI flows the connector takes (`intent` covers intent and QR). */
export const CASHFREE_UPI = { intent: true, collect: true } as const;

/** The `upi_expiry_minutes` Cashfree documents for a collect request: 5 to 15. */
export const CASHFREE_UPI_COLLECT_MINUTES = { min: 5, max: 15 } as const;

/**
 * Why a UPI attempt failed, in Kosh's words, keyed by its `error_details.error_reason` (read before
 * CASHFREE_ERRORS for UPI attempts: a UPI decline's `error_code` is the generic
 * `TRANSACTION_DECLINED`, its reason says who declined), and by the `code` of an API refusal of
 * the collect request's VPA. Only reasons seen in Cashfree's published examples have rows.
 */
export const CASHFREE_UPI_ERRORS: Record<string, KoshReason> = {
  auth_declined: {
    code: 'payment_declined',
    reason: 'The customer declined the payment in their UPI app, or entered a wrong UPI PIN.',
  },
  bank_rejected: { code: 'payment_declined', reason: "The customer's bank declined the UPI payment." },
  upi_id_invalid: {
    code: 'payment_declined',
    reason: "The provider refused the customer's VPA: no UPI account answers to it.",
  },
};
