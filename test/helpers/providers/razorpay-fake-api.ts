import type http from 'node:http';
import type { FakeRazorpay } from './razorpay-fake.js';
import {
  type Answer,
  error,
  extraField,
  isObject,
  newId,
  notesOf,
  parseBody,
} from './razorpay-fake-common.js';
import {
  BANKS,
  type FakeRazorpayOrder,
  type FakeRazorpayRefund,
  markRefunded,
  ORDER_FIELDS,
  orderView,
  PAY_FIELDS,
  paymentView,
  type RazorpayEndpoint,
  REFUND_FIELDS,
  recordAttempt,
  refundedAmount,
  refundView,
  WALLETS,
} from './razorpay-fake-model.js';
import { createUpiPayment } from './razorpay-fake-upi.js';

/**
 * The local Razorpay's API (test/helpers/providers/razorpay-fake.ts): which endpoint a request is,
 * and what each one does to the fake's orders, payments and refunds and answers.
 */

/**
 * The API request a method and path make, if any: the endpoint its faults go by, the call it is
 * logged as, and what it does.
 */
export function apiRoute(
  fake: FakeRazorpay,
  method: string,
  url: URL,
  body: string,
  headers: http.IncomingHttpHeaders,
): { endpoint: RazorpayEndpoint; call: string; act: () => Answer } | undefined {
  const path = url.pathname.replace(/\/+$/, '');
  const parts = path.split('/').slice(2);
  const [collection, id, sub, subId] = parts;
  if (method === 'POST') {
    if (path === '/v1/orders')
      return { endpoint: 'order', call: 'POST /v1/orders', act: () => createOrder(fake, body) };
    if (path === '/v1/payments/create/upi') {
      return {
        endpoint: 'pay',
        call: 'POST /v1/payments/create/upi',
        act: () => createUpiPayment(fake, body),
      };
    }
    if (path === '/v1/payments/create/json') {
      return {
        endpoint: 'pay',
        call: 'POST /v1/payments/create/json',
        act: () => createPayment(fake, body),
      };
    }
    if (collection === 'payments' && id && sub === 'refund' && parts.length === 3) {
      const key = headers['x-refund-idempotency'];
      return {
        endpoint: 'refund',
        call: 'POST /v1/payments/:id/refund',
        act: () => createRefund(fake, id, body, typeof key === 'string' ? key : undefined),
      };
    }
    return undefined;
  }
  if (method !== 'GET') return undefined;
  if (collection === 'orders') {
    if (parts.length === 1)
      return { endpoint: 'status', call: 'GET /v1/orders', act: () => listOrders(fake, url) };
    if (parts.length === 2 && id) {
      return { endpoint: 'status', call: 'GET /v1/orders/:id', act: () => fetchOrder(fake, id) };
    }
    if (parts.length === 3 && id && sub === 'payments') {
      return { endpoint: 'status', call: 'GET /v1/orders/:id/payments', act: () => orderPayments(fake, id) };
    }
  }
  if (collection === 'payments' && id) {
    if (parts.length === 2)
      return { endpoint: 'status', call: 'GET /v1/payments/:id', act: () => fetchPayment(fake, id) };
    if (parts.length === 3 && sub === 'refunds') {
      return {
        endpoint: 'refundStatus',
        call: 'GET /v1/payments/:id/refunds',
        act: () => paymentRefunds(fake, id),
      };
    }
    if (parts.length === 4 && sub === 'refunds' && subId) {
      return {
        endpoint: 'refundStatus',
        call: 'GET /v1/payments/:id/refunds/:id',
        act: () => fetchRefund(fake, subId, id),
      };
    }
  }
  if (collection === 'refunds' && id && parts.length === 2) {
    return { endpoint: 'refundStatus', call: 'GET /v1/refunds/:id', act: () => fetchRefund(fake, id) };
  }
  return undefined;
}

function createOrder(fake: FakeRazorpay, body: string): Answer {
  const parsed = parseBody(body);
  if ('refused' in parsed) return parsed.refused;
  const input = parsed.input;
  const extra = extraField(input, ORDER_FIELDS);
  if (extra) return error(400, `${extra} is/are not required and should not be sent`, { field: extra });
  const amount = input.amount;
  if (typeof amount !== 'number' || !Number.isInteger(amount)) {
    return error(400, 'The amount must be an integer.', { field: 'amount' });
  }
  if (amount < 100) return error(400, 'The amount must be at least INR 1.00', { field: 'amount' });
  if (input.currency !== 'INR') return error(400, 'The currency must be INR.', { field: 'currency' });
  if (input.receipt !== undefined && (typeof input.receipt !== 'string' || input.receipt.length > 40)) {
    return error(400, 'The receipt may not be greater than 40 characters.', { field: 'receipt' });
  }
  const notes = notesOf(input.notes);
  if (!notes) return error(400, 'The notes must be at most 15 short string values.', { field: 'notes' });
  const capture = input.payment;
  if (capture !== undefined) {
    const problem = captureProblem(capture);
    if (problem) return error(400, problem, { field: 'payment' });
  }
  const order: FakeRazorpayOrder = {
    id: newId('order'),
    amount,
    currency: input.currency,
    receipt: (input.receipt as string | undefined) ?? null,
    notes,
    status: 'created',
    attempts: 0,
    capture: capture ?? null,
    createdAt: Math.floor(Date.now() / 1000),
  };
  // Razorpay keeps receipts for reference only: a second order with the same one is made.
  fake.orders.set(order.id, order);
  return { status: 200, body: orderView(order) };
}

function captureProblem(capture: unknown): string | undefined {
  if (!isObject(capture)) return 'payment must be an object';
  if (capture.capture !== 'automatic' && capture.capture !== 'manual') return 'payment.capture is invalid';
  const options = capture.capture_options;
  if (options === undefined)
    return capture.capture === 'automatic' ? 'capture_options are required' : undefined;
  if (!isObject(options)) return 'payment.capture_options must be an object';
  const automatic = options.automatic_expiry_period;
  const manual = options.manual_expiry_period ?? 7200;
  if (
    capture.capture === 'automatic' &&
    (typeof automatic !== 'number' || !Number.isInteger(automatic) || automatic < 12)
  ) {
    return 'automatic_expiry_period must be at least 12 minutes';
  }
  if (typeof manual !== 'number' || manual > 7200 || (typeof automatic === 'number' && manual < automatic)) {
    return 'manual_expiry_period must be between automatic_expiry_period and 7200 minutes';
  }
  if (options.refund_speed !== 'normal' && options.refund_speed !== 'optimum')
    return 'refund_speed is invalid';
  return undefined;
}

function createPayment(fake: FakeRazorpay, body: string): Answer {
  const parsed = parseBody(body);
  if ('refused' in parsed) return parsed.refused;
  const input = parsed.input;
  const extra = extraField(input, PAY_FIELDS);
  if (extra) return error(400, `${extra} is/are not required and should not be sent`, { field: extra });
  for (const field of [
    'currency',
    'order_id',
    'email',
    'contact',
    'method',
    'callback_url',
    'ip',
    'user_agent',
  ]) {
    if (typeof input[field] !== 'string' || input[field] === '') {
      return error(400, `The ${field} field is required.`, { field });
    }
  }
  const checked = fake.orderForAttempt(input);
  if ('status' in checked) return checked;
  const { order, amount } = checked;
  try {
    const callback = new URL(input.callback_url as string);
    if (callback.protocol !== 'http:' && callback.protocol !== 'https:') throw new Error('scheme');
  } catch {
    return error(400, 'The callback url format is invalid.', { field: 'callback_url' });
  }
  const method = input.method;
  if (method !== 'netbanking' && method !== 'wallet') {
    return error(400, 'Invalid payment method given', {
      field: 'method',
      reason: 'payment_method_not_enabled',
    });
  }
  const bank = method === 'netbanking' ? input.bank : undefined;
  const wallet = method === 'wallet' ? input.wallet : undefined;
  if (method === 'netbanking' && (typeof bank !== 'string' || !BANKS.has(bank))) {
    return error(400, 'Invalid bank code', { field: 'bank' });
  }
  if (method === 'wallet' && (typeof wallet !== 'string' || !WALLETS.has(wallet))) {
    return error(400, 'Invalid wallet code', { field: 'wallet' });
  }
  if (typeof bank === 'string' && fake.disabledBanks.has(bank)) {
    return error(400, 'The bank is not enabled for the merchant', {
      field: 'bank',
      reason: 'bank_not_enabled',
    });
  }
  const notes = notesOf(input.notes);
  if (!notes) return error(400, 'The notes must be at most 15 short string values.', { field: 'notes' });
  fake.lastBrowser = {
    ip: input.ip as string,
    user_agent: input.user_agent as string,
    referer: typeof input.referer === 'string' ? input.referer : null,
  };
  const payment = recordAttempt(fake, order, input, {
    id: newId('pay'),
    amount: amount - fake.offerPaise,
    method,
    bank: typeof bank === 'string' ? bank : null,
    wallet: typeof wallet === 'string' ? wallet : null,
    upi: null,
    vpa: null,
    notes,
    callbackUrl: input.callback_url as string,
  });
  return {
    status: 200,
    body: {
      razorpay_payment_id: payment.id,
      next: [{ action: 'redirect', url: `${fake.url}/bank/${payment.id}` }],
    },
  };
}

function listOrders(fake: FakeRazorpay, url: URL): Answer {
  const receipt = url.searchParams.get('receipt');
  const items = [...fake.orders.values()]
    .filter((order) => receipt === null || order.receipt === receipt)
    .reverse()
    .slice(0, Number(url.searchParams.get('count') ?? 10));
  return {
    status: 200,
    body: { entity: 'collection', count: items.length, items: items.map((o) => orderView(o)) },
  };
}

function fetchOrder(fake: FakeRazorpay, id: string): Answer {
  const order = fake.orders.get(id);
  return order ? { status: 200, body: orderView(order) } : error(400, 'The id provided does not exist');
}

function orderPayments(fake: FakeRazorpay, id: string): Answer {
  if (!fake.orders.has(id)) return error(400, 'The id provided does not exist');
  const items = fake.paymentsFor(id).map((payment) => paymentView(payment, fake.refunds));
  return { status: 200, body: { entity: 'collection', count: items.length, items } };
}

function fetchPayment(fake: FakeRazorpay, id: string): Answer {
  const payment = fake.payments.get(id);
  return payment
    ? { status: 200, body: paymentView(payment, fake.refunds) }
    : error(400, 'The id provided does not exist');
}

function createRefund(fake: FakeRazorpay, paymentId: string, body: string, key: string | undefined): Answer {
  if (key !== undefined) {
    if (key.length < 10)
      return error(400, 'The idempotency key must be at least 10 characters long.', { reason: 'NA' });
    if (!/^[A-Za-z0-9_-]+$/.test(key)) {
      return error(
        400,
        'The idempotency key must only contain alphanumeric characters, underscores, and hyphens',
        {
          reason: 'NA',
        },
      );
    }
    const seen = fake.idempotency.get(key);
    if (seen) {
      if (seen.body !== body) {
        return error(409, 'Different request with the same idempotency key has already been processed.', {
          reason: 'NA',
          source: 'NA',
          step: 'NA',
        });
      }
      const refund = fake.refunds.get(seen.refundId);
      if (refund) return { status: 200, body: refundView(refund) };
    }
  }
  const parsed = parseBody(body);
  if ('refused' in parsed) return parsed.refused;
  const input = parsed.input;
  const extra = extraField(input, REFUND_FIELDS);
  if (extra) return error(400, `${extra} is/are not required and should not be sent`, { field: extra });
  const payment = fake.payments.get(paymentId);
  if (!payment) return error(400, 'The id provided does not exist');
  if (!payment.captured)
    return error(400, 'Only captured payments can be refunded', { reason: 'input_validation_failed' });
  const refunded = refundedAmount(fake.refunds, payment);
  if (refunded >= payment.amount) return error(400, 'The payment has been fully refunded already');
  const amount = input.amount ?? payment.amount - refunded;
  if (typeof amount !== 'number' || !Number.isInteger(amount))
    return error(400, 'The amount must be an integer.');
  if (amount < 100) return error(400, 'The amount must be at least INR 1.00', { field: 'amount' });
  if (refunded + amount > payment.amount) {
    return error(400, 'The refund amount provided is greater than amount captured', { field: 'amount' });
  }
  const speed = input.speed ?? 'normal';
  if (speed !== 'normal' && speed !== 'optimum')
    return error(400, 'The speed is invalid', { field: 'speed' });
  const notes = notesOf(input.notes);
  if (!notes) return error(400, 'The notes must be at most 15 short string values.', { field: 'notes' });
  const refund: FakeRazorpayRefund = {
    id: newId('rfnd'),
    paymentId,
    amount,
    currency: payment.currency,
    receipt: typeof input.receipt === 'string' ? input.receipt : null,
    notes,
    speedRequested: speed,
    status: fake.refundOutcome,
    createdAt: Math.floor(Date.now() / 1000),
  };
  fake.refunds.set(refund.id, refund);
  if (key !== undefined) fake.idempotency.set(key, { body, refundId: refund.id });
  markRefunded(fake.refunds, payment);
  return { status: 200, body: refundView(refund) };
}

function paymentRefunds(fake: FakeRazorpay, paymentId: string): Answer {
  if (!fake.payments.has(paymentId)) return error(400, 'The id provided does not exist');
  const items = [...fake.refunds.values()]
    .filter((refund) => refund.paymentId === paymentId)
    .map((refund) => refundView(refund));
  return { status: 200, body: { entity: 'collection', count: items.length, items } };
}

function fetchRefund(fake: FakeRazorpay, id: string, paymentId?: string): Answer {
  const refund = fake.refunds.get(id);
  if (!refund || (paymentId !== undefined && refund.paymentId !== paymentId)) {
    return error(400, 'The id provided does not exist');
  }
  return { status: 200, body: refundView(refund) };
}
