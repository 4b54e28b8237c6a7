import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase, type Harness, type TestAccount } from '../helpers/harness.js';
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

  it('refuses collect until the partner enables it, then settles success@kosh by itself', async () => {
    const orderId = await createOrder(harness(), merchant);
    const refused = await harness().request('POST', '/v1/payments/create/s2s/', {
      auth: merchant,
      json: upiBody(orderId, { flow: 'collect', vpa: 'success@kosh' }),
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'method_not_enabled', field: 'upi.flow' });
  });

  it('refuses malformed UPI fields with the field named, and changes nothing', async () => {
    const orderId = await createOrder(harness(), merchant);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ flow: 'collect', vpa: 'not-a-vpa' }, 'invalid_vpa', 'upi.vpa'],
      [{ flow: 'intent', expiry_minutes: 4 }, 'invalid_field', 'upi.expiry_minutes'],
      [{ flow: 'intent', expiry_minutes: 61 }, 'invalid_field', 'upi.expiry_minutes'],
      [{ flow: 'intent', vpa: 'a@b' }, 'invalid_field', 'upi.vpa'],
    ];
    for (const [upi, code, field] of cases) {
      const response = await harness().request('POST', '/v1/payments/create/s2s/', {
        auth: merchant,
        json: upiBody(orderId, upi),
      });
      expect(response.statusCode, JSON.stringify(upi)).toBe(400);
      expect(response.json().error, JSON.stringify(upi)).toMatchObject({ code, field });
    }
    const order = (await harness().request('GET', `/v1/orders/${orderId}/`, { auth: merchant })).json().data;
    expect(order.status).toBe('created');
  });
});
