import { beforeAll, describe, expect, it } from 'vitest';
import { verifyReturn } from '../../src/modules/payments/return-signature.js';
import { describeEachDatabase, type Harness, type TestAccount } from '../helpers/harness.js';
import { proprietorBody } from '../helpers/onboarding.js';
import { createOrder, eventsOf, paymentBody, RETURN_URL, returnFields } from '../helpers/payments.js';
import { decodeQr } from '../helpers/qr.js';

interface Next {
  action: string;
  url?: string;
  qr_image?: string;
  expires_at?: number;
}

const upiBody = (orderId: string, upi: Record<string, unknown>, overrides: Record<string, unknown> = {}) => {
  const { bank: _bank, ...body } = paymentBody(orderId, { method: 'upi', upi, ...overrides });
  return body;
};

async function start(
  h: Harness,
  merchant: TestAccount,
  upi: Record<string, unknown>,
  options: { form?: boolean; overrides?: Record<string, unknown>; amount?: number } = {},
) {
  const orderId = await createOrder(h, merchant, options.amount ?? 5000);
  const body = upiBody(orderId, upi, { amount: options.amount ?? 5000, ...options.overrides });
  const response = await h.request(
    'POST',
    '/v1/payments/create/s2s/',
    options.form ? { auth: merchant, form: formOf(body) } : { auth: merchant, json: body },
  );
  expect(response.statusCode, response.body).toBe(200);
  const answer = response.json() as { payment_id: string; next: Next[] };
  return { orderId, paymentId: answer.payment_id, next: answer.next };
}

/** `upi[flow]=qr` and friends: the form spelling of a JSON body, one level deep. */
function formOf(body: Record<string, unknown>): Record<string, string> {
  const form: Record<string, string> = {};
  for (const [key, value] of Object.entries(body)) {
    if (value && typeof value === 'object') {
      for (const [inner, v] of Object.entries(value)) form[`${key}[${inner}]`] = String(v);
    } else form[key] = String(value);
  }
  return form;
}

describeEachDatabase('UPI payments (sandbox)', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant('Chai Point');
  });

  const fetchPayment = async (id: string) =>
    (await harness().request('GET', `/v1/payments/${id}/`, { auth: merchant })).json().data;

  async function simulate(paymentId: string, choice: string) {
    const page = await harness().request('GET', `/v1/payments/${paymentId}/upi-simulator/`);
    expect(page.statusCode, page.body).toBe(200);
    const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1];
    expect(token).toBeDefined();
    return harness().request('POST', `/v1/payments/${paymentId}/upi-simulator/`, {
      form: { token: token as string, choice },
    });
  }

  it('reports UPI intent on for a sandbox account, collect off', async () => {
    const methods = (await harness().request('GET', '/v1/payments/methods/', { auth: merchant })).json();
    expect(methods.upi).toEqual({
      intent: true,
      collect: false,
      payer_account_type: { bank_account: true, credit_card: false },
    });
  });

  for (const form of [false, true]) {
    describe(form ? 'form bodies' : 'JSON bodies', () => {
      it('starts an intent payment: the upi://pay link, then Kosh’s UPI page', async () => {
        const before = harness().clock.now().getTime();
        const { paymentId, next } = await start(
          harness(),
          merchant,
          { flow: 'intent' },
          { form, amount: 123456 },
        );
        expect(next).toHaveLength(2);
        expect(next[0]).toEqual({
          action: 'upi_intent',
          url: expect.stringMatching(/^upi:\/\/pay\?/),
          expires_at: Math.floor(before / 1000) + 600,
        });
        const link = new URL(next[0]!.url as string);
        expect(Object.fromEntries(link.searchParams)).toEqual({
          pa: 'sandbox.payee@kosh',
          pn: 'Kosh Sandbox',
          tr: paymentId,
          am: '1234.56',
          cu: 'INR',
          tn: 'Two notebooks',
        });
        expect(next[1]).toEqual({
          action: 'redirect',
          url: `http://localhost:3000/v1/payments/${paymentId}/authentication/`.replace(
            'http://localhost:3000',
            harness().container.config.publicUrl,
          ),
        });
        expect(await fetchPayment(paymentId)).toMatchObject({
          method: 'upi',
          status: 'created',
          bank: null,
          wallet: null,
          upi: { flow: 'intent', vpa: null, payer_vpa: null, expires_at: next[0]!.expires_at },
        });
      });

      it('starts a QR payment whose image decodes to exactly its link', async () => {
        const { next } = await start(harness(), merchant, { flow: 'qr', expiry_minutes: 15 }, { form });
        expect(next[0]).toMatchObject({ action: 'upi_qr', url: expect.stringMatching(/^upi:\/\/pay\?/) });
        expect(next[0]!.qr_image).toMatch(/^data:image\/png;base64,/);
        expect(decodeQr(next[0]!.qr_image as string)).toBe(next[0]!.url);
        expect(next[0]!.expires_at).toBe(Math.floor(harness().clock.now().getTime() / 1000) + 900);
        expect(next[1]!.action).toBe('redirect');
      });
    });
  }

  it('captures a QR payment paid in the sandbox UPI app, once, and returns the browser signed', async () => {
    const { paymentId, orderId } = await start(harness(), merchant, { flow: 'qr' });
    const page = await harness().request('GET', `/v1/payments/${paymentId}/authentication/`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Waiting for your payment');
    expect(page.body).toContain('upi-simulator');
    const status = await harness().request('GET', `/v1/payments/${paymentId}/upi-status/`);
    expect(status.json()).toEqual({ status: 'created', final: false });

    const chosen = await simulate(paymentId, 'success');
    expect(chosen.statusCode).toBe(200);
    expect(chosen.body).toContain('The payment is now captured');
    expect((await harness().request('GET', `/v1/payments/${paymentId}/upi-status/`)).json()).toEqual({
      status: 'captured',
      final: true,
    });
    const back = await harness().request('GET', `/v1/payments/${paymentId}/authentication/`);
    expect(back.body).toContain(`action="${RETURN_URL}"`);
    expect(returnFields(back.body)).toMatchObject({
      payment_id: paymentId,
      order_id: orderId,
      status: 'captured',
    });

    const events = (await eventsOf(harness(), merchant.id)).filter((e) => e.payload.payment.id === paymentId);
    expect(events.map((e) => e.type)).toEqual(['payment.pending', 'payment.captured', 'order.paid']);
    expect(events[1]!.payload.payment).toMatchObject({ method: 'upi', upi: { flow: 'qr' } });
  });

  it('has the sandbox asked about an untouched UPI payment only at its deadline (or when a collect settles)', async () => {
    const { paymentId, next } = await start(harness(), merchant, { flow: 'qr', expiry_minutes: 7 });
    const [row] = await harness().container.db.query<{ next_sync_at: Date }>(
      'SELECT next_sync_at FROM payments WHERE id = $1',
      [paymentId],
    );
    expect(Math.floor(row!.next_sync_at.getTime() / 1000)).toBe(next[0]!.expires_at);
  });

  it('fails an unpaid payment with upi_expired at expires_at', async () => {
    const { paymentId } = await start(harness(), merchant, { flow: 'intent', expiry_minutes: 5 });
    const sync = harness().container.jobs.paymentSync;
    harness().clock.advance(299_000);
    await sync.run(new AbortController().signal);
    expect((await fetchPayment(paymentId)).status).toBe('created');
    harness().clock.advance(2_000);
    await sync.run(new AbortController().signal);
    expect(await fetchPayment(paymentId)).toMatchObject({ status: 'failed', error_code: 'upi_expired' });
  });

  const runSync = async (seconds: number) => {
    harness().clock.advance(seconds * 1000);
    await harness().container.jobs.paymentSync.run(new AbortController().signal);
  };
  const eventTypes = async (paymentId: string) =>
    (await eventsOf(harness(), merchant.id))
      .filter((event) => event.payload.payment.id === paymentId)
      .map((event) => event.type);

  const outcomes: [choice: string, status: string, errorCode: string | null, events: string[]][] = [
    ['failure', 'failed', 'payment_declined', ['payment.pending', 'payment.failed']],
    ['cancel', 'failed', 'payment_cancelled', ['payment.pending', 'payment.failed']],
    ['pending_success', 'captured', null, ['payment.pending', 'payment.captured', 'order.paid']],
    ['pending_failure', 'failed', 'payment_declined', ['payment.pending', 'payment.failed']],
    ['expire', 'failed', 'upi_expired', ['payment.failed']],
  ];
  for (const [choice, status, errorCode, events] of outcomes) {
    it(`settles the sandbox UPI app's '${choice}' as ${status}${errorCode ? ` (${errorCode})` : ''}`, async () => {
      const settle = harness().container.config.payments.sandboxSettleSeconds;
      const { paymentId } = await start(harness(), merchant, { flow: 'intent', expiry_minutes: 5 });
      const chosen = await simulate(paymentId, choice);
      expect(chosen.statusCode).toBe(200);
      if (choice.startsWith('pending_')) {
        expect((await fetchPayment(paymentId)).status).toBe('pending');
        await runSync(settle + 1);
      }
      if (choice === 'expire') {
        expect(chosen.body).toContain('Nothing was sent');
        await runSync(299);
        expect((await fetchPayment(paymentId)).status).toBe('created');
        await runSync(2);
      }
      expect(await fetchPayment(paymentId)).toMatchObject({ status, error_code: errorCode });
      expect(await eventTypes(paymentId)).toEqual(events);
      // Settled: the app offers nothing more, and asking again changes nothing.
      const again = await harness().request('GET', `/v1/payments/${paymentId}/upi-simulator/`);
      expect(again.body).not.toContain('name="token"');
      await runSync(60);
      expect(await eventTypes(paymentId)).toEqual(events);
    });
  }

  it('fails a late success with upi_expired at expires_at, then captures it when the bank answers', async () => {
    const settle = harness().container.config.payments.sandboxSettleSeconds;
    const { paymentId, orderId } = await start(harness(), merchant, { flow: 'qr', expiry_minutes: 5 });
    await simulate(paymentId, 'late_success');
    expect((await fetchPayment(paymentId)).status).toBe('pending');
    await runSync(301);
    expect(await fetchPayment(paymentId)).toMatchObject({ status: 'failed', error_code: 'upi_expired' });
    // The reconciler keeps asking through the late window: the bank's late yes captures the order.
    for (let waited = 0; waited <= settle + 300; waited += 60) await runSync(60);
    expect(await fetchPayment(paymentId)).toMatchObject({ status: 'captured', error_code: null });
    const order = (await harness().request('GET', `/v1/orders/${orderId}/`, { auth: merchant })).json().data;
    expect(order.status).toBe('paid');
    expect(await eventTypes(paymentId)).toEqual([
      'payment.pending',
      'payment.failed',
      'payment.captured',
      'order.paid',
    ]);
  });

  it('refunds a late success whose order was paid by another payment meanwhile', async () => {
    const settle = harness().container.config.payments.sandboxSettleSeconds;
    const { paymentId, orderId } = await start(harness(), merchant, { flow: 'intent', expiry_minutes: 5 });
    await simulate(paymentId, 'late_success');
    await runSync(301);
    expect((await fetchPayment(paymentId)).error_code).toBe('upi_expired');
    // The customer pays the same order again, by QR this time.
    const second = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth: merchant,
      json: upiBody(orderId, { flow: 'qr' }),
    });
    expect(second.statusCode, second.body).toBe(200);
    const secondId = second.json().payment_id as string;
    await simulate(secondId, 'success');
    expect((await fetchPayment(secondId)).status).toBe('captured');
    for (let waited = 0; waited <= settle + 300; waited += 60) await runSync(60);
    const late = await fetchPayment(paymentId);
    expect(late).toMatchObject({ status: 'failed', error_code: 'order_already_paid' });
    expect(late.authorised_at).not.toBeNull();
    // The customer's money goes back without anyone acting (the refund job's automatic refund).
    await harness().container.jobs.refundSync.run(new AbortController().signal);
    const refunds = await harness().container.db.query<{ amount: string }>(
      'SELECT amount FROM refunds WHERE payment_id = $1',
      [paymentId],
    );
    expect(refunds.map((refund) => Number(refund.amount))).toEqual([5000]);
  });

  it('refunds a captured UPI payment', async () => {
    const { paymentId } = await start(harness(), merchant, { flow: 'qr' });
    await simulate(paymentId, 'success');
    const refund = await harness().request('POST', `/v1/payments/${paymentId}/refunds/`, {
      auth: merchant,
      json: { amount: 2000 },
    });
    expect(refund.statusCode, refund.body).toBe(200);
    expect(refund.json().data).toMatchObject({ payment_id: paymentId, amount: 2000 });
    expect(await fetchPayment(paymentId)).toMatchObject({ amount_refunded: 2000, refund_status: 'partial' });
  });

  it('answers a repeated Idempotency-Key with the same payment and the same next', async () => {
    const orderId = await createOrder(harness(), merchant);
    const send = () =>
      harness().request('POST', '/v1/payments/create/s2s/', {
        auth: merchant,
        json: upiBody(orderId, { flow: 'qr' }),
        headers: { 'idempotency-key': `upi-${orderId}` },
      });
    const first = await send();
    const again = await send();
    expect(first.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    const rows = await harness().container.db.query('SELECT id FROM payments WHERE order_id = $1', [orderId]);
    expect(rows).toHaveLength(1);
  });

  it('takes collect once its partner enables it: success@kosh and failure@kosh settle by themselves', async () => {
    const partner = await harness().partner('UPI Partner');
    const created = await harness().request('POST', '/v1/api-portal/merchants/', {
      auth: partner,
      json: proprietorBody(),
    });
    expect(created.statusCode, created.body).toBe(200);
    const { id: mid, credentials } = created.json().data;
    const auth = `Basic ${Buffer.from(`${credentials.api_key}:${credentials.secret_key}`).toString('base64')}`;
    const shop = { id: '', auth } as unknown as TestAccount;

    const orderId = await createOrder(harness(), shop);
    const refused = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth,
      json: upiBody(orderId, { flow: 'collect', vpa: 'success@kosh' }),
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'method_not_enabled', field: 'upi.flow' });

    const url = `/v1/api-portal/merchants/${mid}/methods/`;
    const on = await harness().request('PATCH', url, { auth: partner, json: { upi: { collect: true } } });
    expect(on.statusCode, on.body).toBe(200);
    expect(on.json().data.upi).toEqual({
      intent: true,
      collect: true,
      payer_account_type: { bank_account: true, credit_card: false },
    });
    expect((await harness().request('GET', '/v1/payments/methods/', { auth })).json().upi.collect).toBe(true);

    const settle = harness().container.config.payments.sandboxSettleSeconds;
    const started = await Promise.all(
      ['success@kosh', 'failure@kosh', 'someone@okbank'].map(async (vpa) => {
        const order = await createOrder(harness(), shop);
        const response = await harness().request('POST', '/v1/payments/create/s2s/', {
          auth,
          form: formOf(upiBody(order, { flow: 'collect', vpa, expiry_minutes: 5 })),
        });
        expect(response.statusCode, response.body).toBe(200);
        const answer = response.json() as { payment_id: string; next: Next[] };
        expect(answer.next[0]).toEqual({ action: 'upi_collect', expires_at: expect.any(Number) });
        expect(answer.next[1]!.action).toBe('redirect');
        return answer.payment_id;
      }),
    );
    const [success, failure, other] = started as [string, string, string];
    const fetchShop = async (id: string) =>
      (await harness().request('GET', `/v1/payments/${id}/`, { auth })).json().data;
    expect((await fetchShop(success)).upi).toMatchObject({ flow: 'collect', vpa: 'su*****@kosh' });
    await runSync(settle + 1);
    expect(await fetchShop(success)).toMatchObject({
      status: 'captured',
      upi: { flow: 'collect', payer_vpa: 'su*****@kosh' },
    });
    expect(await fetchShop(failure)).toMatchObject({ status: 'failed', error_code: 'payment_declined' });
    expect((await fetchShop(other)).status).toBe('created');
    // Any other VPA waits for the sandbox UPI app.
    const page = await harness().request('GET', `/v1/payments/${other}/upi-simulator/`);
    const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1] as string;
    await harness().request('POST', `/v1/payments/${other}/upi-simulator/`, {
      form: { token, choice: 'success' },
    });
    expect((await fetchShop(other)).status).toBe('captured');

    const off = await harness().request('PATCH', url, {
      auth: partner,
      json: { upi: { intent: false, collect: false } },
    });
    expect(off.json().data.upi).toEqual({
      intent: false,
      collect: false,
      payer_account_type: { bank_account: false, credit_card: false },
    });
    const qr = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth,
      json: upiBody(await createOrder(harness(), shop), { flow: 'qr' }),
    });
    expect(qr.json().error).toMatchObject({ code: 'method_not_enabled', field: 'upi.flow' });
  });

  it('shows the outcome on Kosh’s page when the payment has no return_url', async () => {
    const { paymentId } = await start(
      harness(),
      merchant,
      { flow: 'qr' },
      { overrides: { return_url: undefined } },
    );
    await simulate(paymentId, 'success');
    const page = await harness().request('GET', `/v1/payments/${paymentId}/authentication/`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Payment successful');
    expect(page.body).not.toContain('kosh-return');
  });

  for (const withReturn of [true, false]) {
    it(`works without script: the QR and the app button are markup, and the refresh fallback reaches ${withReturn ? 'the signed return' : 'the outcome'}`, async () => {
      const { paymentId, orderId } = await start(
        harness(),
        merchant,
        { flow: withReturn ? 'qr' : 'intent' },
        withReturn ? {} : { overrides: { return_url: undefined } },
      );
      const url = `/v1/payments/${paymentId}/authentication/`;
      const simulatorUrl = `${harness().container.config.publicUrl}/v1/payments/${paymentId}/upi-simulator/`;
      const open = await harness().request('GET', url);
      expect(open.statusCode).toBe(200);
      // The fallback: in the head, only without script, reloading this same page every 5 seconds.
      const head = /<head>([\s\S]*)<\/head>/.exec(open.body)?.[1] ?? '';
      expect(head).toContain('<noscript><meta http-equiv="refresh" content="5"></noscript>');
      expect(open.body.match(/http-equiv="refresh"/g)).toHaveLength(1);
      // A reload asks Kosh again (never a cache); the CSP lets the QR's data: image in.
      expect(open.headers['cache-control']).toBe('no-store');
      expect(String(open.headers['content-security-policy'])).toMatch(/(^|; )img-src data:(;|$)/);
      // Without its script the page still shows everything the customer acts on.
      const markup = open.body.replace(/<script[^>]*>[\s\S]*?<\/script>/g, '');
      expect(markup).not.toContain('<script');
      expect(markup).not.toMatch(/<[^>]+\son[a-z]+\s*=/i);
      const images = [...markup.matchAll(/<img[^>]*\ssrc="([^"]*)"/g)].map((match) => match[1] as string);
      expect(images).toHaveLength(1);
      expect(images[0]).toMatch(/^data:image\/png;base64,/);
      expect(decodeQr(images[0] as string)).toBe(simulatorUrl);
      expect(markup).toContain(`<a class="button" id="open-app" href="${simulatorUrl}">Open UPI app</a>`);
      // Refreshing while the payment is open shows the same wait again.
      const again = await harness().request('GET', url);
      expect(again.statusCode).toBe(200);
      expect(again.body).toContain('Waiting for your payment');
      expect(again.body).toContain('<noscript><meta http-equiv="refresh" content="5"></noscript>');

      // The customer pays on their phone; the next refresh leads on, and stops refreshing.
      await simulate(paymentId, 'success');
      const back = await harness().request('GET', url);
      expect(back.statusCode).toBe(200);
      expect(back.body).not.toContain('http-equiv="refresh"');
      if (!withReturn) {
        expect(back.body).toContain('Payment successful');
        expect(back.body).not.toContain('<form');
        return;
      }
      const form = /<form id="kosh-return" method="POST" action="([^"]+)">([\s\S]*?)<\/form>/.exec(back.body);
      expect(form?.[1]).toBe(RETURN_URL);
      // Without script the customer sends the return with a button; the CSP lets it go to the merchant.
      expect(form?.[2]).toContain(
        '<noscript><button type="submit">Continue to the merchant</button></noscript>',
      );
      expect(String(back.headers['content-security-policy'])).toContain(
        `form-action 'self' http://localhost:3000 ${new URL(RETURN_URL).origin}`,
      );
      const fields = returnFields(back.body);
      expect(fields).toMatchObject({ payment_id: paymentId, order_id: orderId, status: 'captured' });
      const secret = (
        await harness().request('GET', '/v1/payments/return-signing-secret/', { auth: merchant })
      ).json().data.secret as string;
      expect(verifyReturn(secret, fields as Parameters<typeof verifyReturn>[1])).toBe(true);
    });
  }

  // A live payment refused by the sandbox UPI app: the shared UPI suite (test/helpers/providers/upi-suite.ts).
  it('keeps the sandbox UPI app and the status away from live payments and unknown ids', async () => {
    for (const path of ['upi-simulator', 'upi-status']) {
      const response = await harness().request('GET', `/v1/payments/pay_00000000000000000000000000/${path}/`);
      expect(response.statusCode).toBe(404);
    }
    const { paymentId } = await start(harness(), merchant, { flow: 'qr' });
    const forged = await harness().request('POST', `/v1/payments/${paymentId}/upi-simulator/`, {
      form: { token: 'forged', choice: 'success' },
    });
    expect(forged.statusCode).toBe(409);
    expect((await fetchPayment(paymentId)).status).toBe('created');
  });

  it('refuses malformed UPI fields with the field named, and changes nothing', async () => {
    const orderId = await createOrder(harness(), merchant);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ flow: 'collect', vpa: 'not-a-vpa' }, 'invalid_vpa', 'upi.vpa'],
      [{ flow: 'intent', expiry_minutes: 4 }, 'invalid_field', 'upi.expiry_minutes'],
      [{ flow: 'intent', expiry_minutes: 61 }, 'invalid_field', 'upi.expiry_minutes'],
      [{ flow: 'intent', vpa: 'a@b' }, 'invalid_field', 'upi.vpa'],
      [{ flow: 'collect' }, 'missing_field', 'upi.vpa'],
      [{ flow: 'collect', vpa: `${'v'.repeat(100)}@kosh` }, 'invalid_vpa', 'upi.vpa'],
    ];
    for (const [upi, code, field] of cases) {
      const response = await harness().request('POST', '/v1/payments/create/s2s/', {
        auth: merchant,
        json: upiBody(orderId, upi),
      });
      expect(response.statusCode, JSON.stringify(upi)).toBe(400);
      expect(response.json().error, JSON.stringify(upi)).toMatchObject({ code, field });
    }
    for (const [overrides, code, field] of [
      [{ upi: undefined }, 'missing_field', 'upi'],
      [{ bank: 'ICIC' }, 'invalid_field', 'bank'],
      [{ currency: 'USD' }, 'invalid_field', 'currency'],
    ] as const) {
      const response = await harness().request('POST', '/v1/payments/create/s2s/', {
        auth: merchant,
        json: { ...upiBody(orderId, { flow: 'qr' }), ...overrides },
      });
      expect(response.statusCode, JSON.stringify(overrides)).toBe(400);
      expect(response.json().error, JSON.stringify(overrides)).toMatchObject({ code, field });
    }
    const netbankingWithoutReturn = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth: merchant,
      json: paymentBody(orderId, { return_url: undefined }),
    });
    expect(netbankingWithoutReturn.json().error).toMatchObject({
      code: 'missing_field',
      field: 'return_url',
    });
    const order = (await harness().request('GET', `/v1/orders/${orderId}/`, { auth: merchant })).json().data;
    expect(order.status).toBe('created');
    const rows = await harness().container.db.query('SELECT id FROM payments WHERE order_id = $1', [orderId]);
    expect(rows).toEqual([]);
  });
});
