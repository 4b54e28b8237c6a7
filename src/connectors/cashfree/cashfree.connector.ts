import type {
  Connector,
  ConnectorPayment,
  ConnectorRefund,
  InitiateResult,
  RefundResult,
  StatusResult,
} from '../connector.js';
import { type ProviderAnswer, stringField } from '../http.js';
import { type CashfreeClient, createCashfreeClient } from './cashfree.client.js';
import {
  type CashfreeCredentials,
  cashfreeOrderRequest,
  cashfreePaymentMethod,
  cashfreeRefundRequest,
  cashfreeRefundResult,
  cashfreeStatus,
  DEFAULT_ORDER_EXPIRY_SECONDS,
  field,
  idField,
  latestAttempt,
  lookup,
  nextStepOf,
  paiseFromCashfree,
  refusalOf,
  refusedStart,
} from './cashfree.shapes.js';
import {
  CASHFREE_AUTHENTICATION_ERROR,
  CASHFREE_BANKS,
  CASHFREE_DEFAULT_DECLINE,
  CASHFREE_ERRORS,
  CASHFREE_REFUND_DECLINE,
  CASHFREE_UPI,
  CASHFREE_WALLETS,
} from './cashfree.tables.js';
import { isUpiAttempt, upiStepOf } from './cashfree.upi.js';
import { parseCashfreeWebhook } from './cashfree.webhooks.js';

/**
 * The Cashfree Payment Gateway (API version 2023-08-01), written as docs/connectors.md asks: Kosh's
 * payment id is Cashfree's `order_id` (unique there, so a retried start finds the first order),
 * every status and error maps through cashfree.tables.ts, every call has a deadline, and an answer
 * this connector cannot read is `unknown`, never a failure.
 *
 * The flow: create the order (`POST /orders`), then start its payment with the customer's bank or
 * wallet (`POST /orders/sessions`); Cashfree answers where the browser goes (a POST form or a GET
 * link). UPI goes the same way, answered with the `upi://pay` link or a collect request
 * (cashfree.upi.ts). The browser comes back unsigned, so Kosh asks `GET /orders/{id}/payments`; Cashfree's
 * signed webhooks say the same sooner.
 *
 * The folder: cashfree.client.ts calls the API, cashfree.shapes.ts builds its requests and reads its
 * answers (cashfree.upi.ts those of UPI), cashfree.tables.ts holds its words and Kosh's,
 * cashfree.webhooks.ts checks its webhooks.
 */

export interface CashfreeOptions {
  /** The API's base, with its `/pg`: `https://api.cashfree.com/pg` (or the sandbox's). */
  baseUrl: string;
  credentials: CashfreeCredentials;
  timeoutMs?: number;
  now?: () => Date;
  /** How far a webhook's `x-webhook-timestamp` may be from now (replays older than it are refused). */
  webhookToleranceSeconds?: number;
  /**
   * How long after the payment's creation its order takes new attempts (`order_expiry_time`):
   * Kosh's late window, the time it keeps asking about a payment (default 3 days).
   */
  orderExpirySeconds?: number;
}

type OrderAnswer = { kind: 'order'; body: unknown } | { kind: 'result'; result: InitiateResult };

/**
 * Creates the payment's order, or finds it: the `order_id` is unique at Cashfree and the request
 * carries an idempotency key, so sending it again (after a lost answer) never makes a second.
 */
async function createOrder(
  client: CashfreeClient,
  payment: ConnectorPayment,
  expirySeconds: number,
): Promise<OrderAnswer> {
  const answer = await client.createOrder(cashfreeOrderRequest(payment, expirySeconds));
  if (answer.kind === 'unknown')
    return { kind: 'result', result: { outcome: 'unknown', reason: answer.reason } };
  if (answer.status === 200) return { kind: 'order', body: answer.body };
  const refusal = refusalOf(answer);
  if (answer.status === 409 && refusal.code === 'order_already_exists') {
    const existing = await client.getOrder(payment.id);
    if (existing.kind === 'unknown') {
      return { kind: 'result', result: { outcome: 'unknown', reason: `existing order: ${existing.reason}` } };
    }
    if (existing.status === 200) return { kind: 'order', body: existing.body };
    return {
      kind: 'result',
      result: { outcome: 'unknown', reason: `existing order: HTTP ${existing.status}` },
    };
  }
  const refused = refusedStart(refusal);
  if (!refused) {
    return {
      kind: 'result',
      result: { outcome: 'unknown', reason: `create order: HTTP ${answer.status} ${refusal.code}` },
    };
  }
  return {
    kind: 'result',
    result: {
      outcome: 'failed',
      errorCode: refused.code,
      errorReason: refused.reason,
      reference: null,
      rawStatus: refusal.code || null,
    },
  };
}

/** Starts the payment on its order: the order must be this payment's, and still open. */
async function startPayment(
  client: CashfreeClient,
  payment: ConnectorPayment,
  paymentMethod: Record<string, unknown>,
  orderExpirySeconds: number,
): Promise<InitiateResult> {
  const order = await createOrder(client, payment, orderExpirySeconds);
  if (order.kind === 'result') return order.result;
  const cfOrderId = idField(order.body, 'cf_order_id') ?? null;
  const orderStatus = stringField(order.body, 'order_status');
  // An order found again must be this payment's: same amount and currency.
  if (
    paiseFromCashfree(field(order.body, 'order_amount')) !== payment.amount ||
    stringField(order.body, 'order_currency') !== payment.currency
  ) {
    return { outcome: 'unknown', reason: 'the order at Cashfree differs from the payment' };
  }
  if (orderStatus === 'PAID') return { outcome: 'unknown', reason: 'the order is paid already: ask status' };
  if (orderStatus === 'EXPIRED' || orderStatus === 'TERMINATED' || orderStatus === 'TERMINATION_REQUESTED') {
    const inactive = lookup(CASHFREE_ERRORS, 'order_inactive') ?? CASHFREE_DEFAULT_DECLINE;
    return {
      outcome: 'failed',
      errorCode: inactive.code,
      errorReason: inactive.reason,
      reference: cfOrderId,
      rawStatus: orderStatus,
    };
  }
  if (orderStatus !== 'ACTIVE')
    return { outcome: 'unknown', reason: `order_status ${orderStatus ?? 'missing'}` };
  const sessionId = stringField(order.body, 'payment_session_id');
  if (!sessionId) return { outcome: 'unknown', reason: 'no payment_session_id' };

  // Not retried: each call starts another attempt (the order still takes one payment only).
  const pay = await client.pay({ payment_session_id: sessionId, payment_method: paymentMethod });
  if (pay.kind === 'unknown') return { outcome: 'unknown', reason: `pay: ${pay.reason}` };
  if (pay.status !== 200) {
    const refusal = refusalOf(pay);
    const refused = refusedStart(refusal);
    if (!refused) return { outcome: 'unknown', reason: `pay: HTTP ${pay.status} ${refusal.code}` };
    return {
      outcome: 'failed',
      errorCode: refused.code,
      errorReason: refused.reason,
      reference: cfOrderId,
      rawStatus: refusal.code || null,
    };
  }
  // A UPI answer is the app's link (or, for collect, none); a bank's or wallet's is its page.
  const step = payment.upi ? upiStepOf(pay.body, payment) : nextStepOf(field(pay.body, 'data'));
  if (typeof step === 'string') return { outcome: 'unknown', reason: `pay: ${step}` };
  const cfPaymentId = idField(pay.body, 'cf_payment_id');
  return {
    outcome: 'started',
    action: step.action,
    next: step.next,
    reference: cfOrderId,
    rawStatus: orderStatus,
    data: {
      ...(cfOrderId ? { cf_order_id: cfOrderId } : {}),
      payment_session_id: sessionId,
      ...(cfPaymentId ? { cf_payment_id: cfPaymentId } : {}),
    },
    reconcile: true,
  };
}

export function createCashfreeConnector(options: CashfreeOptions): Connector {
  const client = createCashfreeClient(options);
  const now = options.now ?? (() => new Date());
  const orderExpirySeconds = options.orderExpirySeconds ?? DEFAULT_ORDER_EXPIRY_SECONDS;
  const webhookOptions = {
    clientSecret: options.credentials.client_secret,
    now,
    toleranceMs: (options.webhookToleranceSeconds ?? 300) * 1000,
  };

  /**
   * Cashfree's "no such order" or "no such refund". Its answer to a bad URL is a 404 too,
   * `request_failed`: that one says nothing about the order or the refund.
   */
  function isNotFound(answer: Extract<ProviderAnswer, { kind: 'answer' }>): boolean {
    const refusal = refusalOf(answer);
    return (
      answer.status === 404 && refusal.type === 'invalid_request_error' && /not_found/.test(refusal.code)
    );
  }

  async function status(payment: ConnectorPayment): Promise<StatusResult> {
    const answer = await client.orderPayments(payment.id);
    if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
    if (isNotFound(answer)) {
      // Cashfree holds no order for this payment: the start never reached it.
      return { outcome: 'not_started', rawStatus: null };
    }
    if (answer.status !== 200) return { outcome: 'unknown', reason: `HTTP ${answer.status}` };
    if (!Array.isArray(answer.body)) return { outcome: 'unknown', reason: 'payments is not a list' };
    if (answer.body.length === 0) return { outcome: 'not_started', rawStatus: null };
    const attempt = latestAttempt(answer.body);
    const orderId = stringField(attempt, 'order_id');
    if (orderId !== undefined && orderId !== payment.id) {
      return { outcome: 'unknown', reason: `answer about order ${orderId}` };
    }
    const result = cashfreeStatus(attempt);
    // A UPI attempt whose start answer Kosh never recorded (a lost answer: another cf_payment_id)
    // was never shown to the customer as Kosh's: unless it took the money it is not_started, so
    // the customer can still pay the attempt Kosh shows (docs/connectors.md, rule 7).
    const recorded = payment.provider.data.cf_payment_id;
    if (
      payment.upi &&
      isUpiAttempt(attempt) &&
      result.outcome !== 'captured' &&
      result.outcome !== 'unknown' &&
      idField(attempt, 'cf_payment_id') !== (typeof recorded === 'string' ? recorded : undefined)
    ) {
      return { outcome: 'not_started', rawStatus: result.rawStatus ?? null };
    }
    // Every attempt on the order is this payment's (a retried page makes a second one): while an
    // earlier attempt can still take the money, the latest one's failure is not final and Kosh
    // keeps asking (the provider's word stays the latest attempt's).
    if (result.outcome === 'failed' && answer.body.some((other) => other !== attempt && stillOpen(other))) {
      return { outcome: 'pending', rawStatus: result.rawStatus ?? null };
    }
    return result;
  }

  /**
   * An attempt that can still take the money: one at the bank (`PENDING`), or a UPI attempt the
   * customer has not answered yet (`NOT_ATTEMPTED`: a collect request on their phone, or a link or
   * QR code they may still pay, such as one whose start answer Kosh lost).
   */
  function stillOpen(attempt: unknown): boolean {
    const outcome = cashfreeStatus(attempt).outcome;
    return outcome === 'pending' || (outcome === 'not_started' && isUpiAttempt(attempt));
  }

  async function refundStatus(refund: ConnectorRefund): Promise<RefundResult> {
    const answer = await client.getRefund(refund.payment.id, refund.id);
    if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
    if (answer.status !== 200) return { outcome: 'unknown', reason: `HTTP ${answer.status}` };
    return cashfreeRefundResult(answer.body, refund);
  }

  return {
    name: 'cashfree',
    methods: {
      netbanking: Object.keys(CASHFREE_BANKS),
      wallet: Object.keys(CASHFREE_WALLETS),
      upi: CASHFREE_UPI,
    },

    async initiate(payment): Promise<InitiateResult> {
      const paymentMethod = cashfreePaymentMethod(payment, now());
      if (!paymentMethod) {
        return {
          outcome: 'failed',
          errorCode: 'bank_unavailable',
          errorReason: payment.upi
            ? 'The provider does not take this UPI payment (a collect request needs a VPA).'
            : 'The provider does not take payments from this bank or wallet.',
          reference: null,
          rawStatus: null,
        };
      }
      return startPayment(client, payment, paymentMethod, orderExpirySeconds);
    },

    /** Cashfree's return carries the order id only, unsigned: Kosh asks `status`. */
    async handleReturn() {
      return { verified: false };
    },

    async parseWebhook(webhook) {
      return parseCashfreeWebhook(webhook, webhookOptions);
    },

    status,

    async refund(refund): Promise<RefundResult> {
      // The refund id is unique per order at Cashfree and the request carries an idempotency key:
      // sending it again answers the first request, or finds the refund; it never refunds twice.
      const answer = await client.createRefund(refund.payment.id, cashfreeRefundRequest(refund));
      if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
      if (answer.status === 200) return cashfreeRefundResult(answer.body, refund);
      const refusal = refusalOf(answer);
      if (answer.status === 409 || /already_exist|duplicate/i.test(refusal.code)) return refundStatus(refund);
      if (answer.status === 401) {
        return {
          outcome: 'failed',
          rawStatus: refusal.code || null,
          errorCode: CASHFREE_AUTHENTICATION_ERROR.code,
          errorReason: CASHFREE_AUTHENTICATION_ERROR.reason,
        };
      }
      if (answer.status === 400 || answer.status === 404) {
        // A refusal may be Cashfree's answer to a refund_id it already has (the request sent again
        // after a lost answer), and failing it would let the merchant refund the amount twice: the
        // refund is looked up by its id first, and only one Cashfree does not have is failed.
        const existing = await client.getRefund(refund.payment.id, refund.id);
        if (existing.kind === 'unknown') return { outcome: 'unknown', reason: existing.reason };
        if (existing.status === 200) return cashfreeRefundResult(existing.body, refund);
        if (!isNotFound(existing)) return { outcome: 'unknown', reason: `HTTP ${existing.status}` };
        return {
          outcome: 'failed',
          rawStatus: refusal.code || null,
          errorCode: CASHFREE_REFUND_DECLINE.code,
          errorReason: refusal.message || CASHFREE_REFUND_DECLINE.reason,
        };
      }
      return { outcome: 'unknown', reason: `HTTP ${answer.status} ${refusal.code}` };
    },

    refundStatus,
  };
}
