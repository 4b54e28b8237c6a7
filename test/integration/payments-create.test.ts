import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import {
  choose,
  createOrder,
  createPayment,
  openPage,
  paymentBody,
  RETURN_URL,
} from '../helpers/payments.js';

describeEachDatabase('POST /v1/payments/create/s2s/', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant();
  });

  it('answers exactly { payment_id, next } with an html_form for ICIC', async () => {
    const { paymentId, body, orderId } = await createPayment(harness(), merchant);
    expect(Object.keys(body).sort()).toEqual(['next', 'payment_id']);
    expect(paymentId).toMatch(/^pay_[0-9a-z]{26}$/);
    expect(body.next).toHaveLength(1);
    const action = body.next[0]!;
    expect(Object.keys(action).sort()).toEqual(['action', 'html_content']);
    expect(action.action).toBe('html_form');
    const html = action.html_content!;
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).toContain('</html>');
    expect(html).toContain(
      `method="GET" action="http://localhost:3000/v1/payments/${paymentId}/authentication/"`,
    );
    expect(html).toContain('<input type="hidden" name="paymentMode" value="NET_BANKING">');
    expect(html).toContain('<input type="hidden" name="bankCode" value="ICIC">');
    expect(html).toMatch(/<noscript><button type="submit">[^<]+<\/button><\/noscript>/);
    expect(html).toMatch(/<script>setTimeout\(function \(\) \{ [^}]*\.submit\(\); \}, 1000\);<\/script>/);
    // Under a merchant's CSP that refuses inline scripts, neither the script nor <noscript> runs: a
    // plain link to the same address is there, and it opens the bank page.
    const link = /<a id="kosh-continue" href="([^"]+)">/.exec(html)?.[1]?.replaceAll('&amp;', '&');
    expect(link).toBe(
      `http://localhost:3000/v1/payments/${paymentId}/authentication/?paymentMode=NET_BANKING&bankCode=ICIC`,
    );
    const bankPage = await harness().request('GET', (link as string).replace('http://localhost:3000', ''));
    expect(bankPage.statusCode, bankPage.body).toBe(200);
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');

    const order = (await harness().request('GET', `/v1/orders/${orderId}/`, { auth: merchant })).json().data;
    expect(order).toMatchObject({
      status: 'attempted',
      return_url: RETURN_URL,
      bank_details: { method: 'netbanking', bank: 'ICIC', bank_name: 'ICICI Bank' },
      amount_paid: 0,
      amount_pending: 5000,
    });
  });

  it('answers a redirect for HDFC and PAYZAPP, to the configured public address', async () => {
    for (const overrides of [{ bank: 'HDFC' }, { method: 'wallet', bank: undefined, wallet: 'PAYZAPP' }]) {
      const { paymentId, body } = await createPayment(harness(), merchant, overrides);
      expect(body.next).toEqual([
        { action: 'redirect', url: `http://localhost:3000/v1/payments/${paymentId}/authentication/` },
      ]);
    }
    // A forged Host or X-Forwarded-Host never reaches the URL.
    const orderId = await createOrder(harness(), merchant);
    const response = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth: merchant,
      json: paymentBody(orderId, { bank: 'HDFC' }),
      headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example' },
    });
    expect(response.json().next[0].url).toMatch(/^http:\/\/localhost:3000\//);
  });

  it('answers an html_form with walletCode for AIRTELMONEY and stores the canonical wallet key', async () => {
    const { paymentId, body, orderId } = await createPayment(harness(), merchant, {
      method: 'wallet',
      bank: undefined,
      wallet: 'AIRTELMONEY',
    });
    expect(body.next[0]!.action).toBe('html_form');
    expect(body.next[0]!.html_content).toContain('<input type="hidden" name="paymentMode" value="WALLET">');
    expect(body.next[0]!.html_content).toContain(
      '<input type="hidden" name="walletCode" value="airtelmoney">',
    );
    expect(body.next[0]!.html_content).toContain('<title>Redirecting to your wallet…</title>');
    const payment = (await harness().request('GET', `/v1/payments/${paymentId}/`, { auth: merchant })).json()
      .data;
    expect(payment).toMatchObject({ method: 'wallet', wallet: 'airtelmoney', bank: null, status: 'created' });
    const order = (await harness().request('GET', `/v1/orders/${orderId}/`, { auth: merchant })).json().data;
    expect(order.bank_details).toEqual({
      method: 'wallet',
      wallet: 'airtelmoney',
      wallet_name: 'Airtel Payments Bank',
    });
  });

  it('accepts a bank code in any case and a form body with metadata', async () => {
    const orderId = await createOrder(harness(), merchant);
    const response = await harness().request('POST', '/v1/payments/create/s2s', {
      auth: merchant,
      form: { ...paymentBody(orderId, { bank: 'hdfc' }), metadata: { cart: 'c-1' } },
    });
    expect(response.statusCode, response.body).toBe(200);
    const payment = (
      await harness().request('GET', `/v1/payments/${response.json().payment_id}/`, { auth: merchant })
    ).json().data;
    expect(payment).toMatchObject({ bank: 'HDFC', amount: 5000, metadata: { cart: 'c-1' } });
  });

  const long = (n: number) => 'x'.repeat(n);
  const invalid: [string, Record<string, unknown>, string, string][] = [
    ['amount missing', { amount: undefined }, 'missing_field', 'amount'],
    ['currency missing', { currency: undefined }, 'missing_field', 'currency'],
    ['contact missing', { contact: undefined }, 'missing_field', 'contact'],
    ['name missing', { name: undefined }, 'missing_field', 'name'],
    ['email missing', { email: undefined }, 'missing_field', 'email'],
    ['order_id missing', { order_id: undefined }, 'missing_field', 'order_id'],
    ['return_url missing', { return_url: undefined }, 'missing_field', 'return_url'],
    ['method missing', { method: undefined }, 'missing_field', 'method'],
    ['bank missing for netbanking', { bank: undefined }, 'missing_field', 'bank'],
    ['wallet missing for wallet', { method: 'wallet', bank: undefined }, 'missing_field', 'wallet'],
    ['wallet sent with netbanking', { wallet: 'payzapp' }, 'invalid_field', 'wallet'],
    ['bank sent with wallet', { method: 'wallet', wallet: 'payzapp' }, 'invalid_field', 'bank'],
    ['method unknown', { method: 'card' }, 'invalid_field', 'method'],
    ['amount a fraction', { amount: 50.5 }, 'invalid_field', 'amount'],
    ['amount zero', { amount: 0 }, 'invalid_field', 'amount'],
    ['amount negative', { amount: -5000 }, 'invalid_field', 'amount'],
    ['amount past the largest exact integer', { amount: 2 ** 53 }, 'invalid_field', 'amount'],
    ['amount 1e308', { amount: 1e308 }, 'invalid_field', 'amount'],
    ['currency lower case', { currency: 'inr' }, 'invalid_field', 'currency'],
    ['currency too long', { currency: 'INRR' }, 'invalid_field', 'currency'],
    ['contact with letters', { contact: '+91abc43210' }, 'invalid_field', 'contact'],
    ['contact too short', { contact: '+9112345' }, 'invalid_field', 'contact'],
    ['contact too long', { contact: '+9198765432101234' }, 'invalid_field', 'contact'],
    ['email without @', { email: 'asha.example.com' }, 'invalid_field', 'email'],
    ['email without domain dot', { email: 'asha@example' }, 'invalid_field', 'email'],
    ['name empty', { name: '   ' }, 'invalid_field', 'name'],
    ['name too long', { name: long(101) }, 'invalid_field', 'name'],
    ['description too long', { description: long(256) }, 'invalid_field', 'description'],
    ['metadata not an object', { metadata: 'x' }, 'invalid_field', 'metadata'],
    ['metadata nested', { metadata: { a: { b: 1 } } }, 'invalid_field', 'metadata.a'],
    ['return_url relative', { return_url: '/return' }, 'invalid_return_url', 'return_url'],
    ['return_url http', { return_url: 'http://merchant.example/r' }, 'invalid_return_url', 'return_url'],
    ['return_url javascript', { return_url: 'javascript:alert(1)' }, 'invalid_return_url', 'return_url'],
    [
      'return_url with credentials',
      { return_url: 'https://u:p@m.example/' },
      'invalid_return_url',
      'return_url',
    ],
    ['bank not enabled', { bank: 'NOPE' }, 'method_not_enabled', 'bank'],
    // U+212A KELVIN SIGN lower-cases to k: a look-alike of KKBK is not KKBK.
    ['bank code with a look-alike letter', { bank: '\u212aKBK' }, 'method_not_enabled', 'bank'],
    [
      'wallet code with a look-alike letter',
      { method: 'wallet', bank: undefined, wallet: 'mobi\u212awi\u212a' },
      'method_not_enabled',
      'wallet',
    ],
    [
      'wallet not enabled',
      { method: 'wallet', bank: undefined, wallet: 'paypal' },
      'method_not_enabled',
      'wallet',
    ],
    ['amount not the order’s', { amount: 4999 }, 'amount_mismatch', 'amount'],
    ['currency not the order’s', { currency: 'USD' }, 'currency_mismatch', 'currency'],
    ['unknown field', { ammount: 5000 }, 'unknown_field', 'ammount'],
    ['server-owned field', { status: 'captured' }, 'server_owned_field', 'status'],
  ];

  describe.each(['json', 'form'] as const)('refuses, in a %s body', (kind) => {
    it.each(invalid)('%s', async (_title, overrides, code, field) => {
      // A form nests one level only: deeper metadata is refused as an unreadable body.
      const nested = kind === 'form' && field === 'metadata.a';
      const orderId = await createOrder(harness(), merchant);
      const body = paymentBody(orderId, overrides);
      for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
      const response = await harness().request('POST', '/v1/payments/create/s2s/', {
        auth: merchant,
        ...(kind === 'json' ? { json: body } : { form: body }),
      });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().error).toMatchObject(
        nested ? { code: 'invalid_body', field: null } : { code, field },
      );
      expect(response.json().error.message.length).toBeGreaterThan(10);
      if (field === 'method' && code === 'invalid_field') {
        expect(response.json().error.message).toBe(
          "The field 'method' must be one of 'netbanking', 'wallet', 'upi'.",
        );
      }
      const order = (await harness().request('GET', `/v1/orders/${orderId}/`, { auth: merchant })).json()
        .data;
      expect(order.status).toBe('created');
      const payments = await harness().request('GET', `/v1/orders/${orderId}/payments/`, { auth: merchant });
      expect(payments.json().data).toEqual([]);
    });
  });

  it('allows http return URLs on the local machine in test mode', async () => {
    for (const url of ['http://localhost:8080/r', 'http://127.0.0.1/r', 'http://[::1]:9000/r']) {
      await createPayment(harness(), merchant, { return_url: url });
    }
  });

  it('refuses a paid order with 409 order_already_paid', async () => {
    const { orderId, paymentId } = await createPayment(harness(), merchant);
    await choose(harness(), paymentId, await openPage(harness(), paymentId), 'success');
    const response = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth: merchant,
      json: paymentBody(orderId),
    });
    expect(response.statusCode).toBe(409);
    expect(response.json().error).toMatchObject({ code: 'order_already_paid', field: 'order_id' });
  });

  it("answers 404 for another account's order and for a missing one", async () => {
    const other = await harness().merchant();
    const theirs = await createOrder(harness(), other);
    for (const orderId of [theirs, 'order_0000000000000000000000000z']) {
      const response = await harness().request('POST', '/v1/payments/create/s2s/', {
        auth: merchant,
        json: paymentBody(orderId),
      });
      expect(response.statusCode).toBe(404);
      expect(response.json().error).toMatchObject({ code: 'resource_not_found', field: 'order_id' });
    }
    const order = (await harness().request('GET', `/v1/orders/${theirs}/`, { auth: other })).json().data;
    expect(order.status).toBe('created');
  });

  it('answers 404 to a test key for a live order, and refuses live payments without a connector', async () => {
    const account = await harness().merchant();
    const live = await harness().liveKey(account);
    const liveOrder = await createOrder(harness(), live);
    const withTestKey = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth: account,
      json: paymentBody(liveOrder),
    });
    expect(withTestKey.statusCode).toBe(404);

    const withLiveKey = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth: live,
      json: paymentBody(liveOrder),
    });
    expect(withLiveKey.statusCode).toBe(503);
    expect(withLiveKey.json().error.code).toBe('connector_unavailable');
    const order = (await harness().request('GET', `/v1/orders/${liveOrder}/`, { auth: live })).json().data;
    expect(order.status).toBe('created');
  });

  it('needs a merchant key', async () => {
    const orderId = await createOrder(harness(), merchant);
    const anonymous = await harness().request('POST', '/v1/payments/create/s2s/', {
      json: paymentBody(orderId),
    });
    expect(anonymous.statusCode).toBe(401);
    const partner = await harness().partner();
    const asPartner = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth: partner,
      json: paymentBody(orderId),
    });
    expect(asPartner.statusCode).toBe(403);
  });
});
