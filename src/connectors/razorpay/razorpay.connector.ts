import type {
  BrowserDetails,
  Connector,
  ConnectorPayment,
  ConnectorRefund,
  InitiateResult,
  RefundResult,
  StatusResult,
} from '../connector.js';
import { numberField, stringField } from '../http.js';
import { createRazorpayClient, type RazorpayClient } from './razorpay.client.js';
import {
  attemptFor,
  attemptResult,
  autoCaptureMinutes,
  instrumentOf,
  itemsOf,
  type RazorpayCredentials,
  razorpayFailure,
  razorpayOrderRequest,
  razorpayPaymentRequest,
  razorpayPaymentStatus,
  razorpayRefundRequest,
  razorpayRefundResult,
  redirectOf,
  refusal,
  row,
  text,
  unreadable,
} from './razorpay.shapes.js';
import {
  type KoshFailure,
  RAZORPAY_ATTEMPT_PREFERENCE,
  RAZORPAY_BANKS,
  RAZORPAY_DEFAULT_ERROR,
  RAZORPAY_ERRORS,
  RAZORPAY_UPI,
  RAZORPAY_WALLETS,
} from './razorpay.tables.js';
import { startUpi } from './razorpay.upi.js';
import { parseRazorpayReturn, parseRazorpayWebhook } from './razorpay.webhooks.js';

/**
 * Razorpay's server-to-server JSON API (net banking and wallets): one Razorpay order per Kosh
 * payment (its receipt is Kosh's payment id), then a payment on it created once the customer's
 * browser is at Kosh (Razorpay wants the customer's address, user agent and referer), the bank's
 * page, Razorpay's signed return, its signed webhooks and its fetch APIs. UPI (intent, QR, collect)
 * goes on the same order through Razorpay's S2S UPI create, at the merchant's call (razorpay.upi.ts). Statuses and errors map
 * through razorpay.tables.ts; an answer the connector cannot read is `unknown` (docs/connectors.md).
 * Verified only against its fake (test/helpers/providers/razorpay-fake.ts).
 *
 * The folder: razorpay.client.ts calls the API, razorpay.shapes.ts builds its requests and reads its
 * answers, razorpay.tables.ts holds its words and Kosh's, razorpay.webhooks.ts checks what it signs.
 */

/** Razorpay's idempotency keys: at least 10 letters, digits, `-` or `_` (Kosh's refund ids are). */
const IDEMPOTENCY_KEY = /^[A-Za-z0-9_-]{10,}$/;

type Found<Key extends string> =
  | ({ kind: 'found' } & Record<Key, unknown>)
  | { kind: 'none' }
  | { kind: 'unknown'; reason: string };

/** The Razorpay order of a payment: what Kosh stored, or the reference it recorded. */
const orderIdOf = (payment: ConnectorPayment): string | undefined =>
  text(payment.provider.data.razorpay_order_id) ?? text(payment.provider.reference);

function started(order: unknown): InitiateResult {
  const id = stringField(order, 'id') as string;
  return {
    outcome: 'started',
    action: 'redirect',
    next: { kind: 'browser' },
    reference: id,
    rawStatus: stringField(order, 'status') ?? null,
    data: { razorpay_order_id: id },
    reconcile: true,
  };
}

function refused(failure: KoshFailure, reference: string | null, raw: string | undefined): InitiateResult {
  return {
    outcome: 'failed',
    errorCode: failure.code,
    errorReason: failure.reason,
    reference,
    rawStatus: raw ?? null,
  };
}

/**
 * The order made for a Kosh payment, found by its receipt (Kosh's payment id). Razorpay does not
 * refuse a second order with the same receipt, so this look-up is what keeps a retried start
 * from making another order.
 */
async function findOrder(client: RazorpayClient, payment: ConnectorPayment): Promise<Found<'order'>> {
  const answer = await client.ordersByReceipt(payment.id);
  if (answer.kind === 'unknown') return { kind: 'unknown', reason: answer.reason };
  if (answer.status !== 200) return { kind: 'unknown', reason: unreadable(answer) };
  const items = itemsOf(answer.body);
  if (!items) return { kind: 'unknown', reason: 'orders: no items' };
  // The filter may match more than the exact receipt; only Kosh's own id counts.
  const mine = items.filter((item) => stringField(item, 'receipt') === payment.id && stringField(item, 'id'));
  const order = mine.find((item) => stringField(item, 'status') === 'paid') ?? mine[0];
  if (!order) return { kind: 'none' };
  if (
    numberField(order, 'amount') !== payment.amount ||
    stringField(order, 'currency') !== payment.currency
  ) {
    return { kind: 'unknown', reason: 'an order with this receipt has another amount or currency' };
  }
  return { kind: 'found', order };
}

/**
 * The word on an order when Kosh recorded none of its payment attempts: an attempt whose create
 * answer was lost never sent the customer anywhere (Kosh records the answer before the browser
 * moves on), so only one that took money speaks for the payment. Otherwise the customer has done
 * nothing at Razorpay yet (`not_started`): Kosh's page stays open, and its next visit makes a fresh
 * attempt on the same order. An abandoned attempt that Razorpay later fails is not the customer's
 * failure either.
 */
async function orderStatus(client: RazorpayClient, orderId: string): Promise<StatusResult> {
  const attempts = await orderAttempts(client, orderId);
  if ('reason' in attempts) return { outcome: 'unknown', reason: attempts.reason };
  if (attempts.paid) return attempts.paid;
  return {
    outcome: 'not_started',
    rawStatus: attempts.items.length === 0 ? 'no_payment' : 'attempt_not_shown',
    reference: orderId,
  };
}

/**
 * The attempts on a Razorpay order, and the status of the one that took the money if any (the
 * preferred one: captured, refunded, authorised); or why they could not be read.
 */
async function orderAttempts(
  client: RazorpayClient,
  orderId: string,
): Promise<{ items: unknown[]; paid: StatusResult | undefined } | { reason: string }> {
  const answer = await client.orderPayments(orderId);
  if (answer.kind === 'unknown') return { reason: answer.reason };
  if (answer.status !== 200) return { reason: unreadable(answer) };
  const items = itemsOf(answer.body);
  if (!items) return { reason: 'order payments: no items' };
  const tookMoney = items.filter((item) =>
    RAZORPAY_ATTEMPT_PREFERENCE.includes(stringField(item, 'status') ?? ''),
  );
  return { items, paid: tookMoney.length > 0 ? razorpayPaymentStatus(attemptFor(tookMoney)) : undefined };
}

/**
 * The recorded attempt has not taken the money, but it may not be the only one on the order: two
 * visits of Kosh's page at once (a double click, a reload in a second tab) each make one, Kosh
 * records the last, and the customer may pay in the other tab. Every attempt on the order is this
 * payment's, so the order decides: one that took the money is the answer; while another is still
 * at the bank (or, for UPI, still waiting for the customer's approval), a failure of the recorded
 * one is not final (pending); the order unread, neither is that failure (unknown).
 */
async function alongsideOtherAttempts(
  client: RazorpayClient,
  orderId: string,
  recordedId: string,
  recorded: StatusResult,
): Promise<StatusResult> {
  const attempts = await orderAttempts(client, orderId);
  if ('reason' in attempts) {
    return recorded.outcome === 'failed' ? { outcome: 'unknown', reason: attempts.reason } : recorded;
  }
  if (attempts.paid) return attempts.paid;
  // A UPI attempt is `created` (not_started) until the customer approves it in the app: it can
  // still take the money, so it keeps the order open as one at the bank does.
  const stillOpen = attempts.items.some((item) => {
    if (stringField(item, 'id') === recordedId) return false;
    const outcome = razorpayPaymentStatus(item).outcome;
    return outcome === 'pending' || outcome === 'not_started';
  });
  if (recorded.outcome === 'failed' && stillOpen) {
    return { outcome: 'pending', rawStatus: 'created', reference: orderId };
  }
  return recorded;
}

/** The Razorpay payment that took the money, which is what a refund is made on. */
async function paidPaymentId(
  client: RazorpayClient,
  payment: ConnectorPayment,
): Promise<{ id: string } | { reason: string }> {
  const known = text(payment.provider.data.razorpay_payment_id);
  if (known) return { id: known };
  const orderId = orderIdOf(payment);
  if (!orderId) return { reason: 'no Razorpay order for this payment' };
  const answer = await client.orderPayments(orderId);
  if (answer.kind === 'unknown') return { reason: answer.reason };
  if (answer.status !== 200) return { reason: unreadable(answer) };
  const captured = itemsOf(answer.body)?.find((item) => stringField(item, 'status') === 'captured');
  const id = text(stringField(captured, 'id'));
  return id ? { id } : { reason: 'no captured Razorpay payment on the order' };
}

/** A refund already made for this Kosh refund (its receipt), among the payment's refunds. */
async function refundByReceipt(
  client: RazorpayClient,
  paymentId: string,
  refundId: string,
): Promise<Found<'refund'>> {
  const answer = await client.paymentRefunds(paymentId);
  if (answer.kind === 'unknown') return { kind: 'unknown', reason: answer.reason };
  if (answer.status !== 200) return { kind: 'unknown', reason: unreadable(answer) };
  const items = itemsOf(answer.body);
  if (!items) return { kind: 'unknown', reason: 'refunds: no items' };
  const refund = items.find((item) => stringField(item, 'receipt') === refundId);
  if (refund) return { kind: 'found', refund };
  // A full page may not be all of them: the refund may be on the next.
  return items.length >= 100 ? { kind: 'unknown', reason: 'refunds: more than one page' } : { kind: 'none' };
}

export function createRazorpayConnector(options: {
  baseUrl: string;
  credentials: RazorpayCredentials;
  timeoutMs?: number;
  /** Minutes after the payment during which Razorpay captures an authorisation by itself. */
  autoCaptureMinutes?: number;
}): Connector {
  const client = createRazorpayClient(options);
  const { key_secret, webhook_secret } = options.credentials;
  const captureMinutes = autoCaptureMinutes(options.autoCaptureMinutes);

  /**
   * The payment's Razorpay order: the one made before (found by its receipt, so that a retried
   * start never makes a second), or a new one. Not retried on an unknown answer: the next start
   * finds the order by its receipt instead.
   */
  async function orderFor(payment: ConnectorPayment): Promise<{ order: unknown } | InitiateResult> {
    const found = await findOrder(client, payment);
    if (found.kind === 'unknown') return { outcome: 'unknown', reason: found.reason };
    if (found.kind === 'found') return { order: found.order };
    const answer = await client.createOrder(razorpayOrderRequest(payment, captureMinutes));
    if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
    if (answer.status === 200 && stringField(answer.body, 'id')) return { order: answer.body };
    const refusedWith = refusal(answer);
    if (refusedWith) {
      return refused(razorpayFailure(refusedWith.reason, refusedWith.code), null, refusedWith.reason);
    }
    return { outcome: 'unknown', reason: unreadable(answer) };
  }

  return {
    name: 'razorpay',
    methods: {
      netbanking: RAZORPAY_BANKS,
      wallet: Object.keys(RAZORPAY_WALLETS),
      upi: RAZORPAY_UPI,
    },

    async initiate(payment): Promise<InitiateResult> {
      const order = await orderFor(payment);
      if ('outcome' in order) return order;
      // UPI starts here, at the merchant's S2S call: there is no browser step to wait for.
      if (payment.upi) {
        const orderId = stringField(order.order, 'id') as string;
        return startUpi(client.createUpiPayment, { ...payment, upi: payment.upi }, orderId);
      }
      return started(order.order);
    },

    async continueInBrowser(payment: ConnectorPayment, browser: BrowserDetails): Promise<InitiateResult> {
      const orderId = orderIdOf(payment);
      if (!orderId) return { outcome: 'unknown', reason: 'no Razorpay order yet' };
      const instrument = instrumentOf(payment);
      if (!instrument) {
        return refused(
          row(RAZORPAY_ERRORS, 'bank_not_enabled') ?? RAZORPAY_DEFAULT_ERROR,
          orderId,
          undefined,
        );
      }
      // Not retried: a second create would be a second attempt on the order. A lost answer is
      // asked about (`status`); the next visit of the page makes a new attempt, and Razorpay
      // captures at most one payment per order.
      return attemptResult(
        await client.createPayment(razorpayPaymentRequest(payment, orderId, instrument, browser)),
        orderId,
        (body) => {
          const url = redirectOf(body);
          return url ? { action: 'redirect', next: { kind: 'redirect', url } } : 'no redirect in the answer';
        },
      );
    },

    async handleReturn(payment, browserReturn) {
      return parseRazorpayReturn(orderIdOf(payment), browserReturn, key_secret);
    },

    async parseWebhook(webhook) {
      return parseRazorpayWebhook(webhook, webhook_secret);
    },

    async status(payment: ConnectorPayment): Promise<StatusResult> {
      const paymentId = text(payment.provider.data.razorpay_payment_id);
      if (paymentId) {
        const answer = await client.getPayment(paymentId);
        if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
        if (answer.status !== 200) return { outcome: 'unknown', reason: unreadable(answer) };
        const recorded = razorpayPaymentStatus(answer.body);
        const orderId = orderIdOf(payment);
        if (recorded.outcome === 'captured' || recorded.outcome === 'unknown' || !orderId) return recorded;
        return alongsideOtherAttempts(client, orderId, paymentId, recorded);
      }
      const orderId = orderIdOf(payment);
      if (orderId) return orderStatus(client, orderId);
      // The order's answer was lost: it may still exist, under Kosh's payment id as its receipt.
      const found = await findOrder(client, payment);
      if (found.kind === 'unknown') return { outcome: 'unknown', reason: found.reason };
      if (found.kind === 'none') return { outcome: 'not_started', rawStatus: 'no_order' };
      return orderStatus(client, stringField(found.order, 'id') as string);
    },

    async refund(refund: ConnectorRefund): Promise<RefundResult> {
      if (!IDEMPOTENCY_KEY.test(refund.id)) {
        return { outcome: 'unknown', reason: 'the refund id cannot be a Razorpay idempotency key' };
      }
      const paid = await paidPaymentId(client, refund.payment);
      if (!('id' in paid)) return { outcome: 'unknown', reason: paid.reason };
      // A refund made before (an answer lost, then resent) is found by its receipt. Should the
      // look-up fail, the idempotency key below still keeps Razorpay from refunding twice.
      const existing = await refundByReceipt(client, paid.id, refund.id);
      if (existing.kind === 'found') return razorpayRefundResult(existing.refund);
      const answer = await client.createRefund(paid.id, razorpayRefundRequest(refund));
      if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
      if (answer.status === 200) return razorpayRefundResult(answer.body);
      const refusedWith = refusal(answer);
      // A refusal about the key itself says nothing of the refund: it may exist. Ask instead. So
      // does any refusal when the look-up could not say that no refund was made before: "fully
      // refunded already" may be about this very refund, and failing it would free its amount.
      if (refusedWith && existing.kind === 'none' && !/idempoten/i.test(refusedWith.description ?? '')) {
        return {
          outcome: 'failed',
          rawStatus: refusedWith.reason,
          errorCode: 'refund_declined',
          errorReason: refusedWith.description ?? 'Razorpay refused the refund.',
        };
      }
      return { outcome: 'unknown', reason: unreadable(answer) };
    },

    async refundStatus(refund: ConnectorRefund): Promise<RefundResult> {
      const reference = text(refund.provider.reference);
      if (reference) {
        const answer = await client.getRefund(reference);
        if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
        if (answer.status !== 200) return { outcome: 'unknown', reason: unreadable(answer) };
        return razorpayRefundResult(answer.body);
      }
      const paid = await paidPaymentId(client, refund.payment);
      if (!('id' in paid)) return { outcome: 'unknown', reason: paid.reason };
      const existing = await refundByReceipt(client, paid.id, refund.id);
      if (existing.kind === 'found') return razorpayRefundResult(existing.refund);
      if (existing.kind === 'unknown') return { outcome: 'unknown', reason: existing.reason };
      return { outcome: 'unknown', reason: 'Razorpay holds no refund with this receipt' };
    },
  };
}
