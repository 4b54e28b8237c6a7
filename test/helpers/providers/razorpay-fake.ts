import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { type LocalServer, serveLocally } from '../local-server.js';
import { apiRoute } from './razorpay-fake-api.js';
import { type Answer, error, hmac, newId } from './razorpay-fake-common.js';
import {
  bankPage,
  type FakeRazorpayBrowser,
  type FakeRazorpayOrder,
  type FakeRazorpayPayment,
  type FakeRazorpayRefund,
  markRefunded,
  paymentView,
  type RazorpayEndpoint,
  type RazorpayFault,
  type RazorpayWebhookTiming,
  refundView,
  returnPage,
  type SentRazorpayWebhook,
} from './razorpay-fake-model.js';

/**
 * A local Razorpay, shaped after its public API reference, so the Razorpay connector is tested
 * over real HTTP without any network: Basic authentication, orders (receipts are not unique, as
 * at Razorpay), the S2S JSON payment create with the customer's browser details, a bank page, the
 * signed return POST (or the error fields), signed webhooks with an event id, the fetch APIs, and
 * refunds made idempotent by `X-Refund-Idempotency`. Tests can make it misbehave the ways a
 * provider does; a fault happens after the fake acted, so the object exists and only the answer
 * is lost. Its signatures are computed here, never borrowed from the connector.
 *
 * Its records and JSON views are in razorpay-fake-model.ts, its API endpoints in
 * razorpay-fake-api.ts, its S2S UPI create in razorpay-fake-upi.ts.
 */

export type {
  FakeRazorpayBrowser,
  FakeRazorpayOrder,
  FakeRazorpayPayment,
  FakeRazorpayRefund,
  RazorpayEndpoint,
  RazorpayFault,
  RazorpayWebhookTiming,
  SentRazorpayWebhook,
} from './razorpay-fake-model.js';

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
  /** An offer configured in the merchant's Razorpay account: each attempt takes this much less. */
  offerPaise = 0;
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
  /** Refunds by their `X-Refund-Idempotency` key, with the body that made them. */
  readonly idempotency = new Map<string, { body: string; refundId: string }>();
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
    for (const payment of this.payments.values()) markRefunded(this.refunds, payment);
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
      payload: { payment: { entity: paymentView(payment, this.refunds) } },
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

  /** Sends the webhook of the refund made for this Kosh refund (its receipt), as it stands now. */
  async sendRefundWebhook(receipt: string): Promise<number | undefined> {
    const [refund] = this.refundsFor(receipt);
    const payment = refund ? this.payments.get(refund.paymentId) : undefined;
    if (!this.webhookUrl || !refund || !payment) return undefined;
    const body = JSON.stringify({
      entity: 'event',
      account_id: 'acc_FakeRazorpay01',
      event: `refund.${refund.status}`,
      contains: ['refund', 'payment'],
      payload: {
        refund: { entity: refundView(refund) },
        payment: { entity: paymentView(payment, this.refunds) },
      },
      created_at: Math.floor(Date.now() / 1000),
    });
    const response = await fetch(this.webhookUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-razorpay-signature': this.webhookSignature(body),
        'x-razorpay-event-id': newId('evt'),
      },
      body,
    });
    await response.arrayBuffer();
    return response.status;
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
      const route = apiRoute(this, request.method ?? 'GET', url, body, request.headers);
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
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(bankPage(payment));
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
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(returnPage(payment, this.returnFields(payment)));
    if (this.webhookTiming === 'after') {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        void this.sendWebhook(payment);
      }, 300);
      this.timers.add(timer);
    }
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
}
