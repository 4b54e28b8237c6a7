import { randomBytes } from 'node:crypto';
import {
  type Answer,
  error,
  type FakeCashfreeOrder,
  type FakeCashfreePayment,
  type FakeCashfreeRefund,
  orderView,
  PHONE,
  paiseOf,
  readPaymentMethod,
  refundView,
  rupees,
} from './cashfree-fake-model.js';
import { upiPayData } from './cashfree-fake-upi.js';

/** `2023-09-09T18:02:46+05:30` (Cashfree's examples), or with `Z`. */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The Cashfree fake's answers to the API's writes (create order, Order Pay, create refund): each
 * request's checks as Cashfree documents them, then the record it makes (the server is cashfree-fake.ts).
 */

/** What the answers read and change of the fake: its records, settings, clock and id counter. */
export interface CashfreeFakeBook {
  readonly orders: FakeCashfreeOrder[];
  readonly refunds: FakeCashfreeRefund[];
  /** Bank codes the merchant's account has not enabled. */
  readonly disabledBanks: ReadonlySet<number>;
  /** What a new refund is answered with. */
  readonly refundOutcome: FakeCashfreeRefund['status'];
  /** An offer configured at the provider: each attempt takes this much less than its order. */
  readonly offerPaise: number;
  /** What a refund with a `refund_id` the order already has is answered with. */
  readonly duplicateRefundAnswer: { status: number; code: string };
  /** The order under the merchant's `order_id`, if any. */
  orderFor(orderId: string): FakeCashfreeOrder | undefined;
  /** The origin of the fake (its bank pages live here). */
  readonly origin: string;
  now(): Date;
  /** The fake's counter, moved on by one (ids and bank references). */
  next(): number;
}

/** A request's JSON body; undefined when it is not JSON. */
function readJson(text: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `POST /pg/orders`: a new order under the merchant's `order_id` (a second with it is refused). */
export function createOrder(book: CashfreeFakeBook, text: string): Answer {
  const input = readJson(text);
  if (!input) return error(400, 'request_failed', 'request body is not JSON');
  const orderId = input.order_id;
  if (typeof orderId !== 'string' || !/^[A-Za-z0-9_-]{3,45}$/.test(orderId)) {
    return error(400, 'order_id_invalid', 'order_id : alphanumeric, _ and -, 3 to 45 characters');
  }
  const amount = paiseOf(input.order_amount);
  if (amount === undefined || amount < 100) {
    return error(
      400,
      'order_amount_invalid',
      'order_amount : a number of at least 1 with up to two decimals',
    );
  }
  if (input.order_currency !== 'INR') return error(400, 'order_currency_invalid', 'order_currency : INR');
  const customer = input.customer_details as Record<string, unknown> | undefined;
  if (!customer || typeof customer !== 'object') {
    return error(400, 'customer_details_missing', 'customer_details : is required');
  }
  if (typeof customer.customer_id !== 'string' || !/^[A-Za-z0-9]{1,50}$/.test(customer.customer_id)) {
    return error(400, 'customer_id_invalid', 'customer_details.customer_id : alphanumeric only');
  }
  if (typeof customer.customer_phone !== 'string' || !PHONE.test(customer.customer_phone)) {
    return error(400, 'customer_phone_invalid', 'customer_details.customer_phone : is invalid');
  }
  if (customer.customer_email !== undefined && !/^[^@\s]+@[^@\s]+$/.test(String(customer.customer_email))) {
    return error(400, 'customer_email_invalid', 'customer_details.customer_email : is invalid');
  }
  const returnUrl = (input.order_meta as Record<string, unknown> | undefined)?.return_url;
  if (typeof returnUrl !== 'string' || returnUrl.length > 250 || !/^https?:\/\//.test(returnUrl)) {
    return error(400, 'return_url_invalid', 'order_meta.return_url : an http(s) URL up to 250 characters');
  }
  const expiry = input.order_expiry_time;
  if (expiry !== undefined && (typeof expiry !== 'string' || !ISO_WITH_OFFSET.test(expiry))) {
    return error(400, 'order_expiry_time_invalid', 'order_expiry_time : an ISO 8601 time with its offset');
  }
  if (typeof expiry === 'string' && Date.parse(expiry) <= book.now().getTime()) {
    return error(400, 'order_expiry_time_invalid', 'order_expiry_time : must be in the future');
  }
  if (book.orderFor(orderId)) {
    return error(409, 'order_already_exists', 'order with same id is already present');
  }
  const order: FakeCashfreeOrder = {
    cfOrderId: String(2_149_460_000 + book.next()),
    orderId,
    amount,
    currency: 'INR',
    customer,
    returnUrl,
    status: 'ACTIVE',
    sessionId: `session_${randomBytes(24).toString('base64url')}`,
    payments: [],
    createdAt: book.now().toISOString(),
    expiresAt: typeof expiry === 'string' ? new Date(expiry).toISOString() : undefined,
  };
  book.orders.push(order);
  return { status: 200, body: orderView(order) };
}

/** `POST /pg/orders/sessions` (Order Pay): a new attempt on the session's order, and how to enter it. */
export async function startPayment(book: CashfreeFakeBook, text: string): Promise<Answer> {
  const input = readJson(text);
  if (!input) return error(400, 'request_failed', 'request body is not JSON');
  const order = book.orders.find((o) => o.sessionId === input.payment_session_id);
  if (!order)
    return error(400, 'payment_session_id_invalid', 'payment_session_id is not present or is invalid');
  if (order.status !== 'ACTIVE') return error(400, 'order_inactive', 'order is not active');
  const chosen = readPaymentMethod(input.payment_method, book.disabledBanks);
  if ('status' in chosen) return chosen;
  const payment: FakeCashfreePayment = {
    cfPaymentId: String(5_114_910_000 + book.next()),
    amount: order.amount - book.offerPaise,
    method: chosen,
    status: 'NOT_ATTEMPTED',
    bankReference: null,
    error: null,
    time: book.now().toISOString(),
    completionTime: null,
  };
  order.payments.push(payment);
  if ('upi' in chosen) {
    return {
      status: 200,
      body: {
        payment_method: 'upi',
        channel: chosen.upi.channel,
        action: 'custom',
        cf_payment_id: payment.cfPaymentId,
        payment_amount: rupees(payment.amount),
        data: await upiPayData(chosen, payment.cfPaymentId, payment.amount),
      },
    };
  }
  const page = `${book.origin}/bank/${payment.cfPaymentId}`;
  return {
    status: 200,
    body: {
      payment_method: 'netbanking' in chosen ? 'netbanking' : 'app',
      channel: 'link',
      action: 'link',
      cf_payment_id: payment.cfPaymentId,
      payment_amount: rupees(payment.amount),
      // Net banking is entered by a POST of fields, wallets by a GET link: both shapes Cashfree uses.
      data:
        'netbanking' in chosen
          ? {
              url: page,
              payload: {
                cf_payment_id: payment.cfPaymentId,
                bank: String(chosen.netbanking.netbanking_bank_code),
              },
              content_type: 'application/x-www-form-urlencoded',
              method: 'post',
            }
          : {
              url: `${page}?provider=${chosen.app.provider}`,
              payload: null,
              content_type: null,
              method: 'get',
            },
    },
  };
}

/** `POST /pg/orders/:id/refunds`: a refund of the order's paid attempt, up to what is left. */
export function createRefund(book: CashfreeFakeBook, order: FakeCashfreeOrder, text: string): Answer {
  const input = readJson(text);
  if (!input) return error(400, 'request_failed', 'request body is not JSON');
  const refundId = input.refund_id;
  if (typeof refundId !== 'string' || !/^[A-Za-z0-9_-]{3,40}$/.test(refundId)) {
    return error(400, 'refund_id_invalid', 'refund_id : 3 to 40 characters');
  }
  const amount = paiseOf(input.refund_amount);
  if (amount === undefined || amount < 1) {
    return error(400, 'refund_amount_invalid', 'refund_amount : a positive number with up to two decimals');
  }
  const speed = input.refund_speed ?? 'STANDARD';
  if (speed !== 'STANDARD' && speed !== 'INSTANT') {
    return error(400, 'refund_speed_invalid', 'refund_speed : STANDARD or INSTANT');
  }
  if (book.refunds.some((refund) => refund.orderId === order.orderId && refund.refundId === refundId)) {
    const { status, code } = book.duplicateRefundAnswer;
    return error(status, code, 'refund with same refund_id is already present');
  }
  const paid = order.payments.find((payment) => payment.status === 'SUCCESS');
  if (!paid) return error(400, 'order_not_paid', 'only a paid order can be refunded');
  const refunded = book.refunds
    .filter(
      (refund) =>
        refund.orderId === order.orderId && refund.status !== 'CANCELLED' && refund.status !== 'FAILED',
    )
    .reduce((sum, refund) => sum + refund.amount, 0);
  if (refunded + amount > paid.amount) {
    return error(400, 'refund_amount_invalid', 'refund_amount is more than what is left to refund');
  }
  const refund: FakeCashfreeRefund = {
    cfRefundId: String(41_805_000 + book.next()),
    refundId,
    orderId: order.orderId,
    cfPaymentId: paid.cfPaymentId,
    amount,
    speed,
    status: book.refundOutcome,
    createdAt: book.now().toISOString(),
  };
  book.refunds.push(refund);
  return { status: 200, body: refundView(refund, book.now()) };
}
