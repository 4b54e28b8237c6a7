import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { type LocalServer, serveLocally } from '../local-server.js';
import {
  type Answer,
  bankPage,
  CASHFREE_FAKE_API_VERSION,
  type CashfreeEndpoint,
  type CashfreeFault,
  type CashfreeRefundStatus,
  type CashfreeWebhookTiming,
  error,
  type FakeCashfreeOrder,
  type FakeCashfreePayment,
  type FakeCashfreeRefund,
  orderView,
  PHONE,
  paiseOf,
  paymentView,
  readPaymentMethod,
  refundView,
  rupees,
  type SentCashfreeWebhook,
  webhookOf,
} from './cashfree-fake-model.js';
import { CASHFREE_FAKE_PAYER_VPA, fakeRrn, UPI_DECLINE, upiPayData } from './cashfree-fake-upi.js';

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
 * customer approves or declines in their app (`upiCustomer`).
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
      return { endpoint: 'create', call: 'POST /pg/orders', act: (body) => this.createOrder(body) };
    }
    if (method === 'POST' && path === '/pg/orders/sessions') {
      return { endpoint: 'pay', call: 'POST /pg/orders/sessions', act: (body) => this.pay(body) };
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
        act: (body) => (order ? this.createRefund(order, body) : notFound()),
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

  private createOrder(text: string): Answer {
    let input: Record<string, unknown>;
    try {
      input = JSON.parse(text);
    } catch {
      return error(400, 'request_failed', 'request body is not JSON');
    }
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
    if (this.ordersFor(orderId).length > 0) {
      return error(409, 'order_already_exists', 'order with same id is already present');
    }
    const order: FakeCashfreeOrder = {
      cfOrderId: String(2_149_460_000 + ++this.counter),
      orderId,
      amount,
      currency: 'INR',
      customer,
      returnUrl,
      status: 'ACTIVE',
      sessionId: `session_${randomBytes(24).toString('base64url')}`,
      payments: [],
      createdAt: this.now().toISOString(),
    };
    this.orders.push(order);
    return { status: 200, body: orderView(order) };
  }

  private async pay(text: string): Promise<Answer> {
    let input: Record<string, unknown>;
    try {
      input = JSON.parse(text);
    } catch {
      return error(400, 'request_failed', 'request body is not JSON');
    }
    const order = this.orders.find((o) => o.sessionId === input.payment_session_id);
    if (!order)
      return error(400, 'payment_session_id_invalid', 'payment_session_id is not present or is invalid');
    if (order.status !== 'ACTIVE') return error(400, 'order_inactive', 'order is not active');
    const chosen = readPaymentMethod(input.payment_method, this.disabledBanks);
    if ('status' in chosen) return chosen;
    const payment: FakeCashfreePayment = {
      cfPaymentId: String(5_114_910_000 + ++this.counter),
      amount: order.amount,
      method: chosen,
      status: 'NOT_ATTEMPTED',
      bankReference: null,
      error: null,
      time: this.now().toISOString(),
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
    const page = `${this.origin}/bank/${payment.cfPaymentId}`;
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

  private createRefund(order: FakeCashfreeOrder, text: string): Answer {
    let input: Record<string, unknown>;
    try {
      input = JSON.parse(text);
    } catch {
      return error(400, 'request_failed', 'request body is not JSON');
    }
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
    if (this.refunds.some((refund) => refund.orderId === order.orderId && refund.refundId === refundId)) {
      return error(409, 'refund_already_exists', 'refund with same refund_id is already present');
    }
    const paid = order.payments.find((payment) => payment.status === 'SUCCESS');
    if (!paid) return error(400, 'order_not_paid', 'only a paid order can be refunded');
    const refunded = this.refunds
      .filter(
        (refund) =>
          refund.orderId === order.orderId && refund.status !== 'CANCELLED' && refund.status !== 'FAILED',
      )
      .reduce((sum, refund) => sum + refund.amount, 0);
    if (refunded + amount > paid.amount) {
      return error(400, 'refund_amount_invalid', 'refund_amount is more than what is left to refund');
    }
    const refund: FakeCashfreeRefund = {
      cfRefundId: String(41_805_000 + ++this.counter),
      refundId,
      orderId: order.orderId,
      cfPaymentId: paid.cfPaymentId,
      amount,
      speed,
      status: this.refundOutcome,
      createdAt: this.now().toISOString(),
    };
    this.refunds.push(refund);
    return { status: 200, body: refundView(refund, this.now()) };
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
   * The customer's choice at the bank: `success`, `failure` (declined by the bank), `pending` (the
   * bank has not decided) or `drop` (the customer left). Then the webhook and the browser's return.
   */
  private async decide(
    order: FakeCashfreeOrder,
    payment: FakeCashfreePayment,
    choice: string,
    response: http.ServerResponse,
  ): Promise<void> {
    if (payment.status === 'NOT_ATTEMPTED' || payment.status === 'PENDING') {
      const at = this.now().toISOString();
      if (choice === 'success') {
        payment.status = 'SUCCESS';
        payment.bankReference = `${Date.now() % 1_000_000_000_000}${++this.counter}`;
        payment.completionTime = at;
        order.status = 'PAID';
      } else if (choice === 'failure') {
        payment.status = 'FAILED';
        payment.bankReference = `${Date.now() % 1_000_000_000_000}${++this.counter}`;
        payment.error = {
          error_code: 'TRANSACTION_DECLINED',
          error_description: 'transaction is rejected at the remitter bank end',
          error_reason: 'bank_rejected',
          error_source: 'bank',
        };
        payment.completionTime = at;
      } else if (choice === 'drop') {
        payment.status = 'USER_DROPPED';
        payment.completionTime = at;
      } else if (choice === 'pending') {
        payment.status = 'PENDING';
      } else {
        response
          .writeHead(400, { 'content-type': 'text/plain' })
          .end('choose success, failure, pending or drop');
        return;
      }
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
    const order = this.ordersFor(orderId)[0];
    const payment = order?.payments
      .filter((attempt) => 'upi' in attempt.method && attempt.status === 'NOT_ATTEMPTED')
      .at(-1);
    if (!order || !payment || !('upi' in payment.method))
      throw new Error(`no UPI attempt waits on ${orderId}`);
    const at = this.now().toISOString();
    payment.completionTime = at;
    payment.bankReference = fakeRrn(++this.counter);
    if (action === 'approve') {
      payment.status = 'SUCCESS';
      // The payer: the collect request's VPA, or the VPA the customer's app paid a link from.
      payment.method.upi.upi_id ??= CASHFREE_FAKE_PAYER_VPA;
      order.status = 'PAID';
    } else {
      payment.status = 'FAILED';
      payment.error = { ...UPI_DECLINE };
    }
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
