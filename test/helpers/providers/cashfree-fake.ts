import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { type LocalServer, serveLocally } from '../local-server.js';
import { type CashfreeFakeBook, createOrder, createRefund, startPayment } from './cashfree-fake-api.js';
import { decideAtBank, decideInUpiApp } from './cashfree-fake-customer.js';
import {
  type Answer,
  bankPage,
  CASHFREE_FAKE_API_VERSION,
  type CashfreeEndpoint,
  type CashfreeFault,
  type CashfreeRefundStatus,
  type CashfreeWebhookTiming,
  cashfreeWebhookSignature,
  error,
  type FakeCashfreeOrder,
  type FakeCashfreePayment,
  type FakeCashfreeRefund,
  orderView,
  paymentView,
  refundView,
  type SentCashfreeWebhook,
  webhookOf,
} from './cashfree-fake-model.js';

/**
 * A fake of the Cashfree Payment Gateway (API version 2023-08-01) that runs in the test process, so
 * that the Cashfree connector is proven over real HTTP without any network. It follows Cashfree's
 * public documentation: orders made with the merchant's `order_id` (unique: a second is refused with
 * 409 `order_already_exists`), `x-idempotency-key` answered as the first request was, payments
 * started through `/orders/sessions` (net banking answers a POST form, wallets a GET link), the
 * bank's page, an unsigned return to `return_url?order_id=`, webhooks signed
 * base64(HMAC-SHA256(timestamp + body)) with a millisecond timestamp, and refunds keyed by the
 * merchant's `refund_id`. Tests can make it misbehave the ways real providers do. UPI
 * (`payment_method.upi`: link, qrcode, collect) is in cashfree-fake-upi.ts; its simulated
 * customer approves or declines in their app (`upiCustomer`). The answers to the API's writes are
 * in cashfree-fake-api.ts, the customer's decisions in cashfree-fake-customer.ts.
 *
 * Its bank codes and wallet providers are its own lists (from Cashfree's documentation), not the
 * connector's tables, so a wrong row in those is caught here.
 */

export type {
  CashfreeEndpoint,
  CashfreeFault,
  CashfreePaymentStatus,
  CashfreeRefundStatus,
  CashfreeWebhookTiming,
  FakeCashfreeOrder,
  FakeCashfreePayment,
  FakeCashfreeRefund,
  SentCashfreeWebhook,
} from './cashfree-fake-model.js';
export {
  CASHFREE_DOCUMENTED_APP_PROVIDERS,
  CASHFREE_DOCUMENTED_BANK_CODES,
  CASHFREE_FAKE_API_VERSION,
  cashfreeWebhookSignature,
} from './cashfree-fake-model.js';

export class FakeCashfree {
  readonly orders: FakeCashfreeOrder[] = [];
  readonly refunds: FakeCashfreeRefund[] = [];
  readonly webhooks: SentCashfreeWebhook[] = [];
  /**
   * Calls the API received, by path pattern: `POST /pg/orders`, `GET /pg/orders/:id`,
   * `POST /pg/orders/sessions`, `GET /pg/orders/:id/payments`, `POST /pg/orders/:id/refunds`,
   * `GET /pg/orders/:id/refunds/:rid`.
   */
  readonly calls: string[] = [];
  /** Per endpoint, the fault to answer with (until cleared); it happens after the fake acted. */
  faults: Partial<Record<CashfreeEndpoint, CashfreeFault>> = {};
  /** How long a `timeout` fault holds the answer back before dropping the connection. */
  timeoutMs = 3_000;
  /** When Cashfree sends its webhook, relative to sending the browser back. */
  webhookTiming: CashfreeWebhookTiming = 'after';
  /** Where webhooks go; none are sent without it. */
  webhookUrl: string | undefined;
  /** What a new refund is answered with. */
  refundOutcome: 'SUCCESS' | 'PENDING' | 'CANCELLED' = 'PENDING';
  /** Whether a repeated `x-idempotency-key` gets the first answer again (Cashfree's documented way). */
  replayIdempotencyKeys = true;
  /**
   * The answer to a refund whose `refund_id` the order already has (and whose idempotency key is
   * not replayed). Cashfree does not document it: 409 `refund_already_exists` is assumed, and a
   * test can make it a plain 400 refusal to check that the connector does not trust either.
   */
  duplicateRefundAnswer: { status: number; code: string } = { status: 409, code: 'refund_already_exists' };
  /** An offer configured in the merchant's Cashfree account: each attempt takes this much less. */
  offerPaise = 0;
  /** Bank codes the merchant's account has not enabled: starting a payment there is refused. */
  readonly disabledBanks = new Set<number>();
  /** The fake's clock (webhook timestamps, payment times). */
  now: () => Date = () => new Date();
  private readonly replies = new Map<string, Answer>();
  /** Webhooks held until the order's next status poll is answered (`after` the poll, for UPI). */
  private readonly afterPoll = new Map<string, () => Promise<void>>();
  private server!: LocalServer;
  private counter = 0;

  constructor(
    readonly clientId: string,
    readonly clientSecret: string,
  ) {}

  static async start(
    clientId = `cf_app_${randomBytes(8).toString('hex')}`,
    clientSecret = `cfsk_${randomBytes(16).toString('hex')}`,
  ): Promise<FakeCashfree> {
    const fake = new FakeCashfree(clientId, clientSecret);
    fake.server = await serveLocally((request, response) => fake.handle(request, response));
    return fake;
  }

  /** The origin of the fake (its bank pages live here). */
  get origin(): string {
    return this.server.origin;
  }

  /** The API's base URL, with its `/pg`, as the connector takes it. */
  get url(): string {
    return `${this.origin}/pg`;
  }

  async close(): Promise<void> {
    await this.server.close();
  }

  /** Orders made for a Kosh payment (its `order_id`): a retried start must never make a second. */
  ordersFor(orderId: string): FakeCashfreeOrder[] {
    return this.orders.filter((order) => order.orderId === orderId);
  }

  /** Refunds made for a Kosh refund (its `refund_id`): a resent request must never make a second. */
  refundsFor(refundId: string): FakeCashfreeRefund[] {
    return this.refunds.filter((refund) => refund.refundId === refundId);
  }

  /** Settles every refund still pending (or on hold) the way the bank would, later. */
  settleRefunds(status: CashfreeRefundStatus): void {
    for (const refund of this.refunds) {
      if (refund.status === 'PENDING' || refund.status === 'ONHOLD') refund.status = status;
    }
  }

  /** The fake as its API answers and its simulated customer see it. */
  private get book(): CashfreeFakeBook {
    return {
      orders: this.orders,
      refunds: this.refunds,
      disabledBanks: this.disabledBanks,
      refundOutcome: this.refundOutcome,
      duplicateRefundAnswer: this.duplicateRefundAnswer,
      offerPaise: this.offerPaise,
      orderFor: (orderId) => this.ordersFor(orderId)[0],
      origin: this.origin,
      now: () => this.now(),
      next: () => ++this.counter,
    };
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.origin);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const send = (answer: Answer) =>
      response
        .writeHead(answer.status, { 'content-type': 'application/json' })
        .end(JSON.stringify(answer.body));

    if (url.pathname.startsWith('/pg/')) {
      const route = this.route(request.method ?? 'GET', url.pathname);
      if (!route) {
        send(error(404, 'request_failed', 'bad URL, please check API documentation'));
        return;
      }
      this.calls.push(route.call);
      if (request.headers['x-api-version'] !== CASHFREE_FAKE_API_VERSION) {
        send(error(400, 'version_invalid', 'x-api-version is missing or not supported'));
        return;
      }
      // `/orders/sessions` is authorised by its payment_session_id (Cashfree documents no keys there).
      if (
        route.endpoint !== 'pay' &&
        (request.headers['x-client-id'] !== this.clientId ||
          request.headers['x-client-secret'] !== this.clientSecret)
      ) {
        send(error(401, 'request_failed', 'authentication Failed', 'authentication_error'));
        return;
      }
      const key = request.headers['x-idempotency-key'];
      const replayKey =
        typeof key === 'string' && request.method === 'POST' ? `${route.endpoint}:${key}` : undefined;
      const replay = replayKey && this.replayIdempotencyKeys ? this.replies.get(replayKey) : undefined;
      const answer = replay ?? (await route.act(body));
      if (replayKey && !replay) this.replies.set(replayKey, answer);
      // A fault happens after the fake acted: the order, payment or refund exists, the answer is lost.
      const fault = this.faults[route.endpoint];
      if (fault)
        return this.server.misbehave(fault, response, {
          timeoutMs: this.timeoutMs,
          garbage: '{"cf_order_id": "21494", "order_status": ',
        });
      send(answer);
      await route.after?.();
      return;
    }

    const bank = /^\/bank\/([0-9]+)(\/decide)?$/.exec(url.pathname);
    const found = bank ? this.findPayment(bank[1] as string) : undefined;
    if (!bank || !found || 'upi' in found.payment.method) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if (!bank[2]) {
      // Net banking arrives by the POST form Cashfree described, wallets by its GET link.
      response
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(bankPage(found.order, found.payment));
      return;
    }
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    await this.decide(found.order, found.payment, new URLSearchParams(body).get('choice') ?? '', response);
  }

  private route(
    method: string,
    path: string,
  ):
    | {
        endpoint: CashfreeEndpoint;
        call: string;
        act: (body: string) => Answer | Promise<Answer>;
        /** What the fake does once the answer is sent. */
        after?: () => Promise<void>;
      }
    | undefined {
    if (method === 'POST' && path === '/pg/orders') {
      return { endpoint: 'create', call: 'POST /pg/orders', act: (body) => createOrder(this.book, body) };
    }
    if (method === 'POST' && path === '/pg/orders/sessions') {
      return {
        endpoint: 'pay',
        call: 'POST /pg/orders/sessions',
        act: (body) => startPayment(this.book, body),
      };
    }
    const match = /^\/pg\/orders\/([^/]+)(?:\/(payments|refunds)(?:\/([^/]+))?)?$/.exec(path);
    if (!match) return undefined;
    const orderId = decodeURIComponent(match[1] as string);
    const order = this.ordersFor(orderId)[0];
    const notFound = () => error(404, 'order_not_found', 'order does not exist');
    if (method === 'GET' && !match[2]) {
      return {
        endpoint: 'status',
        call: 'GET /pg/orders/:id',
        act: () => (order ? { status: 200, body: orderView(order) } : notFound()),
      };
    }
    if (method === 'GET' && match[2] === 'payments' && !match[3]) {
      return {
        endpoint: 'status',
        call: 'GET /pg/orders/:id/payments',
        act: () =>
          order
            ? { status: 200, body: order.payments.map((payment) => paymentView(order, payment)) }
            : notFound(),
        after: async () => {
          const held = this.afterPoll.get(orderId);
          this.afterPoll.delete(orderId);
          await held?.();
        },
      };
    }
    if (method === 'POST' && match[2] === 'refunds' && !match[3]) {
      return {
        endpoint: 'refund',
        call: 'POST /pg/orders/:id/refunds',
        act: (body) => (order ? createRefund(this.book, order, body) : notFound()),
      };
    }
    if (method === 'GET' && match[2] === 'refunds' && match[3]) {
      const refundId = decodeURIComponent(match[3]);
      return {
        endpoint: 'refundStatus',
        call: 'GET /pg/orders/:id/refunds/:rid',
        act: () => {
          const refund = this.refunds.find((r) => r.orderId === orderId && r.refundId === refundId);
          return refund
            ? { status: 200, body: refundView(refund, this.now()) }
            : error(404, 'refund_not_found', 'refund does not exist');
        },
      };
    }
    return undefined;
  }

  private findPayment(
    cfPaymentId: string,
  ): { order: FakeCashfreeOrder; payment: FakeCashfreePayment } | undefined {
    for (const order of this.orders) {
      const payment = order.payments.find((p) => p.cfPaymentId === cfPaymentId);
      if (payment) return { order, payment };
    }
    return undefined;
  }

  /**
   * The customer's choice at the bank (cashfree-fake-customer.ts), then the webhook and the
   * browser's return.
   */
  private async decide(
    order: FakeCashfreeOrder,
    payment: FakeCashfreePayment,
    choice: string,
    response: http.ServerResponse,
  ): Promise<void> {
    if (!decideAtBank(this.book, order, payment, choice)) {
      response
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('choose success, failure, pending or drop');
      return;
    }
    // Cashfree sends webhooks for success, failure and a dropped payment; none for a pending one.
    const final = payment.status !== 'PENDING';
    if (final && (this.webhookTiming === 'before' || this.webhookTiming === 'instead'))
      await this.sendWebhook(order);
    if (this.webhookTiming === 'instead') {
      response
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end('<p>Payment done. You can close this window.</p>');
      return;
    }
    // The return is unsigned: the order id appended to the merchant's return_url, nothing more.
    const back = new URL(order.returnUrl);
    back.searchParams.set('order_id', order.orderId);
    response.writeHead(302, { location: back.toString() }).end();
    if (final && this.webhookTiming === 'after') {
      // Where webhooks went when the customer decided (a test may point them elsewhere meanwhile).
      const url = this.webhookUrl;
      setTimeout(() => void this.sendWebhook(order, { url }), 300);
    }
  }

  /** The webhook Cashfree sends for the order's latest attempt, signed as documented (or as told). */
  buildWebhook(
    order: FakeCashfreeOrder,
    options: { signature?: string; timestamp?: number } = {},
  ): { headers: Record<string, string>; body: string } {
    return webhookOf(order, { ...options, secret: this.clientSecret, now: this.now() });
  }

  /** Sends the webhook of the refund made for this Kosh refund (its `refund_id`), as it stands now. */
  async sendRefundWebhook(refundId: string): Promise<number | undefined> {
    const [refund] = this.refundsFor(refundId);
    if (!this.webhookUrl || !refund) return undefined;
    const body = JSON.stringify({
      data: { refund: refundView(refund, this.now()) },
      event_time: this.now().toISOString(),
      type: 'REFUND_STATUS_WEBHOOK',
    });
    const timestamp = String(this.now().getTime());
    const response = await fetch(this.webhookUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-webhook-timestamp': timestamp,
        'x-webhook-signature': cashfreeWebhookSignature(this.clientSecret, timestamp, body),
      },
      body,
    });
    return response.status;
  }

  /** Sends the order's webhook now to `webhookUrl` (or `url`); returns the receiver's status code. */
  async sendWebhook(
    order: FakeCashfreeOrder,
    options: { signature?: string; timestamp?: number; url?: string } = {},
  ): Promise<number | undefined> {
    const url = 'url' in options ? options.url : this.webhookUrl;
    if (!url) return undefined;
    const { headers, body } = this.buildWebhook(order, options);
    let status: number | undefined;
    try {
      status = (await fetch(url, { method: 'POST', headers, body })).status;
    } catch {
      status = undefined;
    }
    this.webhooks.push({ headers, body, status });
    return status;
  }

  /**
   * The simulated customer in a UPI app approves (pays) or declines the order's latest UPI attempt
   * still waiting; then Cashfree's webhook, by `webhookTiming`: `before` and `instead` now, `after`
   * once the order's next status poll is answered (the promise settles then), `none` never.
   */
  async upiCustomer(orderId: string, action: 'approve' | 'decline'): Promise<void> {
    const order = decideInUpiApp(this.book, orderId, action);
    // Where webhooks go when the customer decided (a test may point them elsewhere meanwhile).
    const url = this.webhookUrl;
    if (this.webhookTiming === 'before' || this.webhookTiming === 'instead') {
      await this.sendWebhook(order, { url });
    } else if (this.webhookTiming === 'after') {
      await new Promise<void>((resolve) => {
        this.afterPoll.set(orderId, async () => {
          await this.sendWebhook(order, { url });
          resolve();
        });
      });
    }
  }
}
