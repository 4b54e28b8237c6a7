import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Kosh, KoshError, type KoshOptions } from '../../sdk/node/src/index.js';

/**
 * A small shop that sells one thing through Kosh, with the Node SDK (sdk/node): it lists the
 * account's banks, wallets and UPI flows, creates the order and the S2S payment, hands the browser
 * on as `next` says, receives the return POST and shows the status it fetched from Kosh (a browser
 * return is never proof of payment). It fulfils an order when its signed `order.paid` webhook
 * arrives, once, however many times that webhook is delivered.
 *
 * Hosted checkout: "Pay with Kosh Checkout" creates the order and a checkout session without a
 * customer, and sends the browser to the session's `url`, where Kosh's page asks the customer and
 * the method; the payment comes back to the same `/return` as the S2S forms'.
 *
 * UPI: the shop sends the browser to Kosh's UPI page (`next[1]`), which shows the QR code on a wide
 * screen and an "Open UPI app" button on a phone (by CSS, so the shop never guesses the device from
 * the user agent), follows the payment and brings the customer back with the signed return. A shop
 * that renders `next[0]` itself (the upi:// link as a button, its `qr_image`) must follow the
 * payment itself too; this one does not.
 */
const PRICE = 5000; // ₹50.00 in paise

function escapeHtml(value: unknown): string {
  return String(value).replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char,
  );
}

function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem}
fieldset{margin:1rem 0}label{display:block;margin:.3rem 0}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${body}
</body></html>`;
}

function optionTags(entries: Record<string, string>): string {
  return Object.entries(entries)
    .map(([code, label]) => `<option value="${escapeHtml(code)}">${escapeHtml(label)}</option>`)
    .join('');
}

async function readForm(request: http.IncomingMessage): Promise<Record<string, string>> {
  let body = '';
  for await (const chunk of request) {
    body += chunk;
    if (body.length > 10_000) throw new Error('form too large');
  }
  return Object.fromEntries(new URLSearchParams(body));
}

function send(response: http.ServerResponse, status: number, html: string): void {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  response.end(html);
}

/** A payment (S2S or hosted) Kosh would not start: its message, and the way back. */
function notStarted(response: http.ServerResponse, error: unknown): void {
  const message = error instanceof KoshError ? error.message : 'The payment could not be started.';
  send(
    response,
    400,
    page('Payment not started', `<p id="error">${escapeHtml(message)}</p><a href="/">Back</a>`),
  );
}

export interface MerchantOptions extends KoshOptions {
  /**
   * Registers this shop's webhook endpoint (`{publicUrl}/webhooks/kosh`, order.paid) with Kosh at
   * start, keeping the signing secret it answers. Default true.
   */
  registerWebhook?: boolean;
  /** Where this shop is reachable by the browser, used for return_url; defaults to its listening address. */
  publicUrl?: string;
  port?: number;
  host?: string;
}

export async function startMerchant(
  options: MerchantOptions,
): Promise<{ url: string; close(): Promise<void> }> {
  const kosh = new Kosh(options);
  let publicUrl = options.publicUrl ?? '';
  let returnSecret: string | undefined;
  let webhookSecret: string | undefined;
  /** Orders already fulfilled, with the event that did it: a real shop keeps this in its database. */
  const fulfilled = new Map<string, { event: string; at: string }>();
  /** How many times each order was shipped (the side effect that must happen once). */
  const shipments = new Map<string, number>();
  /** How many times each event arrived. */
  const deliveries = new Map<string, number>();

  async function home(response: http.ServerResponse) {
    // Fetched for every checkout: the account's methods can change, and nothing unsupported is offered.
    let methods: Awaited<ReturnType<typeof kosh.payments.methods>>;
    try {
      methods = await kosh.payments.methods();
    } catch {
      return send(response, 503, page('Checkout unavailable', '<p>Payment methods could not be loaded.</p>'));
    }
    const customer = `<label>Name <input name="name" value="Asha Rao" required></label>
<label>Email <input name="email" value="asha@example.com" required></label>
<label>Phone <input name="contact" value="+919876543210" required></label>`;
    const form = (method: string, field: string, entries: Record<string, string>) =>
      Object.keys(entries).length === 0
        ? ''
        : `<form method="POST" action="/checkout" id="${method}-form"><fieldset>
<legend>${method === 'netbanking' ? 'Net banking' : 'Wallet'}</legend>
<input type="hidden" name="method" value="${method}">
<select name="${field}" id="${field}">${optionTags(entries)}</select>
${customer}
<button type="submit" id="pay-${method}">Pay ₹50.00</button></fieldset></form>`;
    // UPI: any UPI app by QR code or app button where intent is on; a request to a UPI id where collect is.
    const upi = methods.upi?.intent
      ? `<form method="POST" action="/checkout" id="upi-form"><fieldset>
<legend>UPI</legend>
<p>Scan a QR code with any UPI app, or open your UPI app on this phone.</p>
<input type="hidden" name="method" value="upi"><input type="hidden" name="flow" value="intent">
${customer}
<button type="submit" id="pay-upi">Pay ₹50.00 with UPI</button></fieldset></form>`
      : '';
    const collect = methods.upi?.collect
      ? `<form method="POST" action="/checkout" id="upi-collect-form"><fieldset>
<legend>UPI id</legend>
<input type="hidden" name="method" value="upi"><input type="hidden" name="flow" value="collect">
<label>Your UPI id <input name="vpa" id="vpa" placeholder="name@bank" required></label>
${customer}
<button type="submit" id="pay-upi-collect">Send the payment request</button></fieldset></form>`
      : '';
    // Kosh's own page asks for the customer and the method: nothing to fill in here.
    const hosted = `<form method="POST" action="/hosted" id="hosted-form"><fieldset>
<legend>Kosh Checkout</legend>
<p>Choose UPI, a bank or a wallet on Kosh's checkout page.</p>
<button type="submit" id="pay-hosted">Pay with Kosh Checkout</button></fieldset></form>`;
    send(
      response,
      200,
      page(
        'Kosh example shop',
        `<p>One notebook, ₹50.00.</p>${hosted}${upi}${collect}${form('netbanking', 'bank', methods.netbanking)}${form('wallet', 'wallet', methods.wallet)}`,
      ),
    );
  }

  async function checkout(request: http.IncomingMessage, response: http.ServerResponse) {
    const form = await readForm(request);
    try {
      const order = await kosh.orders.create({ amount: PRICE, currency: 'INR' });
      const customer = {
        amount: PRICE,
        currency: 'INR',
        order_id: order.id,
        name: form.name ?? '',
        email: form.email ?? '',
        contact: form.contact ?? '',
        description: 'One notebook',
        return_url: `${publicUrl}/return`,
      };
      const payment = await kosh.payments.createS2S(
        form.method === 'upi'
          ? {
              ...customer,
              method: 'upi',
              upi: form.flow === 'collect' ? { flow: 'collect', vpa: form.vpa ?? '' } : { flow: 'intent' },
            }
          : form.method === 'wallet'
            ? { ...customer, method: 'wallet', wallet: form.wallet ?? '' }
            : { ...customer, method: 'netbanking', bank: form.bank ?? '' },
      );
      // UPI answers its own step first (upi_intent, upi_qr or upi_collect), then Kosh's UPI page.
      const next =
        form.method === 'upi' ? payment.next.find((step) => step.action === 'redirect') : payment.next[0];
      if (next?.action === 'html_form') return send(response, 200, next.html_content);
      if (next?.action === 'redirect') {
        response.writeHead(303, { location: next.url });
        return response.end();
      }
      send(response, 502, page('Payment failed', '<p>Kosh answered an unknown action.</p>'));
    } catch (error) {
      notStarted(response, error);
    }
  }

  /**
   * Kosh Checkout: an order and a hosted checkout session for it, without a customer (the page asks
   * for one), then the browser goes to the session's page. It comes back to `/return`, signed.
   */
  async function hosted(request: http.IncomingMessage, response: http.ServerResponse) {
    await readForm(request);
    try {
      const order = await kosh.orders.create({ amount: PRICE, currency: 'INR' });
      const session = await kosh.checkout.sessions.create({
        order_id: order.id,
        return_url: `${publicUrl}/return`,
      });
      response.writeHead(303, { location: session.url });
      response.end();
    } catch (error) {
      notStarted(response, error);
    }
  }

  async function paymentReturn(request: http.IncomingMessage, response: http.ServerResponse) {
    const form = await readForm(request);
    returnSecret ??= await kosh.returns.signingSecret();
    if (!kosh.returns.verify(form, returnSecret) || !form.payment_id) {
      return send(
        response,
        400,
        page('Unverified return', '<p id="error">The return was not signed by Kosh.</p>'),
      );
    }
    // The return only says which payment to look at; its status comes from Kosh itself.
    const payment = await kosh.payments.retrieve(form.payment_id);
    const order = await kosh.orders.retrieve(payment.order_id);
    // Pending is not failed: the bank may still confirm it (then order.paid ships the order), so
    // the customer is told to wait, not invited to pay a second time.
    const [title, next] =
      payment.status === 'captured'
        ? ['Thank you for your order', '<a href="/">Shop again</a>']
        : payment.status === 'failed'
          ? ['Payment not completed', '<p>No order was placed. <a href="/">Try again</a></p>']
          : [
              'Your bank is confirming your payment',
              '<p id="pending">We will ship your order as soon as your bank confirms the payment. Please do not pay again.</p>',
            ];
    send(
      response,
      200,
      page(
        title,
        `<dl>
<dt>Payment</dt><dd id="payment-id">${escapeHtml(payment.id)}</dd>
<dt>Payment status</dt><dd id="payment-status">${escapeHtml(payment.status)}</dd>
<dt>Error</dt><dd id="error-code">${escapeHtml(payment.error_code ?? '—')}</dd>
<dt>Order</dt><dd id="order-id">${escapeHtml(order.id)}</dd>
<dt>Order status</dt><dd id="order-status">${escapeHtml(order.status)}</dd>
<dt>Signature</dt><dd id="signature">verified</dd>
</dl>${next}`,
      ),
    );
  }

  /**
   * Kosh's webhooks: verified over the raw body, then `order.paid` fulfils its order, once. Kosh
   * delivers at least once (and a merchant may ask for a delivery again), so the same event, or
   * another event of the same order, finds it fulfilled already and changes nothing.
   */
  async function webhook(request: http.IncomingMessage, response: http.ServerResponse) {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request) {
      size += (chunk as Buffer).length;
      // Kosh's events are a few kilobytes: anything far larger is not from Kosh.
      if (size > 1_000_000) {
        response.writeHead(413).end();
        return;
      }
      chunks.push(chunk as Buffer);
    }
    let event: { id: string; type: string; data: Record<string, unknown> };
    try {
      if (!webhookSecret) throw new Error('no webhook secret yet');
      event = kosh.webhooks.verify(Buffer.concat(chunks), request.headers, webhookSecret);
    } catch {
      response.writeHead(400).end();
      return;
    }
    deliveries.set(event.id, (deliveries.get(event.id) ?? 0) + 1);
    const order = event.data.order as { id?: string; status?: string } | undefined;
    if (event.type === 'order.paid' && order?.id && !fulfilled.has(order.id)) {
      fulfilled.set(order.id, { event: event.id, at: new Date().toISOString() });
      shipments.set(order.id, (shipments.get(order.id) ?? 0) + 1);
    }
    response.writeHead(200).end();
  }

  /** What the shop shipped (for the operator, and for the tests that drive this shop). */
  function fulfilments(response: http.ServerResponse) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        fulfilled: Object.fromEntries(fulfilled),
        shipments: Object.fromEntries(shipments),
        deliveries: Object.fromEntries(deliveries),
      }),
    );
  }

  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const route =
      request.method === 'GET' && path === '/'
        ? home(response)
        : request.method === 'POST' && path === '/checkout'
          ? checkout(request, response)
          : request.method === 'POST' && path === '/hosted'
            ? hosted(request, response)
            : request.method === 'POST' && path === '/return'
              ? paymentReturn(request, response)
              : request.method === 'POST' && path === '/webhooks/kosh'
                ? webhook(request, response)
                : request.method === 'GET' && path === '/fulfilments'
                  ? Promise.resolve(fulfilments(response))
                  : Promise.resolve(send(response, 404, page('Not found', '')));
    route.catch(() => {
      if (!response.headersSent) send(response, 500, page('Something went wrong', ''));
      else response.end();
    });
  });
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve),
  );
  const address = server.address() as AddressInfo;
  publicUrl ||= `http://${options.host ?? '127.0.0.1'}:${address.port}`;
  if (options.registerWebhook ?? true)
    webhookSecret = await registerWebhook(kosh, `${publicUrl}/webhooks/kosh`);
  return {
    url: publicUrl,
    close: () =>
      new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

/**
 * The shop's webhook endpoint, registered once: a restart finds the endpoint it registered before
 * and rotates its secret (the previous one keeps verifying for 24 hours, so nothing in flight is
 * lost) instead of adding another endpoint whose deliveries would fail for days.
 */
async function registerWebhook(kosh: Kosh, url: string): Promise<string> {
  for await (const endpoint of kosh.webhookEndpoints.list()) {
    if (endpoint.url === url && endpoint.enabled)
      return (await kosh.webhookEndpoints.rotateSecret(endpoint.id)).secret as string;
  }
  const created = await kosh.webhookEndpoints.create({
    url,
    enabled_events: ['order.paid'],
    description: 'Kosh example shop',
  });
  return created.secret as string;
}
