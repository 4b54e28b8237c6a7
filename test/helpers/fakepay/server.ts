import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * "Fakepay": a small payment provider that runs in the test process, so that Kosh's live path
 * (a provider that holds the bank, its own page, its own return and its own webhooks) is tested
 * over real HTTP without any network. It is shaped like the providers Kosh speaks to: orders made
 * by the merchant's server with its reference, a hosted bank page, a signed browser return, signed
 * webhooks, and a status API. Tests can make it misbehave the ways real providers do.
 */

export type Fault = 'timeout' | 'bad_gateway_html' | 'garbage' | 'reset';
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

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

export class Fakepay {
  readonly orders = new Map<string, FakepayOrder>();
  readonly webhooks: SentWebhook[] = [];
  /** Calls the API received, by path pattern: `POST /v1/orders`, `GET /v1/orders/:id`. */
  readonly calls: string[] = [];
  /** Make the next API calls misbehave: per endpoint, the fault to answer with (until cleared). */
  faults: { create?: Fault; status?: Fault } = {};
  /** How long a `timeout` fault holds the answer back. */
  timeoutMs = 3_000;
  /** When the provider sends its webhook, relative to sending the browser back. */
  webhookTiming: WebhookTiming = 'after';
  /** Whether the browser's return is signed (some providers' returns are not). */
  signReturns = true;
  /** Where webhooks go (Kosh's `/v1/connectors/fakepay/webhooks/<account>/`). */
  webhookUrl: string | undefined;
  private server!: http.Server;
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
    fake.server = http.createServer((request, response) => {
      void fake.handle(request, response).catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
      });
    });
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
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
      const create = request.method === 'POST' && url.pathname === '/v1/orders';
      const endpoint = create ? 'create' : 'status';
      this.calls.push(`${request.method} ${create ? '/v1/orders' : '/v1/orders/:id'}`);
      const fault = this.faults[endpoint];
      // A fault that happens after the provider acted: the order exists, the answer is lost.
      const answer = create ? this.createOrder(body) : this.findOrder(url);
      if (fault) return this.misbehave(fault, response);
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
    if (order.status === 'created' || order.status === 'pending') {
      order.status = choice === 'success' ? 'paid' : 'failed';
      order.failureReason = choice === 'success' ? null : 'BANK_DECLINED';
      order.bankRef = choice === 'success' ? `BRN${++this.counter}` : null;
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

  private misbehave(fault: Fault, response: http.ServerResponse): void {
    if (fault === 'timeout') {
      setTimeout(() => response.destroy(), this.timeoutMs);
    } else if (fault === 'bad_gateway_html') {
      response
        .writeHead(502, { 'content-type': 'text/html' })
        .end('<html><body><h1>502 Bad Gateway</h1></body></html>');
    } else if (fault === 'garbage') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"id": "fo_1", "status": ');
    } else {
      response.socket?.destroy();
    }
  }

  private bankPage(order: FakepayOrder): string {
    return `<!DOCTYPE html><html><head><title>Fakepay bank</title></head><body>
<h1>Fakepay — ${escapeHtml(order.code)}</h1><p id="amount">${order.amount} ${escapeHtml(order.currency)}</p>
<form method="POST" action="/bank/${order.id}/decide">
<button type="submit" name="choice" value="success">Success</button>
<button type="submit" name="choice" value="failure">Failure</button>
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
