import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { maskVpa } from '../../src/connectors/upi.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { createOrder, paymentBody } from '../helpers/payments.js';
import { FakeRazorpay } from '../helpers/providers/razorpay-fake.js';
import { openUpiAttempt } from '../helpers/providers/razorpay-fake-upi.js';
import { razorpayUnderTest } from '../helpers/providers/razorpay-under-test.js';
import type { Fault, Phase } from '../helpers/providers/suite.js';
import { decodeQr } from '../helpers/qr.js';

/**
 * UPI through a merchant's own Razorpay account, over real HTTP against the local Razorpay
 * (docs/connectors.md, "UPI through Razorpay"): intent, QR and collect started at the merchant's
 * S2S call and captured once the simulated customer approves in a UPI app; a decline; Razorpay's
 * webhooks before, after or instead of Kosh's own question; a forged webhook; Razorpay down,
 * answering HTML or garbage, or silent on each call, with the reconciler finishing afterwards;
 * expiry; and a refund.
 */

let fake: FakeRazorpay;
beforeAll(async () => {
  fake = await FakeRazorpay.start();
  // Held past Kosh's deadline (KOSH_PROVIDER_TIMEOUT_MS below), and no longer.
  fake.timeoutMs = 400;
});
afterAll(() => fake?.close());
const provider = razorpayUnderTest(() => fake);

interface Next {
  action: string;
  url?: string;
  qr_image?: string;
  expires_at?: number;
}

describeEachDatabase(
  'UPI through Razorpay',
  (harness) => {
    let merchant: TestAccount;
    let base: string;
    let providerWebhooks: string;

    beforeAll(async () => {
      const h = harness();
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(h.app.server.address() as { port: number }).port}`;
      merchant = await h.liveKey(await h.merchant('Razorpay UPI shop'));
      const { methods } = h.container.services;
      const enabled = {
        ...(await methods.get(merchant.id, 'test')),
        upi: { intent: true, collect: true, payer_account_type: { bank_account: true, credit_card: false } },
      };
      await h.container.db.transaction((tx) => methods.set(tx, merchant.id, 'live', enabled));
      const added = await h.request('POST', '/v1/connector-accounts/', {
        auth: merchant,
        json: { connector: 'razorpay', credentials: provider.credentials },
      });
      expect(added.statusCode, added.body).toBe(200);
      providerWebhooks = added.json().data.webhook_url.replace('http://localhost:3000', base);
      provider.setWebhookUrl(providerWebhooks);
    });

    afterAll(() => {
      harness().app.server.closeAllConnections();
    });

    afterEach(async () => {
      for (const phase of ['initiate', 'pay', 'status', 'refund'] as const)
        provider.setFault(phase, undefined);
      provider.setWebhookTiming('after');
      provider.setWebhookUrl(providerWebhooks);
      await fake.webhooksDelivered();
    });

    const api = async (method: 'GET' | 'POST', path: string, json?: unknown) => {
      const response = await harness().request(method, path, { auth: merchant, json });
      expect(response.statusCode, `${method} ${path}: ${response.body}`).toBe(200);
      return response.json();
    };
    const payment = async (id: string) => (await api('GET', `/v1/payments/${id}/`)).data;
    const captures = async (id: string) =>
      (
        await harness().container.db.query(
          `SELECT id FROM events WHERE type = 'payment.captured' AND payload->'payment'->>'id' = $1`,
          [id],
        )
      ).length;
    const sync = async (ms = 20_000) => {
      harness().clock.advance(ms);
      await harness().container.jobs.paymentSync.run(new AbortController().signal);
    };

    async function start(flow: 'intent' | 'qr' | 'collect') {
      const orderId = await createOrder(harness(), merchant, 5050);
      const { bank: _bank, ...body } = paymentBody(orderId, {
        amount: 5050,
        method: 'upi',
        upi: flow === 'collect' ? { flow, vpa: provider.upiPayerVpa } : { flow },
      });
      const created = await api('POST', '/v1/payments/create/s2s/', body);
      return { paymentId: created.payment_id as string, next: created.next as Next[] };
    }
    /** Approved in the app and captured; Razorpay's webhook follows Kosh's question. */
    async function captured(flow: 'intent' | 'qr' | 'collect' = 'intent') {
      provider.setWebhookTiming('after');
      const started = await start(flow);
      await provider.upiCustomer(started.paymentId, 'approve');
      await sync();
      await fake.webhooksDelivered();
      expect((await payment(started.paymentId)).status).toBe('captured');
      return started;
    }
    const attemptOf = (paymentId: string) =>
      provider
        .attemptsFor(paymentId)
        .map((attempt) => attempt as unknown as { captured: boolean; bankTransactionId: string | null })
        .find((attempt) => attempt.captured);

    it('offers UPI intent and collect: enabled by the merchant and taken by the connector', async () => {
      const methods = await api('GET', '/v1/payments/methods/');
      expect(methods.upi).toEqual({
        intent: true,
        collect: true,
        payer_account_type: { bank_account: true, credit_card: false },
      });
    });

    it.each(['intent', 'qr', 'collect'] as const)(
      '%s: approved in the UPI app, captured once, with the payer and the RRN',
      async (flow) => {
        const { paymentId, next } = await captured(flow);
        const page = {
          action: 'redirect',
          url: expect.stringContaining(`/v1/payments/${paymentId}/authentication/`),
        };
        if (flow === 'collect') {
          expect(next).toEqual([{ action: 'upi_collect', expires_at: expect.any(Number) }, page]);
        } else {
          expect(next[0]).toMatchObject({
            action: `upi_${flow}`,
            url: expect.stringMatching(/^upi:\/\/pay\?/),
          });
          expect(new URL(next[0]?.url as string).searchParams.get('pa')).toBe(fake.upiPayeeVpa);
          expect(next[1]).toEqual(page);
        }
        if (flow === 'qr') expect(decodeQr(next[0]?.qr_image as string)).toBe(next[0]?.url);
        const rrn = attemptOf(paymentId)?.bankTransactionId;
        expect(rrn).toMatch(/^\d{12}$/);
        expect(await payment(paymentId)).toMatchObject({
          status: 'captured',
          method: 'upi',
          amount: 5050,
          upi: { flow, payer_vpa: maskVpa(provider.upiPayerVpa) },
          bank_reference: rrn,
        });
        // The webhook that followed, and later questions, change nothing more.
        await sync();
        expect(await captures(paymentId)).toBe(1);
        expect(provider.ordersFor(paymentId)).toBe(1);
      },
    );

    it("declined in the app: failed with Razorpay's reason", async () => {
      const { paymentId } = await start('intent');
      await provider.upiCustomer(paymentId, 'decline');
      await sync();
      await fake.webhooksDelivered();
      expect(await payment(paymentId)).toMatchObject({
        status: 'failed',
        error_code: provider.upiDeclineCode,
        error_reason: 'The customer declined the payment in the UPI app.',
      });
      expect(await captures(paymentId)).toBe(0);
    });

    it.each(['before', 'after', 'instead'] as const)(
      "Razorpay's webhook %s Kosh's question: captured once",
      async (timing) => {
        provider.setWebhookTiming(timing);
        const { paymentId } = await start('qr');
        await provider.upiCustomer(paymentId, 'approve');
        if (timing !== 'after') expect((await payment(paymentId)).status).toBe('captured');
        if (timing !== 'instead') await sync();
        await fake.webhooksDelivered();
        expect((await payment(paymentId)).status).toBe('captured');
        await sync();
        expect(await captures(paymentId)).toBe(1);
      },
    );

    it('a forged webhook changes nothing; Kosh asks Razorpay instead', async () => {
      provider.setWebhookTiming('none');
      const { paymentId } = await start('intent');
      await provider.upiCustomer(paymentId, 'approve');
      const before = await payment(paymentId);
      expect(before.status).toBe('created');
      expect(await provider.sendForgedWebhook(paymentId)).toBe(200);
      const after = await payment(paymentId);
      expect([after.status, after.error_code, after.captured_at]).toEqual([
        before.status,
        before.error_code,
        before.captured_at,
      ]);
      expect(await captures(paymentId)).toBe(0);
      await sync();
      expect((await payment(paymentId)).status).toBe('captured');
      expect(await captures(paymentId)).toBe(1);
    });

    it('a full refund of a captured UPI payment: processed once', async () => {
      const { paymentId } = await captured('collect');
      const refund = (await api('POST', `/v1/payments/${paymentId}/refunds/`, {})).data;
      expect(refund).toMatchObject({ status: 'processed', amount: 5050 });
      expect(provider.refundsMadeFor(refund.id)).toBe(1);
      expect(await payment(paymentId)).toMatchObject({ amount_refunded: 5050, refund_status: 'full' });
    });

    const FAULTS: readonly Fault[] = ['reset', 'timeout', 'bad_gateway_html', 'garbage'];
    for (const fault of FAULTS) {
      it(`Razorpay ${fault} on its order: open, nothing failed; Kosh's page starts it on the same order once Razorpay answers`, async () => {
        provider.setFault('initiate', fault);
        const { paymentId, next } = await start('intent');
        expect(next).toEqual([{ action: 'redirect', url: expect.stringContaining('/authentication/') }]);
        await sync();
        expect((await payment(paymentId)).status).toBe('created');
        provider.setFault('initiate', undefined);
        const page = await harness().request('GET', `/v1/payments/${paymentId}/authentication/`);
        expect(page.statusCode, page.body.slice(0, 300)).toBe(200);
        const link = openUpiAttempt(fake, paymentId)?.upi?.link as string;
        expect(page.body).toContain(link.replace(/&/g, '&amp;'));
        await provider.upiCustomer(paymentId, 'approve');
        await sync();
        await fake.webhooksDelivered();
        expect((await payment(paymentId)).status).toBe('captured');
        expect(provider.ordersFor(paymentId)).toBe(1);
        expect(await captures(paymentId)).toBe(1);
      });

      it(`Razorpay ${fault} after it made the collect request: open; the customer pays it; the reconciler captures it once`, async () => {
        provider.setWebhookTiming('none');
        provider.setFault('pay' satisfies Phase, fault);
        const { paymentId, next } = await start('collect');
        expect(next).toEqual([{ action: 'redirect', url: expect.stringContaining('/authentication/') }]);
        expect(provider.attemptsFor(paymentId)).toHaveLength(1);
        provider.setFault('pay', undefined);
        await sync();
        expect((await payment(paymentId)).status).toBe('created');
        await provider.upiCustomer(paymentId, 'approve');
        await sync();
        expect(await payment(paymentId)).toMatchObject({
          status: 'captured',
          upi: { payer_vpa: maskVpa(provider.upiPayerVpa) },
        });
        expect(provider.ordersFor(paymentId)).toBe(1);
        expect(provider.attemptsFor(paymentId).filter((attempt) => attempt.captured)).toHaveLength(1);
        expect(await captures(paymentId)).toBe(1);
      });

      it(`Razorpay ${fault} on status: nothing failed; the reconciler captures it once Razorpay answers`, async () => {
        provider.setWebhookTiming('none');
        const { paymentId } = await start('intent');
        await provider.upiCustomer(paymentId, 'approve');
        provider.setFault('status', fault);
        await sync();
        expect((await payment(paymentId)).status).toBe('created');
        provider.setFault('status', undefined);
        await sync();
        expect((await payment(paymentId)).status).toBe('captured');
        expect(await captures(paymentId)).toBe(1);
      });
    }

    it('nobody pays: failed with upi_expired at its expires_at', async () => {
      const { paymentId, next } = await start('intent');
      const expiresAt = (next[0]?.expires_at as number) * 1000;
      harness().clock.advance(expiresAt - harness().clock.now().getTime() - 1_000);
      await sync(0);
      expect((await payment(paymentId)).status).toBe('created');
      await sync(2_000);
      expect(await payment(paymentId)).toMatchObject({ status: 'failed', error_code: 'upi_expired' });
      expect(await captures(paymentId)).toBe(0);
    });
  },
  () => ({ KOSH_RAZORPAY_BASE_URL: fake.url, KOSH_PROVIDER_TIMEOUT_MS: '300' }),
);
