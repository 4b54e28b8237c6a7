import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { escapeHtml } from '../../../src/modules/payments/html.js';
import { type LocalServer, type ProviderFault, serveLocally } from '../local-server.js';
import {
  type Answer,
  error,
  extraField,
  hmac,
  isObject,
  newId,
  notesOf,
  parseBody,
} from './razorpay-fake-common.js';
import { createUpiPayment, type FakeRazorpayUpi } from './razorpay-fake-upi.js';

/**
 * A local Razorpay, shaped after its public API reference, so the Razorpay connector is tested
 * over real HTTP without any network: Basic authentication, orders (receipts are not unique, as
 * at Razorpay), the S2S JSON payment create with the customer's browser details, a bank page, the
 * signed return POST (or the error fields), signed webhooks with an event id, the fetch APIs, and
 * refunds made idempotent by `X-Refund-Idempotency`. Tests can make it misbehave the ways a
 * provider does; a fault happens after the fake acted, so the object exists and only the answer
 * is lost. Its signatures are computed here, never borrowed from the connector.
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
const BANKS = new Set([
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
const WALLETS = new Set([
  'airtelmoney',
  'amazonpay',
  'jiomoney',
  'mobikwik',
  'olamoney',
  'payzapp',
  'paypal',
  'phonepe',
]);

const ORDER_FIELDS = new Set(['amount', 'currency', 'receipt', 'notes', 'partial_payment', 'payment']);
const PAY_FIELDS = new Set([
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
const REFUND_FIELDS = new Set(['amount', 'speed', 'receipt', 'notes']);

export class FakeRazorpay {
  readonly orders = new Map<string, FakeRazorpayOrder>();
  readonly payments = new Map<string, FakeRazorpayPayment>();
  readonly refunds = new Map<string, FakeRazorpayRefund>();
  readonly webhooks: SentRazorpayWebhook[] = [];
  /** Calls the API received, by path pattern: `POST /v1/orders`, `GET /v1/payments/:id`, … */
  readonly calls: string[] = [];
  /** Per endpoint, the fault to answer with (until cleared); the fake acts first. */
  faults: Partial<Record<RazorpayEndpoint, RazorpayFault>> = {};
  /** How long a `timeout` fault holds the answer back. */
  timeoutMs = 3_000;
  /** When the webhook goes, relative to sending the browser back. */
  webhookTiming: RazorpayWebhookTiming = 'after';
  /** Where webhooks go. */
  webhookUrl: string | undefined;
  /** What a new refund is: still pending, or already final. */
  refundOutcome: FakeRazorpayRefund['status'] = 'processed';
  /** Whether an authorised payment is captured at once (the order's automatic capture). */
  autoCapture = true;
  /** The `error_reason` a Failure on the bank page gives. */
  declineReason = 'payment_failed';
  /** Banks the merchant's account has not enabled: the payment create refuses them. */
  readonly disabledBanks = new Set<string>();
  /** The status of an answer to a request with wrong credentials (Razorpay documents 401 and 400). */
  authFailureStatus: 400 | 401 = 401;
  /** The customer's browser as the last payment create gave it. */
  lastBrowser: FakeRazorpayBrowser | undefined;
  /** The body of the last S2S UPI create, as sent. */
  lastUpiRequest: Record<string, unknown> | undefined;
  /** Razorpay's VPA for the merchant: the payee of the fake's intent links (no real PSP's handle). */
  upiPayeeVpa = 'kosh.merchant@fakerzp';
  /** The VPA that pays an approved intent or QR attempt (a collect is paid by the VPA it went to). */
  upiPayerVpa = 'asha.rao@fakebank';
  /** The `error_reason` of a UPI attempt the customer declined in the app. */
  upiDeclineReason = 'payment_cancelled';
  /** Attempts whose webhook goes once the next question about a payment has been answered. */
  private readonly afterQuestion = new Set<FakeRazorpayPayment>();
  /** Webhooks on their way (see `webhooksDelivered`). */
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly idempotency = new Map<string, { body: string; refundId: string }>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private server!: LocalServer;
  private counter = 0;

  constructor(
    readonly keyId: string,
    readonly keySecret: string,
    readonly webhookSecret: string,
  ) {}

  static async start(
    keyId = `rzp_test_${randomBytes(7).toString('hex')}`,
    keySecret = randomBytes(12).toString('hex'),
    webhookSecret = `whsec_${randomBytes(12).toString('hex')}`,
  ): Promise<FakeRazorpay> {
    const fake = new FakeRazorpay(keyId, keySecret, webhookSecret);
    fake.server = await serveLocally((request, response) => fake.handle(request, response));
    return fake;
  }

  /** The host base, as the connector takes it (`https://api.razorpay.com` in production). */
  get url(): string {
    return this.server.origin;
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    await this.server.close();
  }

  /** Orders made with this receipt (Kosh's payment id): a retried start must never make a second. */
  ordersFor(receipt: string): FakeRazorpayOrder[] {
    return [...this.orders.values()].filter((order) => order.receipt === receipt);
  }

  /** The payment attempts on an order. */
  paymentsFor(orderId: string): FakeRazorpayPayment[] {
    return [...this.payments.values()].filter((payment) => payment.orderId === orderId);
  }

  /** Refunds made for a Kosh refund (the receipt): a resent request must never make a second. */
  refundsFor(receipt: string): FakeRazorpayRefund[] {
    return [...this.refunds.values()].filter((refund) => refund.receipt === receipt);
  }

  /** Settles every pending refund the way the bank would, later. */
  settleRefunds(status: 'processed' | 'failed'): void {
    for (const refund of this.refunds.values()) if (refund.status === 'pending') refund.status = status;
    for (const payment of this.payments.values()) this.markRefunded(payment);
  }

  /**
   * What the bank page's decision does, without a browser (`success`, `failure`, `cancel`), or the
   * UPI app's (`success`, `upi_decline`).
   */
  decide(payment: FakeRazorpayPayment, choice: string): void {
    if (payment.status !== 'created') return;
    const order = this.orders.get(payment.orderId);
    if (choice === 'success') {
      payment.status = 'authorized';
      // A UPI RRN has 12 digits.
      payment.bankTransactionId = `${++this.counter}`.padStart(payment.upi ? 12 : 10, '0');
      if (payment.upi) payment.vpa = payment.upi.requestedVpa ?? this.upiPayerVpa;
      if (this.autoCapture) {
        payment.status = 'captured';
        payment.captured = true;
        if (order) order.status = 'paid';
      }
      return;
    }
    const cancelled = choice === 'cancel';
    payment.status = 'failed';
    if (choice === 'upi_decline') {
      payment.error = {
        code: 'BAD_REQUEST_ERROR',
        description: 'The customer declined the payment in the UPI app.',
        source: 'customer',
        step: 'payment_authentication',
        reason: this.upiDeclineReason,
      };
      return;
    }
    payment.error = {
      code: 'BAD_REQUEST_ERROR',
      description: cancelled ? 'Payment processing cancelled by user' : 'Payment failed',
      source: cancelled ? 'customer' : 'bank',
      step: cancelled ? 'payment_authentication' : 'payment_authorization',
      reason: cancelled ? 'payment_cancelled' : this.declineReason,
    };
  }

  /** The payment's webhook event, as Razorpay sends it. */
  webhookBody(payment: FakeRazorpayPayment, event = this.eventFor(payment)): string {
    return JSON.stringify({
      entity: 'event',
      account_id: 'acc_FakeRazorpay01',
      event,
      contains: ['payment'],
      payload: { payment: { entity: this.paymentView(payment) } },
      created_at: Math.floor(Date.now() / 1000),
    });
  }

  /** The webhook signature: HMAC-SHA256 hex of the raw body with the webhook secret. */
  webhookSignature(body: string): string {
    return hmac(this.webhookSecret, body);
  }

  /** The return's signature: HMAC-SHA256 hex of `order_id|payment_id` with the key secret. */
  returnSignature(orderId: string, paymentId: string): string {
    return hmac(this.keySecret, `${orderId}|${paymentId}`);
  }

  /** Sends this payment's webhook now; returns the receiver's status code. */
  async sendWebhook(
    payment: FakeRazorpayPayment,
    options: { signature?: string; eventId?: string; event?: string } = {},
  ): Promise<number | undefined> {
    if (!this.webhookUrl) return undefined;
    const event = options.event ?? this.eventFor(payment);
    const body = this.webhookBody(payment, event);
    const eventId = options.eventId ?? newId('evt');
    let status: number | undefined;
    try {
      const response = await fetch(this.webhookUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-razorpay-signature': options.signature ?? this.webhookSignature(body),
          'x-razorpay-event-id': eventId,
        },
        body,
      });
      await response.arrayBuffer();
      status = response.status;
    } catch {
      status = undefined;
    }
    this.webhooks.push({ event, eventId, body, status });
    return status;
  }

  /** Sends this attempt's webhook once the next question Kosh asks has been answered. */
  sendAfterNextQuestion(payment: FakeRazorpayPayment): void {
    this.afterQuestion.add(payment);
  }

  /** Resolves once every webhook on its way has been answered by its receiver. */
  async webhooksDelivered(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private sendLater(payment: FakeRazorpayPayment): void {
    const sending = this.sendWebhook(payment).finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  private eventFor(payment: FakeRazorpayPayment): string {
    return payment.status === 'failed'
      ? 'payment.failed'
      : payment.status === 'authorized'
        ? 'payment.authorized'
        : 'payment.captured';
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.url);
    const body = await new Promise<string>((resolve) => {
      let text = '';
      request.setEncoding('utf8');
      request.on('data', (chunk) => {
        text += chunk;
      });
      request.on('end', () => resolve(text));
    });
    const send = (answer: Answer) =>
      response
        .writeHead(answer.status, { 'content-type': 'application/json' })
        .end(JSON.stringify(answer.body));

    if (url.pathname.startsWith('/v1/')) {
      if (
        request.headers.authorization !==
        `Basic ${Buffer.from(`${this.keyId}:${this.keySecret}`).toString('base64')}`
      ) {
        send(
          error(this.authFailureStatus, 'Authentication failed', { reason: 'NA', source: 'NA', step: 'NA' }),
        );
        return;
      }
      const route = this.route(request.method ?? 'GET', url, body, request.headers);
      if (!route) {
        send(error(400, 'The requested URL was not found on the server.', { reason: 'NA' }));
        return;
      }
      this.calls.push(route.call);
      const answer = route.act();
      const fault = this.faults[route.endpoint];
      if (fault)
        return this.server.misbehave(fault, response, {
          timeoutMs: this.timeoutMs,
          garbage: '{"id": "pay_1", "status": ',
        });
      send(answer);
      if (route.endpoint === 'status') {
        for (const payment of this.afterQuestion) this.sendLater(payment);
        this.afterQuestion.clear();
      }
      return;
    }

    const bank = /^\/bank\/(pay_[A-Za-z0-9]+)(\/decide)?$/.exec(url.pathname);
    const payment = bank ? this.payments.get(bank[1] as string) : undefined;
    if (!bank || !payment) {
      response.writeHead(404).end('not found');
      return;
    }
    if (!bank[2]) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(this.bankPage(payment));
      return;
    }
    this.decide(payment, new URLSearchParams(body).get('choice') ?? 'failure');
    if (this.webhookTiming === 'before' || this.webhookTiming === 'instead') await this.sendWebhook(payment);
    if (this.webhookTiming === 'instead') {
      response
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<p>Payment done. You can close this window.</p>');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(this.returnPage(payment));
    if (this.webhookTiming === 'after') {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        void this.sendWebhook(payment);
      }, 300);
      this.timers.add(timer);
    }
  }

  private route(
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
        return { endpoint: 'order', call: 'POST /v1/orders', act: () => this.createOrder(body) };
      if (path === '/v1/payments/create/upi') {
        return {
          endpoint: 'pay',
          call: 'POST /v1/payments/create/upi',
          act: () => createUpiPayment(this, body),
        };
      }
      if (path === '/v1/payments/create/json') {
        return {
          endpoint: 'pay',
          call: 'POST /v1/payments/create/json',
          act: () => this.createPayment(body),
        };
      }
      if (collection === 'payments' && id && sub === 'refund' && parts.length === 3) {
        const key = headers['x-refund-idempotency'];
        return {
          endpoint: 'refund',
          call: 'POST /v1/payments/:id/refund',
          act: () => this.createRefund(id, body, typeof key === 'string' ? key : undefined),
        };
      }
      return undefined;
    }
    if (method !== 'GET') return undefined;
    if (collection === 'orders') {
      if (parts.length === 1)
        return { endpoint: 'status', call: 'GET /v1/orders', act: () => this.listOrders(url) };
      if (parts.length === 2 && id) {
        return { endpoint: 'status', call: 'GET /v1/orders/:id', act: () => this.fetchOrder(id) };
      }
      if (parts.length === 3 && id && sub === 'payments') {
        return { endpoint: 'status', call: 'GET /v1/orders/:id/payments', act: () => this.orderPayments(id) };
      }
    }
    if (collection === 'payments' && id) {
      if (parts.length === 2)
        return { endpoint: 'status', call: 'GET /v1/payments/:id', act: () => this.fetchPayment(id) };
      if (parts.length === 3 && sub === 'refunds') {
        return {
          endpoint: 'refundStatus',
          call: 'GET /v1/payments/:id/refunds',
          act: () => this.paymentRefunds(id),
        };
      }
      if (parts.length === 4 && sub === 'refunds' && subId) {
        return {
          endpoint: 'refundStatus',
          call: 'GET /v1/payments/:id/refunds/:id',
          act: () => this.fetchRefund(subId, id),
        };
      }
    }
    if (collection === 'refunds' && id && parts.length === 2) {
      return { endpoint: 'refundStatus', call: 'GET /v1/refunds/:id', act: () => this.fetchRefund(id) };
    }
    return undefined;
  }

  private createOrder(body: string): Answer {
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
      const problem = this.captureProblem(capture);
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
    this.orders.set(order.id, order);
    return { status: 200, body: this.orderView(order) };
  }

  private captureProblem(capture: unknown): string | undefined {
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
    if (
      typeof manual !== 'number' ||
      manual > 7200 ||
      (typeof automatic === 'number' && manual < automatic)
    ) {
      return 'manual_expiry_period must be between automatic_expiry_period and 7200 minutes';
    }
    if (options.refund_speed !== 'normal' && options.refund_speed !== 'optimum')
      return 'refund_speed is invalid';
    return undefined;
  }

  /**
   * The order a payment attempt (net banking, wallet or UPI) goes on, as Razorpay checks it: an
   * integer amount, an order that exists, is not paid, and has the same amount and currency.
   */
  orderForAttempt(input: Record<string, unknown>): { order: FakeRazorpayOrder; amount: number } | Answer {
    const amount = input.amount;
    if (typeof amount !== 'number' || !Number.isInteger(amount)) {
      return error(400, 'The amount must be an integer.', { field: 'amount' });
    }
    const order = this.orders.get(input.order_id as string);
    if (!order)
      return error(400, 'The id provided does not exist', { field: 'order_id', reason: 'invalid_order_id' });
    if (order.status === 'paid') {
      return error(400, 'Order has already been paid', { field: 'order_id', reason: 'order_already_paid' });
    }
    if (amount !== order.amount || input.currency !== order.currency) {
      return error(400, 'The amount does not match the order amount', {
        field: 'amount',
        reason: 'order_amount_mismatch',
      });
    }
    return { order, amount };
  }

  private createPayment(body: string): Answer {
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
    const checked = this.orderForAttempt(input);
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
    if (typeof bank === 'string' && this.disabledBanks.has(bank)) {
      return error(400, 'The bank is not enabled for the merchant', {
        field: 'bank',
        reason: 'bank_not_enabled',
      });
    }
    const notes = notesOf(input.notes);
    if (!notes) return error(400, 'The notes must be at most 15 short string values.', { field: 'notes' });
    this.lastBrowser = {
      ip: input.ip as string,
      user_agent: input.user_agent as string,
      referer: typeof input.referer === 'string' ? input.referer : null,
    };
    const payment: FakeRazorpayPayment = {
      id: newId('pay'),
      orderId: order.id,
      amount,
      currency: order.currency,
      method,
      bank: typeof bank === 'string' ? bank : null,
      wallet: typeof wallet === 'string' ? wallet : null,
      upi: null,
      vpa: null,
      email: input.email as string,
      contact: input.contact as string,
      description: typeof input.description === 'string' ? input.description : null,
      notes,
      callbackUrl: input.callback_url as string,
      status: 'created',
      captured: false,
      error: null,
      bankTransactionId: null,
      createdAt: Math.floor(Date.now() / 1000),
    };
    this.payments.set(payment.id, payment);
    order.attempts += 1;
    order.status = 'attempted';
    return {
      status: 200,
      body: {
        razorpay_payment_id: payment.id,
        next: [{ action: 'redirect', url: `${this.url}/bank/${payment.id}` }],
      },
    };
  }

  private listOrders(url: URL): Answer {
    const receipt = url.searchParams.get('receipt');
    const items = [...this.orders.values()]
      .filter((order) => receipt === null || order.receipt === receipt)
      .reverse()
      .slice(0, Number(url.searchParams.get('count') ?? 10));
    return {
      status: 200,
      body: { entity: 'collection', count: items.length, items: items.map((o) => this.orderView(o)) },
    };
  }

  private fetchOrder(id: string): Answer {
    const order = this.orders.get(id);
    return order
      ? { status: 200, body: this.orderView(order) }
      : error(400, 'The id provided does not exist');
  }

  private orderPayments(id: string): Answer {
    if (!this.orders.has(id)) return error(400, 'The id provided does not exist');
    const items = this.paymentsFor(id).map((payment) => this.paymentView(payment));
    return { status: 200, body: { entity: 'collection', count: items.length, items } };
  }

  private fetchPayment(id: string): Answer {
    const payment = this.payments.get(id);
    return payment
      ? { status: 200, body: this.paymentView(payment) }
      : error(400, 'The id provided does not exist');
  }

  private createRefund(paymentId: string, body: string, key: string | undefined): Answer {
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
      const seen = this.idempotency.get(key);
      if (seen) {
        if (seen.body !== body) {
          return error(409, 'Different request with the same idempotency key has already been processed.', {
            reason: 'NA',
            source: 'NA',
            step: 'NA',
          });
        }
        const refund = this.refunds.get(seen.refundId);
        if (refund) return { status: 200, body: this.refundView(refund) };
      }
    }
    const parsed = parseBody(body);
    if ('refused' in parsed) return parsed.refused;
    const input = parsed.input;
    const extra = extraField(input, REFUND_FIELDS);
    if (extra) return error(400, `${extra} is/are not required and should not be sent`, { field: extra });
    const payment = this.payments.get(paymentId);
    if (!payment) return error(400, 'The id provided does not exist');
    if (!payment.captured)
      return error(400, 'Only captured payments can be refunded', { reason: 'input_validation_failed' });
    const refunded = this.refundedAmount(payment);
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
      status: this.refundOutcome,
      createdAt: Math.floor(Date.now() / 1000),
    };
    this.refunds.set(refund.id, refund);
    if (key !== undefined) this.idempotency.set(key, { body, refundId: refund.id });
    this.markRefunded(payment);
    return { status: 200, body: this.refundView(refund) };
  }

  private paymentRefunds(paymentId: string): Answer {
    if (!this.payments.has(paymentId)) return error(400, 'The id provided does not exist');
    const items = [...this.refunds.values()]
      .filter((refund) => refund.paymentId === paymentId)
      .map((refund) => this.refundView(refund));
    return { status: 200, body: { entity: 'collection', count: items.length, items } };
  }

  private fetchRefund(id: string, paymentId?: string): Answer {
    const refund = this.refunds.get(id);
    if (!refund || (paymentId !== undefined && refund.paymentId !== paymentId)) {
      return error(400, 'The id provided does not exist');
    }
    return { status: 200, body: this.refundView(refund) };
  }

  private refundedAmount(payment: FakeRazorpayPayment): number {
    return [...this.refunds.values()]
      .filter((refund) => refund.paymentId === payment.id && refund.status !== 'failed')
      .reduce((sum, refund) => sum + refund.amount, 0);
  }

  private markRefunded(payment: FakeRazorpayPayment): void {
    if (!payment.captured) return;
    payment.status = this.refundedAmount(payment) >= payment.amount ? 'refunded' : 'captured';
  }

  private orderView(order: FakeRazorpayOrder) {
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

  private paymentView(payment: FakeRazorpayPayment) {
    const refunded = this.refundedAmount(payment);
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

  private refundView(refund: FakeRazorpayRefund) {
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

  private bankPage(payment: FakeRazorpayPayment): string {
    const instrument = payment.bank ?? payment.wallet ?? '';
    return `<!DOCTYPE html><html><head><title>Razorpay (fake) bank</title></head><body>
<h1>${escapeHtml(instrument)}</h1><p id="amount">${payment.amount} ${escapeHtml(payment.currency)}</p>
<form method="POST" action="/bank/${payment.id}/decide">
<button type="submit" name="choice" value="success">Success</button>
<button type="submit" name="choice" value="failure">Failure</button>
<button type="submit" name="choice" value="cancel">Cancel</button>
</form></body></html>`;
  }

  /** The fields the browser carries back to `callback_url`, as Razorpay posts them. */
  returnFields(payment: FakeRazorpayPayment): Record<string, string> {
    if (payment.status === 'authorized' || payment.status === 'captured') {
      return {
        razorpay_payment_id: payment.id,
        razorpay_order_id: payment.orderId,
        razorpay_signature: this.returnSignature(payment.orderId, payment.id),
      };
    }
    const failure = payment.error ?? {
      code: 'BAD_REQUEST_ERROR',
      description: 'Payment failed',
      source: 'bank',
      step: 'payment_authorization',
      reason: 'payment_failed',
    };
    return {
      'error[code]': failure.code,
      'error[description]': failure.description,
      'error[source]': failure.source,
      'error[step]': failure.step,
      'error[reason]': failure.reason,
      'error[metadata]': JSON.stringify({ payment_id: payment.id, order_id: payment.orderId }),
    };
  }

  /** Sends the browser back to the merchant's server by an auto-submitting POST. */
  private returnPage(payment: FakeRazorpayPayment): string {
    const inputs = Object.entries(this.returnFields(payment))
      .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
      .join('');
    return `<!DOCTYPE html><html><body><form id="back" method="POST" action="${escapeHtml(payment.callbackUrl)}">${inputs}</form>
<script>document.getElementById('back').submit();</script></body></html>`;
  }
}
