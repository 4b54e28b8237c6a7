import { beforeAll, expect, it } from 'vitest';
import { verifyReturn } from '../../src/modules/payments/return-signature.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { proprietorBody } from '../helpers/onboarding.js';
import { createOrder, RETURN_URL, returnFields } from '../helpers/payments.js';
import { decodeQr } from '../helpers/qr.js';
import { formOf, type Next, start, upiBody, upiSandboxHelpers } from '../helpers/upi-sandbox.js';

/**
 * UPI collect once a partner enables it, and Kosh's UPI page: the outcome without a return_url, the
 * page without script, and the sandbox UPI app and status kept from live payments and unknown ids.
 */
describeEachDatabase('UPI payments (sandbox)', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant('Chai Point');
  });
  const { fetchPayment, simulate, runSync } = upiSandboxHelpers(harness, () => merchant);

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
    // A HEAD (a link checker, a prefetcher) leaves the open app's token as it is.
    const head = await harness().request('HEAD', `/v1/payments/${other}/upi-simulator/`);
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    const chosen = await harness().request('POST', `/v1/payments/${other}/upi-simulator/`, {
      form: { token, choice: 'success' },
    });
    expect(chosen.statusCode).toBe(200);
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
        `form-action 'self' http://localhost:3000 ${new URL(RETURN_URL).protocol};`,
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
});
