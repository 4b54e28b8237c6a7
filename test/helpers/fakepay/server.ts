import { createHmac, randomBytes } from 'node:crypto';
import type http from 'node:http';
import { escapeHtml } from '../../../src/modules/payments/html.js';
import { type ProviderFault as Fault, type LocalServer, serveLocally } from '../local-server.js';

/**
 * "Fakepay": a small payment provider that runs in the test process, so that Kosh's live path
 * (a provider that holds the bank, its own page, its own return and its own webhooks) is tested
 * over real HTTP without any network. It is shaped like the providers Kosh speaks to: orders made
 * by the merchant's server with its reference, a hosted bank page, a signed browser return, signed
 * webhooks, and a status API. Tests can make it misbehave the ways real providers do.
 */

export type { ProviderFault as Fault } from '../local-server.js';
export type WebhookTiming = 'after' | 'before' | 'instead' | 'none';

export interface FakepayOrder {
  id: string;
  reference: string;
  amount: number;
  currency: string;
  method: string;
  code: string;
  returnUrl: string;
  status: 'created' | 'pending' | 'paid' | 'failed';
  failureReason: string | null;
  bankRef: string | null;
}

export interface FakepayRefund {
  id: string;
  /** Kosh's refund id: the idempotency key of the refund request. */
  reference: string;
  orderId: string;
  amount: number;
  speed: string;
  status: 'pending' | 'processed' | 'failed';
}

export type FakepayEndpoint = 'create' | 'status' | 'refund' | 'refundStatus';

export interface SentWebhook {
  body: string;
  status: number | undefined;
}

function hmac(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}

/** The return's signature: HMAC-SHA256 hex of `id|reference|status` with the account's secret. */
export function fakepayReturnSignature(
  secret: string,
  id: string,
  reference: string,
  status: string,
): string {
  return hmac(secret, `${id}|${reference}|${status}`);
}

/** A webhook's signature: HMAC-SHA256 hex of the raw body with the account's secret. */
export function fakepayWebhookSignature(secret: string, body: string): string {
  return hmac(secret, body);
}

export class Fakepay {
  readonly orders = new Map<string, FakepayOrder>();
  readonly webhooks: SentWebhook[] = [];
  /** Calls the API received, by path pattern: `POST /v1/orders`, `GET /v1/orders/:id`, `POST /v1/refunds`, `GET /v1/refunds/:id`. */
  readonly calls: string[] = [];
  /** Make the next API calls misbehave: per endpoint, the fault to answer with (until cleared). */
  faults: Partial<Record<FakepayEndpoint, Fault>> = {};
  readonly refunds = new Map<string, FakepayRefund>();
  /** What a new refund request is answered with: still pending, or already final. */
  refundOutcome: FakepayRefund['status'] = 'pending';
  /** How long a `timeout` fault holds the answer back. */
  timeoutMs = 3_000;
  /** When the provider sends its webhook, relative to sending the browser back. */
  webhookTiming: WebhookTiming = 'after';
  /** Whether the browser's return is signed (some providers' returns are not). */
  signReturns = true;
  /** Where webhooks go (Kosh's `/v1/connectors/fakepay/webhooks/<account>/`). */
  webhookUrl: string | undefined;
  private server!: LocalServer;
  private counter = 0;

  constructor(
    readonly apiKey: string,
    readonly secret: string,
  ) {}

  static async start(
    apiKey = `fk_${randomBytes(8).toString('hex')}`,
    secret = `fs_${randomBytes(16).toString('hex')}`,
  ) {
    const fake = new Fakepay(apiKey, secret);
    fake.server = await serveLocally((request, response) => fake.handle(request, response));
    return fake;
  }

  get url(): string {
    return this.server.origin;
  }

  async close(): Promise<void> {
    await this.server.close();
  }

  /** Orders made for a Kosh payment (the reference): a retried start must never make a second. */
  ordersFor(reference: string): FakepayOrder[] {
    return [...this.orders.values()].filter((order) => order.reference === reference);
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.url);
    const body = await new Promise<string>((resolve) => {
      let text = '';
      request.on('data', (chunk) => {
        text += chunk;
      });
      request.on('end', () => resolve(text));
    });
    const json = (status: number, value: unknown) =>
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));

    if (url.pathname.startsWith('/v1/')) {
      if (request.headers.authorization !== `Bearer ${this.apiKey}`) {
        json(401, { error: { code: 'unauthorized', message: 'bad api key' } });
        return;
      }
      const post = request.method === 'POST';
      const refunds = url.pathname.startsWith('/v1/refunds');
      const endpoint: FakepayEndpoint = refunds
        ? post
          ? 'refund'
          : 'refundStatus'
        : post
          ? 'create'
          : 'status';
      const collection = refunds ? '/v1/refunds' : '/v1/orders';
      this.calls.push(`${request.method} ${post ? collection : `${collection}/:id`}`);
      const fault = this.faults[endpoint];
      // A fault that happens after the provider acted: the order or refund exists, the answer is lost.
      const answer = {
        create: () => this.createOrder(body),
        status: () => this.findOrder(url),
        refund: () => this.createRefund(body),
        refundStatus: () => this.findRefund(url),
      }[endpoint]();
      if (fault)
        return this.server.misbehave(fault, response, {
          timeoutMs: this.timeoutMs,
          garbage: '{"id": "fo_1", "status": ',
        });
      json(answer.status, answer.body);
      return;
    }
    const bank = /^\/bank\/([a-z0-9_]+)(\/decide)?$/.exec(url.pathname);
    const order = bank ? this.orders.get(bank[1] as string) : undefined;
    if (!bank || !order) {
      response.writeHead(404).end('not found');
      return;
    }
    if (!bank[2]) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(this.bankPage(order));
      return;
    }
    const choice = new URLSearchParams(body).get('choice');
    if (choice === 'pending' && order.status === 'created') {
      // The bank has not answered yet: the return (signed) says so; `settle` answers later.
      order.status = 'pending';
    } else if (order.status === 'created' || order.status === 'pending') {
      this.settle(order, choice === 'success' ? 'paid' : 'failed');
    }
    if (this.webhookTiming === 'before' || this.webhookTiming === 'instead') await this.sendWebhook(order);
    if (this.webhookTiming === 'instead') {
      response
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<p>Payment done. You can close this window.</p>');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(this.returnPage(order));
    if (this.webhookTiming === 'after') setTimeout(() => void this.sendWebhook(order), 300);
  }

  /** The bank's answer to an order: paid (with its reference) or declined. */
  settle(order: FakepayOrder, status: 'paid' | 'failed'): void {
    order.status = status;
    order.failureReason = status === 'paid' ? null : 'BANK_DECLINED';
    order.bankRef = status === 'paid' ? `BRN${++this.counter}` : null;
  }

  private createOrder(body: string): { status: number; body: unknown } {
    let input: Record<string, unknown>;
    try {
      input = JSON.parse(body);
    } catch {
      return { status: 400, body: { error: { code: 'bad_request', message: 'invalid JSON' } } };
    }
    const reference = String(input.reference ?? '');
    if (input.code === 'CLOSED') {
      return { status: 422, body: { error: { code: 'bank_unavailable', message: 'The bank is closed.' } } };
    }
    const existing = this.ordersFor(reference)[0];
    const order = existing ?? {
      id: `fo_${randomBytes(6).toString('hex')}`,
      reference,
      amount: Number(input.amount),
      currency: String(input.currency),
      method: String(input.method),
      code: String(input.code),
      returnUrl: String(input.return_url),
      status: 'created' as const,
      failureReason: null,
      bankRef: null,
    };
    this.orders.set(order.id, order);
    const page = `${this.url}/bank/${order.id}`;
    return {
      status: 200,
      body: {
        ...this.view(order),
        // Net banking is entered by a POST of fields, wallets by a GET: both shapes a provider uses.
        pay:
          order.method === 'netbanking'
            ? { method: 'POST', url: page, fields: { order_id: order.id, bank: order.code } }
            : { method: 'GET', url: `${page}?wallet=${encodeURIComponent(order.code)}` },
      },
    };
  }

  /** Refunds made for a Kosh refund (the reference): a resent request must never make a second. */
  refundsFor(reference: string): FakepayRefund[] {
    return [...this.refunds.values()].filter((refund) => refund.reference === reference);
  }

  /** Settles every pending refund the way the bank would, later. */
  settleRefunds(status: 'processed' | 'failed'): void {
    for (const refund of this.refunds.values()) if (refund.status === 'pending') refund.status = status;
  }

  private createRefund(body: string): { status: number; body: unknown } {
    let input: Record<string, unknown>;
    try {
      input = JSON.parse(body);
    } catch {
      return { status: 400, body: { error: { code: 'bad_request', message: 'invalid JSON' } } };
    }
    const reference = String(input.reference ?? '');
    const existing = this.refundsFor(reference)[0];
    if (existing) return { status: 200, body: this.refundView(existing) };
    const order = this.orders.get(String(input.order_id ?? ''));
    if (order?.status !== 'paid') {
      return {
        status: 422,
        body: { error: { code: 'order_not_paid', message: 'Only a paid order is refunded.' } },
      };
    }
    const refunded = [...this.refunds.values()]
      .filter((refund) => refund.orderId === order.id && refund.status !== 'failed')
      .reduce((sum, refund) => sum + refund.amount, 0);
    const amount = Number(input.amount);
    if (!Number.isInteger(amount) || amount < 1 || refunded + amount > order.amount) {
      return {
        status: 422,
        body: { error: { code: 'amount_exceeds', message: 'More than the order has left.' } },
      };
    }
    const refund: FakepayRefund = {
      id: `fr_${randomBytes(6).toString('hex')}`,
      reference,
      orderId: order.id,
      amount,
      speed: String(input.speed ?? 'normal'),
      status: this.refundOutcome,
    };
    this.refunds.set(refund.id, refund);
    return { status: 200, body: this.refundView(refund) };
  }

  private findRefund(url: URL): { status: number; body: unknown } {
    const id = /^\/v1\/refunds\/([a-z0-9_]+)$/.exec(url.pathname)?.[1];
    const refund = id ? this.refunds.get(id) : undefined;
    return refund
      ? { status: 200, body: this.refundView(refund) }
      : { status: 404, body: { error: { code: 'not_found' } } };
  }

  private refundView(refund: FakepayRefund) {
    return {
      id: refund.id,
      reference: refund.reference,
      order_id: refund.orderId,
      amount: refund.amount,
      speed: refund.speed,
      status: refund.status,
      failure_reason: refund.status === 'failed' ? 'BANK_REFUSED' : null,
    };
  }

  private findOrder(url: URL): { status: number; body: unknown } {
    const id = /^\/v1\/orders\/([a-z0-9_]+)$/.exec(url.pathname)?.[1];
    const reference = url.searchParams.get('reference');
    if (id) {
      const order = this.orders.get(id);
      return order
        ? { status: 200, body: this.view(order) }
        : { status: 404, body: { error: { code: 'not_found' } } };
    }
    if (reference)
      return { status: 200, body: { items: this.ordersFor(reference).map((order) => this.view(order)) } };
    return { status: 404, body: { error: { code: 'not_found' } } };
  }

  private view(order: FakepayOrder) {
    return {
      id: order.id,
      reference: order.reference,
      amount: order.amount,
      currency: order.currency,
      status: order.status,
      failure_reason: order.failureReason,
      bank_ref: order.bankRef,
      fee: order.status === 'paid' ? Math.round(order.amount * 0.02) : null,
    };
  }

  private bankPage(order: FakepayOrder): string {
    return `<!DOCTYPE html><html><head><title>Fakepay bank</title></head><body>
<h1>Fakepay — ${escapeHtml(order.code)}</h1><p id="amount">${order.amount} ${escapeHtml(order.currency)}</p>
<form method="POST" action="/bank/${order.id}/decide">
<button type="submit" name="choice" value="success">Success</button>
<button type="submit" name="choice" value="failure">Failure</button>
<button type="submit" name="choice" value="pending">Pending</button>
</form></body></html>`;
  }

  /** Sends the browser back to the merchant's server (Kosh) by an auto-submitting POST. */
  private returnPage(order: FakepayOrder): string {
    const fields: Record<string, string> = {
      order_id: order.id,
      reference: order.reference,
      status: order.status,
    };
    if (this.signReturns) {
      fields.signature = fakepayReturnSignature(this.secret, order.id, order.reference, order.status);
    }
    const inputs = Object.entries(fields)
      .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
      .join('');
    return `<!DOCTYPE html><html><body><form id="back" method="POST" action="${escapeHtml(order.returnUrl)}">${inputs}</form>
<script>document.getElementById('back').submit();</script></body></html>`;
  }

  /** Sends this order's webhook now, signed as documented; returns Kosh's status code. */
  async sendWebhook(order: FakepayOrder, options: { signature?: string } = {}): Promise<number | undefined> {
    if (!this.webhookUrl) return undefined;
    const body = JSON.stringify({
      event_id: `ev_${randomBytes(6).toString('hex')}`,
      type: 'order.updated',
      order: this.view(order),
    });
    let status: number | undefined;
    try {
      const response = await fetch(this.webhookUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-fakepay-signature': options.signature ?? fakepayWebhookSignature(this.secret, body),
        },
        body,
      });
      status = response.status;
    } catch {
      status = undefined;
    }
    this.webhooks.push({ body, status });
    return status;
  }
}
