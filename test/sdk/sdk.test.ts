import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { startMerchant } from '../../examples/merchant/app.js';
import { Kosh, KoshConnectionError, KoshError, type Payment } from '../../sdk/node/src/index.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { returnFields } from '../helpers/payments.js';
import { freePort } from '../helpers/process.js';
import { drain } from '../helpers/webhook-events.js';
import { TestReceiver } from '../helpers/webhook-receiver.js';

/** The Node SDK against a real, listening Kosh (its HTTP, its database), on both databases. */
describeEachDatabase('the Node SDK', (harness) => {
  let merchant: TestAccount;
  let baseUrl: string;
  let kosh: Kosh;

  beforeAll(async () => {
    await harness().app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(harness().app.server.address() as AddressInfo).port}`;
    merchant = await harness().merchant('SDK Shop');
    kosh = new Kosh({ ...keys(merchant), baseUrl });
  });

  const keys = (account: TestAccount) => ({
    apiKey: account.credentials.api_key,
    secretKey: account.credentials.secret_key,
  });

  const customer = {
    amount: 5000,
    currency: 'INR',
    name: 'Asha Rao',
    email: 'asha@example.com',
    contact: '+919876543210',
    return_url: 'https://shop.example.com/return',
  };

  /** The customer's part on the sandbox bank page; answers the return form's signed fields. */
  async function pay(paymentId: string, choice: string): Promise<Record<string, string>> {
    const page = await fetch(`${baseUrl}/v1/payments/${paymentId}/authentication/`);
    const token = /name="token" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
    const chosen = await fetch(`${baseUrl}/v1/payments/${paymentId}/authentication/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, choice }).toString(),
    });
    return returnFields(await chosen.text());
  }

  it('creates an order and an S2S payment, and fetches both', async () => {
    const order = await kosh.orders.create({ amount: 5000, currency: 'INR', receipt: 'sdk-1' });
    expect(order).toMatchObject({ entity: 'order', amount: 5000, status: 'created', receipt: 'sdk-1' });
    const started = await kosh.payments.createS2S({
      ...customer,
      order_id: order.id,
      method: 'netbanking',
      bank: 'ICIC',
    });
    expect(started.payment_id).toMatch(/^pay_/);
    const next = started.next[0]!;
    expect(['html_form', 'redirect']).toContain(next.action);
    const payment = await kosh.payments.retrieve(started.payment_id);
    expect(payment).toMatchObject({ id: started.payment_id, order_id: order.id, status: 'created' });
    expect((await kosh.orders.retrieve(order.id)).status).toBe('attempted');
    const wallet = await kosh.payments.createS2S({
      ...customer,
      order_id: order.id,
      method: 'wallet',
      wallet: 'AIRTELMONEY',
    });
    expect((await kosh.payments.retrieve(wallet.payment_id)).wallet).toBe('airtelmoney');
  });

  it('opens a hosted checkout session for an order and fetches it', async () => {
    const order = await kosh.orders.create({ amount: 5000, currency: 'INR' });
    const session = await kosh.checkout.sessions.create({
      order_id: order.id,
      return_url: 'https://shop.example.com/return',
      methods: ['upi', 'netbanking'],
    });
    expect(session).toMatchObject({
      id: expect.stringMatching(/^cs_/),
      entity: 'checkout_session',
      order_id: order.id,
      status: 'open',
      payment_id: null,
    });
    expect(session.url).toBe(`${harness().container.config.publicUrl}/checkout/${session.id}/`);
    expect(await kosh.checkout.sessions.retrieve(session.id)).toEqual(session);
    const refused = await kosh.checkout.sessions
      .create({ order_id: 'order_00000000000000000000000000', return_url: 'https://shop.example.com/r' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(KoshError);
    expect((refused as KoshError).status).toBe(404);
  });

  it('iterates every page of a list of 250 payments', async () => {
    const order = await kosh.orders.create({ amount: 5000, currency: 'INR' });
    const created = new Set<string>();
    for (let batch = 0; batch < 25; batch++) {
      const started = await Promise.all(
        Array.from({ length: 10 }, () =>
          kosh.payments.createS2S({ ...customer, order_id: order.id, method: 'netbanking', bank: 'HDFC' }),
        ),
      );
      for (const payment of started) created.add(payment.payment_id);
    }
    const firstPage = await kosh.orders.payments(order.id, { limit: 100 });
    expect(firstPage.data).toHaveLength(100);
    expect(firstPage.has_more).toBe(true);
    const seen: Payment[] = [];
    for await (const payment of kosh.orders.payments(order.id, { limit: 100 })) seen.push(payment);
    expect(seen).toHaveLength(250);
    expect(new Set(seen.map((payment) => payment.id))).toEqual(created);
    // Newest first, each once, across the page boundaries.
    expect(seen.map((payment) => payment.id)).toEqual(
      [...seen.map((payment) => payment.id)].sort().reverse(),
    );
  });

  it('retries a POST whose connection dropped with the same Idempotency-Key: one order, not two', async () => {
    const sentKeys = new Set<string>();
    let attempts = 0;
    const droppingFetch: typeof fetch = async (input, init) => {
      attempts++;
      sentKeys.add(new Headers(init?.headers).get('idempotency-key') ?? '');
      const response = await fetch(input, init);
      // The first answer never reaches the client: Kosh has created the order, the connection drops.
      if (attempts === 1) {
        await response.arrayBuffer();
        throw new TypeError('fetch failed: socket hang up');
      }
      return response;
    };
    const client = new Kosh({ ...keys(merchant), baseUrl, fetch: droppingFetch, maxBackoffMs: 50 });
    const receipt = `sdk-retry-${Date.now()}`;
    const order = await client.orders.create({ amount: 7000, currency: 'INR', receipt });
    expect(attempts).toBe(2);
    expect(sentKeys.size).toBe(1);
    const withReceipt = await harness().request('GET', `/v1/orders/?receipt=${receipt}`, { auth: merchant });
    expect(withReceipt.json().data.map((found: { id: string }) => found.id)).toEqual([order.id]);
  });

  it('retries a POST whose answer was cut off while it was read, and names a cut-off answer a connection error', async () => {
    let attempts = 0;
    const sentKeys = new Set<string>();
    /** Kosh answers in full; the client gets its headers and the start of its body, then the connection drops. */
    const cuttingFetch =
      (cutOff: number): typeof fetch =>
      async (input, init) => {
        attempts++;
        sentKeys.add(new Headers(init?.headers).get('idempotency-key') ?? '');
        const response = await fetch(input, init);
        if (attempts > cutOff) return response;
        const bytes = new Uint8Array(await response.arrayBuffer());
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(bytes.slice(0, 20));
            controller.error(new TypeError('terminated'));
          },
        });
        return new Response(body, { status: response.status, headers: response.headers });
      };
    const receipt = `sdk-cut-${Date.now()}`;
    const retried = new Kosh({ ...keys(merchant), baseUrl, fetch: cuttingFetch(1), maxBackoffMs: 50 });
    const order = await retried.orders.create({ amount: 7100, currency: 'INR', receipt });
    expect(attempts).toBe(2);
    expect(sentKeys.size).toBe(1);
    const withReceipt = await harness().request('GET', `/v1/orders/?receipt=${receipt}`, { auth: merchant });
    expect(withReceipt.json().data.map((found: { id: string }) => found.id)).toEqual([order.id]);

    attempts = 0;
    const never = new Kosh({
      ...keys(merchant),
      baseUrl,
      fetch: cuttingFetch(10),
      maxRetries: 1,
      maxBackoffMs: 10,
    });
    const error = await never.orders.retrieve(order.id).catch((caught) => caught);
    expect(error).toBeInstanceOf(KoshConnectionError);
    expect(error.message).toContain('terminated');
    expect(attempts).toBe(2);
  });

  it('the example shop keeps one webhook endpoint across restarts, and tells a customer whose payment is pending to wait', async () => {
    const shopKeeper = await harness().merchant('Restarted Shop');
    const port = await freePort();
    const start = () =>
      startMerchant({ ...keys(shopKeeper), baseUrl, port, publicUrl: `http://127.0.0.1:${port}` });
    await (await start()).close();
    const shop = await start();
    try {
      const client = new Kosh({ ...keys(shopKeeper), baseUrl });
      const endpoints = [];
      for await (const endpoint of client.webhookEndpoints.list()) endpoints.push(endpoint);
      expect(endpoints).toHaveLength(1);
      // The restart rotated the first start's secret: it keeps verifying for a day.
      expect(endpoints[0]?.previous_secret_expires_at).toBeGreaterThan(Date.now() / 1000);

      const order = await client.orders.create({ amount: 5000, currency: 'INR' });
      const started = await client.payments.createS2S({
        ...customer,
        order_id: order.id,
        method: 'netbanking',
        bank: 'HDFC',
        return_url: `${shop.url}/return`,
      });
      const fields = await pay(started.payment_id, 'pending_success');
      const back = await fetch(`${shop.url}/return`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
      const text = await back.text();
      expect(text).toContain('id="payment-status">pending<');
      expect(text).toContain('Your bank is confirming your payment');
      expect(text).toContain('Please do not pay again');
      expect(text).not.toContain('Payment not completed');
      expect(text).toContain('name="viewport"');
    } finally {
      await shop.close();
    }
  });

  it('gives up on an unreachable Kosh with a connection error, and answers API errors typed', async () => {
    const nowhere = new Kosh({
      ...keys(merchant),
      baseUrl: 'http://127.0.0.1:9',
      maxRetries: 1,
      maxBackoffMs: 10,
    });
    await expect(nowhere.orders.retrieve('order_x')).rejects.toBeInstanceOf(KoshConnectionError);
    const error = await kosh.orders.retrieve('order_0000000000000000000000000x').catch((caught) => caught);
    expect(error).toBeInstanceOf(KoshError);
    expect(error).toMatchObject({ status: 404, code: 'resource_not_found', type: 'invalid_request_error' });
    expect(error.requestId).toMatch(/^req_/);
    expect(error.docUrl).toMatch(/\/docs\/errors#resource_not_found$/);
    const invalid = await kosh.orders
      .create({ amount: 5000, currency: 'INR', receipt: '' })
      .catch((caught) => caught);
    expect(invalid).toMatchObject({ status: 400, code: 'invalid_field', field: 'receipt' });
  });

  describe('verification', () => {
    let receiver: TestReceiver;
    let webhookSecret: string;

    beforeAll(async () => {
      receiver = await TestReceiver.start();
      const endpoint = await kosh.webhookEndpoints.create({
        url: receiver.url('/kosh'),
        enabled_events: ['payment.captured'],
      });
      webhookSecret = endpoint.secret!;
      expect(webhookSecret).toMatch(/^whsec_/);
      return () => receiver.close();
    });

    it('verifies a real webhook and refuses a tampered one or a wrong secret', async () => {
      const order = await kosh.orders.create({ amount: 5000, currency: 'INR' });
      const started = await kosh.payments.createS2S({
        ...customer,
        order_id: order.id,
        method: 'netbanking',
        bank: 'ICIC',
      });
      await pay(started.payment_id, 'success');
      await drain(harness());
      const delivered = receiver.received.find((webhook) => webhook.body.includes(started.payment_id));
      expect(delivered).toBeDefined();
      const event = kosh.webhooks.verify(delivered!.body, delivered!.headers, webhookSecret);
      expect(event).toMatchObject({ type: 'payment.captured', id: delivered!.headers['webhook-id'] });
      expect(kosh.webhooks.verify(Buffer.from(delivered!.body), delivered!.headers, webhookSecret).id).toBe(
        event.id,
      );
      const tampered = delivered!.body.replace('"captured"', '"failed"');
      expect(tampered).not.toBe(delivered!.body);
      expect(() => kosh.webhooks.verify(tampered, delivered!.headers, webhookSecret)).toThrow();
      const otherSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
      expect(() => kosh.webhooks.verify(delivered!.body, delivered!.headers, otherSecret)).toThrow();
    });

    it('verifies a real return POST and refuses a tampered one', async () => {
      const order = await kosh.orders.create({ amount: 5000, currency: 'INR' });
      const started = await kosh.payments.createS2S({
        ...customer,
        order_id: order.id,
        method: 'wallet',
        wallet: 'PAYZAPP',
      });
      const fields = await pay(started.payment_id, 'failure');
      expect(fields).toMatchObject({ payment_id: started.payment_id, order_id: order.id, status: 'failed' });
      const secret = await kosh.returns.signingSecret();
      expect(secret).toMatch(/^rss_/);
      expect(kosh.returns.verify(fields, secret)).toBe(true);
      expect(kosh.returns.verify({ ...fields, status: 'captured' }, secret)).toBe(false);
      const flipped = `${fields.signature!.slice(0, -1)}${fields.signature!.endsWith('0') ? '1' : '0'}`;
      expect(kosh.returns.verify({ ...fields, signature: flipped }, secret)).toBe(false);
      expect(kosh.returns.verify({ ...fields, signature: 'zz' }, secret)).toBe(false);
      expect(kosh.returns.verify({ ...fields, signature: undefined }, secret)).toBe(false);
      expect(kosh.returns.verify(fields, 'rss_another')).toBe(false);
    });
  });
});
