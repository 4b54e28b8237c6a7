import { afterAll, beforeAll, expect, it } from 'vitest';
import { requestFingerprint } from '../../src/http/idempotency.js';
import { fakepayAccount } from '../helpers/fakepay/connector.js';
import { Fakepay, fakepayWebhookSignature } from '../helpers/fakepay/server.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { paymentBody, returnFields } from '../helpers/payments.js';

/**
 * The live path through a provider that holds the bank (the Fakepay test provider, over real
 * HTTP): Kosh's authentication page → the provider's page → Kosh's callback → the merchant's
 * return POST, with the provider's webhooks before, after and instead of the browser, forged
 * returns and webhooks, and a provider that times out or answers garbage.
 */
const ACCOUNT = 'ca_fakepay_test';
let fakepay: Fakepay;

beforeAll(async () => {
  fakepay = await Fakepay.start();
});
afterAll(async () => {
  await fakepay.close();
});

describeEachDatabase(
  'live payments through a provider',
  (harness) => {
    let merchant: TestAccount;
    let koshUrl: string;

    beforeAll(async () => {
      const h = harness();
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      const address = h.app.server.address() as { port: number };
      koshUrl = `http://127.0.0.1:${address.port}`;
      fakepay.webhookUrl = `${koshUrl}/v1/connectors/fakepay/webhooks/${ACCOUNT}/`;
      merchant = await h.liveKey(await h.merchant('Live Shop'));
      const { methods } = h.container.services;
      const live = {
        ...(await methods.get(merchant.id, 'test')),
        netbanking: { HDFC: 'HDFC Bank', CLOSED: 'Closed Bank' },
        wallet: { payzapp: 'PayZapp' },
      };
      await h.container.db.transaction((tx) => methods.set(tx, merchant.id, 'live', live));
    });

    const fetchPayment = async (id: string) =>
      (await harness().request('GET', `/v1/payments/${id}/`, { auth: merchant })).json().data;

    async function startPayment(overrides: Record<string, unknown> = {}) {
      const order = await harness().request('POST', '/v1/orders/', {
        auth: merchant,
        json: { amount: 5000, currency: 'INR' },
      });
      const orderId = order.json().data.id as string;
      const reply = await harness().request('POST', '/v1/payments/create/s2s/', {
        auth: merchant,
        json: paymentBody(orderId, { bank: 'HDFC', ...overrides }),
      });
      expect(reply.statusCode, reply.body).toBe(200);
      return { orderId, paymentId: reply.json().payment_id as string, next: reply.json().next[0] };
    }

    /** The browser at Kosh's authentication page, then at the provider's bank page (its form or redirect). */
    async function toBank(paymentId: string): Promise<string> {
      const page = await harness().request('GET', `/v1/payments/${paymentId}/authentication/`);
      let bankUrl: string;
      if (page.statusCode === 302) {
        bankUrl = String(page.headers.location);
      } else {
        expect(page.statusCode, page.body).toBe(200);
        // The auto-submitting form to the provider, allowed by the page's CSP and nothing else.
        bankUrl = /<form id="kosh-provider" method="POST" action="([^"]+)"/.exec(page.body)?.[1] ?? '';
        expect(String(page.headers['content-security-policy'])).toContain(
          `form-action 'self' http://localhost:3000 ${new URL(fakepay.url).protocol};`,
        );
      }
      expect(bankUrl.startsWith(fakepay.url)).toBe(true);
      return bankUrl.replace(/\?.*$/, '');
    }

    /** The customer decides at the bank; returns the provider's page (the auto-POST back to Kosh). */
    async function decide(bankUrl: string, choice: 'success' | 'failure'): Promise<string> {
      const response = await fetch(`${bankUrl}/decide`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `choice=${choice}`,
      });
      return response.text();
    }

    /** The browser posts the provider's return to Kosh's callback; Kosh answers the merchant's return POST. */
    async function returnToKosh(paymentId: string, providerPage: string) {
      const action = /action="([^"]+)"/.exec(providerPage)?.[1] ?? '';
      expect(action).toBe(`http://localhost:3000/v1/payments/${paymentId}/callback/`);
      const reply = await harness().request('POST', `/v1/payments/${paymentId}/callback/`, {
        form: returnFields(providerPage),
      });
      expect(reply.statusCode, reply.body).toBe(200);
      expect(reply.body).toContain('action="https://merchant.example/return"');
      return returnFields(reply.body);
    }

    async function eventTypes(paymentId: string): Promise<string[]> {
      const rows = await harness().container.db.query<{ type: string }>(
        `SELECT type FROM events WHERE payload->'payment'->>'id' = $1 ORDER BY id`,
        [paymentId],
      );
      return rows.map((row) => row.type);
    }

    async function until(condition: () => Promise<boolean>, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!(await condition())) {
        if (Date.now() > deadline) throw new Error('timed out waiting');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    it.each(['after', 'before', 'instead'] as const)(
      'captures once when the provider webhook arrives %s the browser return',
      async (timing) => {
        fakepay.webhookTiming = timing;
        const { paymentId, orderId, next } = await startPayment();
        expect(next.action).toBe('html_form');
        expect(await fetchPayment(paymentId)).toMatchObject({ status: 'created' });
        const bank = await toBank(paymentId);
        const sentBefore = fakepay.webhooks.length;
        const providerPage = await decide(bank, 'success');
        if (timing !== 'instead') {
          const fields = await returnToKosh(paymentId, providerPage);
          expect(fields).toMatchObject({ payment_id: paymentId, order_id: orderId, status: 'captured' });
          expect(fields.signature).toMatch(/^[0-9a-f]{64}$/);
        }
        await until(async () => fakepay.webhooks.length > sentBefore);
        expect(fakepay.webhooks.at(-1)?.status).toBe(200);
        const payment = await fetchPayment(paymentId);
        expect(payment).toMatchObject({ status: 'captured', bank_reference: expect.stringMatching(/^BRN/) });
        expect(await eventTypes(paymentId)).toEqual(
          timing === 'instead'
            ? ['payment.captured', 'order.paid']
            : expect.arrayContaining(['payment.captured', 'order.paid']),
        );
        const types = await eventTypes(paymentId);
        expect(types.filter((type) => type === 'payment.captured')).toHaveLength(1);
        expect(types.filter((type) => type === 'order.paid')).toHaveLength(1);
        expect(fakepay.ordersFor(paymentId)).toHaveLength(1);
        // A repeated webhook changes nothing.
        const order = fakepay.ordersFor(paymentId)[0]!;
        expect(await fakepay.sendWebhook(order)).toBe(200);
        expect((await eventTypes(paymentId)).filter((type) => type === 'payment.captured')).toHaveLength(1);
        fakepay.webhookTiming = 'after';
      },
    );

    it("sends a wallet by a redirect and maps the bank's decline", async () => {
      fakepay.webhookTiming = 'none';
      const { paymentId, next } = await startPayment({
        method: 'wallet',
        bank: undefined,
        wallet: 'PAYZAPP',
      });
      expect(next).toEqual({
        action: 'redirect',
        url: `http://localhost:3000/v1/payments/${paymentId}/authentication/`,
      });
      const bank = await toBank(paymentId);
      const fields = await returnToKosh(paymentId, await decide(bank, 'failure'));
      expect(fields.status).toBe('failed');
      expect(await fetchPayment(paymentId)).toMatchObject({
        status: 'failed',
        error_code: 'payment_declined',
      });
      fakepay.webhookTiming = 'after';
    });

    it("fails a payment the provider refuses to start, with the provider's reason", async () => {
      const { paymentId } = await startPayment({ bank: 'CLOSED' });
      expect(await fetchPayment(paymentId)).toMatchObject({
        status: 'failed',
        error_code: 'bank_unavailable',
      });
    });

    it('refuses a forged return and a forged webhook: nothing changes, Kosh asks the provider', async () => {
      fakepay.webhookTiming = 'none';
      const { paymentId } = await startPayment();
      await toBank(paymentId);
      const order = fakepay.ordersFor(paymentId)[0]!;
      const forged = await harness().request('POST', `/v1/payments/${paymentId}/callback/`, {
        form: { order_id: order.id, reference: paymentId, status: 'paid', signature: 'ab'.repeat(32) },
      });
      expect(forged.statusCode).toBe(200);
      expect(returnFields(forged.body).status).toBe('created');
      expect(await fetchPayment(paymentId)).toMatchObject({ status: 'created' });

      const paidView = JSON.stringify({
        event_id: 'ev_forged',
        type: 'order.updated',
        order: { id: order.id, reference: paymentId, amount: 5000, currency: 'INR', status: 'paid' },
      });
      const webhook = await fetch(fakepay.webhookUrl!, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-fakepay-signature': fakepayWebhookSignature('not-the-secret', paidView),
        },
        body: paidView,
      });
      expect(webhook.status).toBe(200);
      expect(await fetchPayment(paymentId)).toMatchObject({ status: 'created' });
      expect(await eventTypes(paymentId)).toEqual([]);
      // A webhook for a connector account that does not exist here is a 404.
      const stranger = await fetch(`${koshUrl}/v1/connectors/fakepay/webhooks/ca_nobody/`, {
        method: 'POST',
        body: paidView,
      });
      expect(stranger.status).toBe(404);
      fakepay.webhookTiming = 'after';
    });

    it('a keyed payment whose attempt died after the provider call resumes on retry: one order at the provider', async () => {
      fakepay.webhookTiming = 'none';
      const order = await harness().request('POST', '/v1/orders/', {
        auth: merchant,
        json: { amount: 5000, currency: 'INR' },
      });
      const body = paymentBody(order.json().data.id, { bank: 'HDFC' });
      const principal = {
        accountId: merchant.id,
        accountKind: 'merchant' as const,
        accountName: 'Live Shop',
        mode: 'live' as const,
        apiKey: merchant.credentials.api_key,
      };
      const { services } = harness().container;
      const callsBefore = fakepay.calls.filter((call) => call.startsWith('POST')).length;
      let started: string | undefined;
      // The first attempt records the payment and starts it at the provider, then dies before its
      // answer is stored (the keyed request's recovery point is the payment itself).
      await expect(
        services.idempotency.execute(
          principal,
          'live-crash-1',
          requestFingerprint('POST', '/v1/payments/create/s2s/', body),
          'phased',
          async (work) => {
            started = (await services.payments.create(principal, body as never, { ids: work.ids }))
              .payment_id;
            throw new Error('the process died');
          },
        ),
      ).rejects.toThrow('the process died');
      expect(fakepay.ordersFor(started!)).toHaveLength(1);
      const retry = await harness().request('POST', '/v1/payments/create/s2s/', {
        auth: merchant,
        json: body,
        headers: { 'idempotency-key': 'live-crash-1' },
      });
      expect(retry.statusCode, retry.body).toBe(200);
      expect(retry.json().payment_id).toBe(started);
      expect(fakepay.ordersFor(started!)).toHaveLength(1);
      // The provider was called once for this payment: the retry found its start recorded.
      expect(fakepay.calls.filter((call) => call.startsWith('POST')).length).toBe(callsBefore + 1);
      fakepay.webhookTiming = 'after';
    });

    it('records a UPI payment whose start answer was lost, asks about it, and fails it with upi_expired at its deadline', async () => {
      fakepay.webhookTiming = 'none';
      fakepay.faults = { create: 'garbage' };
      const order = await harness().request('POST', '/v1/orders/', {
        auth: merchant,
        json: { amount: 5000, currency: 'INR' },
      });
      const { bank: _bank, ...body } = paymentBody(order.json().data.id, {
        method: 'upi',
        upi: { flow: 'intent', expiry_minutes: 5 },
      });
      const reply = await harness().request('POST', '/v1/payments/create/s2s/', {
        auth: merchant,
        json: body,
      });
      fakepay.faults = {};
      expect(reply.statusCode, reply.body).toBe(200);
      const paymentId = reply.json().payment_id as string;
      // Without the provider's link there is only Kosh's page, which starts the payment again.
      expect(reply.json().next).toEqual([
        { action: 'redirect', url: `http://localhost:3000/v1/payments/${paymentId}/authentication/` },
      ]);
      const [row] = await harness().container.db.query<{ next_sync_at: Date | null }>(
        'SELECT next_sync_at FROM payments WHERE id = $1',
        [paymentId],
      );
      expect(row?.next_sync_at).not.toBeNull();
      const sync = harness().container.jobs.paymentSync;
      harness().clock.advance(301_000);
      await sync.run(new AbortController().signal);
      expect(await fetchPayment(paymentId)).toMatchObject({ status: 'failed', error_code: 'upi_expired' });
      fakepay.webhookTiming = 'after';
    });

    it.each(['timeout', 'bad_gateway_html', 'garbage'] as const)(
      'never fails a payment on an unknown answer (%s) at the start or on status; the reconciler finishes it',
      async (fault) => {
        fakepay.webhookTiming = 'none';
        fakepay.timeoutMs = 1_500;
        fakepay.faults = { create: fault };
        const { paymentId } = await startPayment();
        // The provider made the order, but its answer was lost: the payment stays open.
        expect(await fetchPayment(paymentId)).toMatchObject({ status: 'created' });
        fakepay.faults = {};
        // The browser arrives: Kosh starts it again, under the same reference, so no second order.
        const bank = await toBank(paymentId);
        expect(fakepay.ordersFor(paymentId)).toHaveLength(1);
        await decide(bank, 'success');
        // The customer's browser comes back unsigned while the provider's status API misbehaves:
        // nothing says the customer acted, so the payment stays as it was (the browser is told
        // Kosh is confirming it), and the reconciler follows it.
        fakepay.faults = { status: fault };
        const unsigned = await harness().request('POST', `/v1/payments/${paymentId}/callback/`, {
          form: { order_id: fakepay.ordersFor(paymentId)[0]!.id, reference: paymentId },
        });
        expect(returnFields(unsigned.body).status).toBe('pending');
        expect(await fetchPayment(paymentId)).toMatchObject({ status: 'created' });
        const sync = harness().container.jobs.paymentSync;
        harness().clock.advance(5_000);
        expect(await sync.run(new AbortController().signal)).toBeGreaterThan(0);
        expect(await fetchPayment(paymentId)).toMatchObject({ status: 'created' });
        fakepay.faults = {};
        harness().clock.advance(10_000);
        await sync.run(new AbortController().signal);
        expect(await fetchPayment(paymentId)).toMatchObject({ status: 'captured' });
        expect(await eventTypes(paymentId)).toEqual(['payment.captured', 'order.paid']);
        fakepay.webhookTiming = 'after';
      },
      20_000,
    );
  },
  {},
  () => ({
    liveConnector: fakepayAccount(fakepay, ACCOUNT),
  }),
);
