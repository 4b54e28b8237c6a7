import { beforeAll, describe, expect, it } from 'vitest';
import { createPaymentsRepo } from '../../src/modules/payments/payments.repo.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { createOrder, eventsOf, paymentBody, RETURN_URL, returnFields } from '../helpers/payments.js';
import { decodeQr } from '../helpers/qr.js';
import { start, upiBody, upiSandboxHelpers } from '../helpers/upi-sandbox.js';

/**
 * UPI payments in the sandbox: intent and QR starts, the sandbox UPI app's choices, deadlines and
 * late answers, refunds, idempotency, and malformed UPI fields refused.
 */
describeEachDatabase('UPI payments (sandbox)', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant('Chai Point');
  });
  const { fetchPayment, simulate, runSync, eventTypes } = upiSandboxHelpers(harness, () => merchant);

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

  it('moves updated_at only when what the payment shows changes, not each time the reconciler asks', async () => {
    const { paymentId } = await start(harness(), merchant, { flow: 'qr', expiry_minutes: 5 });
    const asked = async () =>
      (
        await harness().container.db.query<{ sync_attempts: number }>(
          'SELECT sync_attempts FROM payments WHERE id = $1',
          [paymentId],
        )
      )[0]!.sync_attempts;
    await runSync(301);
    const failed = await fetchPayment(paymentId);
    expect(failed).toMatchObject({ status: 'failed', error_code: 'upi_expired' });
    const [event] = (await eventsOf(harness(), merchant.id)).filter(
      (e) => e.type === 'payment.failed' && e.payload.payment.id === paymentId,
    );
    expect(event!.payload.payment.updated_at).toBe(failed.updated_at);
    // Through the late-authorisation window the bank is asked again, and has nothing new to say.
    const before = await asked();
    for (let i = 0; i < 3; i++) await runSync(6 * 3600);
    expect(await asked()).toBeGreaterThan(before);
    expect(await fetchPayment(paymentId)).toEqual(failed);
  });

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

  it("makes the sandbox UPI app's 'expire' final: no new token, no later choice; upi_expired at expires_at", async () => {
    const { paymentId } = await start(harness(), merchant, { flow: 'intent', expiry_minutes: 5 });
    const app = `/v1/payments/${paymentId}/upi-simulator/`;
    const tokenOf = (body: string) => /name="token" value="([^"]+)"/.exec(body)?.[1];
    const first = tokenOf((await harness().request('GET', app)).body);
    expect(first).toBeDefined();
    const expired = await harness().request('POST', app, { form: { token: first!, choice: 'expire' } });
    expect(expired.statusCode).toBe(200);
    expect(expired.body).toContain('Nothing was sent');
    // The choice is held by the database: the token is used up and no new one can be set.
    const [row] = await harness().container.db.query<{ choice: string | null; token: Buffer | null }>(
      `SELECT provider_data ->> 'choice' AS choice, auth_token_hash AS token FROM payments WHERE id = $1`,
      [paymentId],
    );
    expect(row).toEqual({ choice: 'expire', token: null });
    const repo = createPaymentsRepo();
    expect(await repo.setTokenHash(harness().container.db, paymentId, Buffer.alloc(32, 1))).toBe(false);
    // Reopening the app offers no token; a later choice (the used token, or none valid) is refused.
    const reopened = await harness().request('GET', app);
    expect(reopened.statusCode).toBe(200);
    expect(tokenOf(reopened.body)).toBeUndefined();
    expect(reopened.body).toContain('upi_expired');
    for (const [token, choice] of [
      [first!, 'success'],
      ['not-a-token', 'success'],
      [first!, 'expire'],
    ] as const) {
      const later = await harness().request('POST', app, { form: { token, choice } });
      expect(later.statusCode, later.body).toBe(200);
      expect(later.body).not.toContain('name="token"');
      expect(later.body).toContain('upi_expired');
    }
    expect(await fetchPayment(paymentId)).toMatchObject({ status: 'created' });
    await runSync(299);
    expect((await fetchPayment(paymentId)).status).toBe('created');
    await runSync(2);
    expect(await fetchPayment(paymentId)).toMatchObject({ status: 'failed', error_code: 'upi_expired' });
    expect(await eventTypes(paymentId)).toEqual(['payment.failed']);
  });

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
