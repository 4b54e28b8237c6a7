// An example merchant shop for Kosh: loads the account's payment methods, creates an order and an
// S2S payment, sends the customer's browser into the bank or wallet step, and on return shows the
// status it FETCHED from Kosh — the browser return alone is never proof of payment.
//
//   node examples/merchant/server.mjs
//
// Settings: KOSH_URL (default http://localhost:3000), KOSH_API_KEY and KOSH_SECRET_KEY (default: the
// merchant in ./.kosh-data/sandbox-credentials.json), PORT (default 4000), MERCHANT_URL (default
// http://localhost:$PORT, where the customer's browser is sent back).
import fs from 'node:fs';
import http from 'node:http';

const escapeHtml = (value) =>
  String(value).replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char],
  );

function page(title, body) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}
label{display:block;margin:.6rem 0}select,input{width:100%;padding:.4rem}button{margin-top:1rem;padding:.6rem 1.2rem}</style>
</head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

async function readForm(request) {
  let body = '';
  for await (const chunk of request) {
    body += chunk;
    if (body.length > 10_000) throw new Error('form too large');
  }
  return Object.fromEntries(new URLSearchParams(body));
}

export function createMerchantServer({ koshUrl, apiKey, secretKey, merchantUrl }) {
  const authorization = `Basic ${Buffer.from(`${apiKey}:${secretKey}`).toString('base64')}`;

  async function kosh(method, path, body) {
    const response = await fetch(`${koshUrl}${path}`, {
      method,
      headers: { authorization, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await response.json();
    if (!response.ok)
      throw new Error(
        `${method} ${path}: ${json.error?.code ?? response.status} ${json.error?.message ?? ''}`,
      );
    return json;
  }

  async function checkout() {
    // Fetched at the start of every checkout: only what is enabled now is offered.
    const methods = await kosh('GET', '/v1/payments/methods/');
    const options = (group, entries) =>
      Object.entries(entries)
        .map(
          ([code, label]) =>
            `<option value="${escapeHtml(`${group}:${code}`)}">${escapeHtml(label)}</option>`,
        )
        .join('');
    return page(
      'Checkout',
      `<form method="post" action="/pay">
  <label>Amount (paise) <input name="amount" value="49900" inputmode="numeric"></label>
  <label>Pay with <select name="instrument" id="instrument">
    <optgroup label="Net banking">${options('netbanking', methods.netbanking)}</optgroup>
    <optgroup label="Wallet">${options('wallet', methods.wallet)}</optgroup>
  </select></label>
  <label>Name <input name="name" value="Asha Verma"></label>
  <label>Email <input name="email" value="asha@example.com"></label>
  <label>Phone <input name="contact" value="+919876543210"></label>
  <button type="submit">Pay</button>
</form>`,
    );
  }

  async function pay(request, response) {
    const form = await readForm(request);
    const [method, code] = String(form.instrument ?? '').split(':');
    const amount = Number.parseInt(form.amount, 10);
    const order = (
      await kosh('POST', '/v1/orders/', { amount, currency: 'INR', receipt: `shop-${Date.now()}` })
    ).data;
    const payment = await kosh('POST', '/v1/payments/create/s2s/', {
      amount,
      currency: 'INR',
      order_id: order.id,
      method,
      ...(method === 'wallet' ? { wallet: code.toUpperCase() } : { bank: code }),
      name: form.name,
      email: form.email,
      contact: form.contact,
      description: 'Example shop order',
      return_url: `${merchantUrl}/return`,
    });
    const [action] = payment.next;
    if (action.action === 'html_form') {
      // Rendered as is: the form and its hidden fields must not be modified.
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(action.html_content);
    } else {
      response.writeHead(302, { location: action.url }).end();
    }
  }

  async function returned(request) {
    const form = await readForm(request);
    // The posted status is a hint; the fetched payment is the truth.
    const payment = (await kosh('GET', `/v1/payments/${encodeURIComponent(form.payment_id ?? '')}/`)).data;
    const order = (await kosh('GET', `/v1/orders/${encodeURIComponent(payment.order_id)}/`)).data;
    return page(
      payment.status === 'captured' ? 'Thank you!' : 'Payment not completed',
      `<p>Payment <code id="payment-id">${escapeHtml(payment.id)}</code> is
<strong id="payment-status">${escapeHtml(payment.status)}</strong>.</p>
<p>Order <code>${escapeHtml(order.id)}</code> is <strong id="order-status">${escapeHtml(order.status)}</strong>.</p>
${payment.error_code ? `<p id="error-code">${escapeHtml(payment.error_code)}</p>` : ''}
<p><a href="/">Back to the shop</a></p>`,
    );
  }

  return http.createServer(async (request, response) => {
    try {
      const path = new URL(request.url ?? '/', 'http://shop').pathname;
      if (request.method === 'GET' && path === '/') {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(await checkout());
      } else if (request.method === 'POST' && path === '/pay') {
        await pay(request, response);
      } else if (request.method === 'POST' && path === '/return') {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(await returned(request));
      } else {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      }
    } catch (error) {
      response
        .writeHead(502, { 'content-type': 'text/html; charset=utf-8' })
        .end(page('Something went wrong', `<p>${escapeHtml(error.message)}</p>`));
    }
  });
}

function sandboxCredentials() {
  try {
    return JSON.parse(fs.readFileSync('.kosh-data/sandbox-credentials.json', 'utf8')).merchant;
  } catch {
    return {};
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.env.PORT ?? 4000);
  const sandbox = sandboxCredentials();
  const apiKey = process.env.KOSH_API_KEY ?? sandbox.api_key;
  const secretKey = process.env.KOSH_SECRET_KEY ?? sandbox.secret_key;
  if (!apiKey || !secretKey) {
    console.error(
      'Set KOSH_API_KEY and KOSH_SECRET_KEY, or start Kosh once in this folder so .kosh-data/sandbox-credentials.json exists.',
    );
    process.exit(1);
  }
  const merchantUrl = process.env.MERCHANT_URL ?? `http://localhost:${port}`;
  createMerchantServer({
    koshUrl: process.env.KOSH_URL ?? 'http://localhost:3000',
    apiKey,
    secretKey,
    merchantUrl,
  }).listen(port, () => console.log(`Example shop on ${merchantUrl}`));
}
