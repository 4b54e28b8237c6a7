import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { maskVpa } from '../../../src/connectors/upi.js';
import type { SendRequest } from '../../../src/modules/webhooks/http-sender.js';
import { describeEachDatabase, type TestAccount } from '../harness.js';
import { paymentBody } from '../payments.js';
import { decodeQr } from '../qr.js';
import type { Phase, ProviderUnderTest } from './provider-under-test.js';

/** What the shared UPI suite needs of a local fake provider, beyond the shared suite's. */
export interface UpiProviderUnderTest extends ProviderUnderTest {
  /** The simulated customer in a UPI app approves (pays) or declines the attempt the provider holds for this Kosh payment; resolves once the fake recorded it and sent its webhook (per the webhook timing). */
  upiCustomer(paymentId: string, action: 'approve' | 'decline'): Promise<void>;
  /** The Kosh error code a UPI decline on the fake maps to. */
  upiDeclineCode: string;
  /** The VPA the fake reports as the payer of approved payments. */
  upiPayerVpa: string;
}

type Flow = 'intent' | 'qr' | 'collect';
interface Next {
  action: string;
  url?: string;
  qr_image?: string;
  expires_at?: number;
}

const PHASES: readonly Phase[] = ['initiate', 'pay', 'status', 'refund'];
const FAULTS = ['reset', 'timeout', 'bad_gateway_html', 'garbage'] as const;
const MERCHANT_HOOKS = 'https://merchant.example/kosh/upi-webhooks';

/**
 * UPI through a live connector, over HTTP against its local fake, on both databases
 * (docs/connectors.md): intent, QR and collect started at the provider and captured once the
 * simulated customer approves in their UPI app (the payer's VPA masked, the UPI RRN as the bank
 * reference); the QR decodes to exactly the link; a decline fails with the provider's reason; the
 * provider's webhook before, after or instead of Kosh's poll captures once; a forged webhook changes
 * nothing; the provider down, answering HTML or garbage, or silent, on the start and on status,
 * leaves the payment open and the reconciler finishes it; an unpaid payment fails with
 * `upi_expired` at its `expires_at`; a captured UPI payment is refunded.
 *
 * The webhook timing is relative to Kosh's poll (the reconciler asking `status`): `before` and
 * `instead` send it while the customer decides; `after` may hold it until the poll was answered,
 * so the suite starts the poll before it waits for the customer.
 */
export function upiProviderSuite(provider: () => UpiProviderUnderTest) {
  const sent: SendRequest[] = [];
  describeEachDatabase(
    `UPI through ${provider().name}`,
    (harness) => {
      let merchant: TestAccount;
      let providerWebhooks: string;
      let timing: 'after' | 'before' | 'instead' | 'none' = 'after';
      const fake = () => provider();
      const setTiming = (value: typeof timing) => {
        timing = value;
        fake().setWebhookTiming(value);
      };

      beforeAll(async () => {
        const h = harness();
        await h.app.listen({ port: 0, host: '127.0.0.1' });
        const base = `http://127.0.0.1:${(h.app.server.address() as { port: number }).port}`;
        merchant = await h.liveKey(await h.merchant(`${fake().name} UPI shop`));
        const { methods } = h.container.services;
        const enabled = {
          ...(await methods.get(merchant.id, 'test')),
          upi: {
            intent: true,
            collect: true,
            payer_account_type: { bank_account: true, credit_card: false },
          },
        };
        await h.container.db.transaction((tx) => methods.set(tx, merchant.id, 'live', enabled));
        const added = await h.request('POST', '/v1/connector-accounts/', {
          auth: merchant,
          json: { connector: fake().name, credentials: fake().credentials },
        });
        expect(added.statusCode, added.body).toBe(200);
        providerWebhooks = (added.json().data.webhook_url as string).replace('http://localhost:3000', base);
        fake().setWebhookUrl(providerWebhooks);
        h.container.resolver.lookup = async () => [{ address: '93.184.215.14', family: 4 }];
        const endpoint = await h.request('POST', '/v1/webhooks/', {
          auth: merchant,
          json: { url: MERCHANT_HOOKS, enabled_events: ['payment.captured'] },
        });
        expect(endpoint.statusCode, endpoint.body).toBe(200);
      });

      afterAll(() => {
        harness().app.server.closeAllConnections();
      });

      afterEach(() => {
        for (const phase of PHASES) fake().setFault(phase, undefined);
        setTiming('none');
        fake().setRefundOutcome('processed');
        if (providerWebhooks) fake().setWebhookUrl(providerWebhooks);
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
      /** The reconciler's pass after `ms` of the test clock. */
      const sync = async (ms = 11_000) => {
        harness().clock.advance(ms);
        await harness().container.jobs.paymentSync.run(new AbortController().signal);
      };

      async function start(flow: Flow, upi: Record<string, unknown> = {}) {
        const order = (await api('POST', '/v1/orders/', { amount: 5050, currency: 'INR' })).data.id as string;
        const { bank: _bank, ...body } = paymentBody(order, {
          amount: 5050,
          method: 'upi',
          upi: { flow, ...(flow === 'collect' ? { vpa: fake().upiPayerVpa } : {}), ...upi },
        });
        const created = await api('POST', '/v1/payments/create/s2s/', body);
        return { orderId: order, paymentId: created.payment_id as string, next: created.next as Next[] };
      }

      /** The customer decides in their app; the poll runs before or after, as the timing asks. */
      async function customer(paymentId: string, action: 'approve' | 'decline') {
        const decided = fake().upiCustomer(paymentId, action);
        if (timing === 'after') await sync();
        await decided;
        if (timing !== 'after') await sync();
      }

      /** Kosh's UPI page, which starts the payment again when the provider's answer was lost. */
      const openPage = async (paymentId: string) => {
        const page = await harness().request('GET', `/v1/payments/${paymentId}/authentication/`);
        expect(page.statusCode, page.body.slice(0, 300)).toBe(200);
        return page.body;
      };

      async function expectCaptured(paymentId: string, orderId: string, flow: Flow) {
        const paid = await payment(paymentId);
        expect(paid).toMatchObject({
          status: 'captured',
          method: 'upi',
          amount: 5050,
          upi: { flow, payer_vpa: maskVpa(fake().upiPayerVpa) },
        });
        expect(paid.bank_reference).toMatch(/^\d{12}$/);
        expect(await captures(paymentId)).toBe(1);
        expect((await api('GET', `/v1/orders/${orderId}/`)).data.status).toBe('paid');
        expect(fake().ordersFor(paymentId)).toBe(1);
      }

      it('reports UPI intent and collect for the live account: enabled, and taken by its connector', async () => {
        const methods = await api('GET', '/v1/payments/methods/');
        expect(methods.upi).toEqual({
          intent: true,
          collect: true,
          payer_account_type: { bank_account: true, credit_card: false },
        });
      });

      it.each(['intent', 'qr', 'collect'] as const)(
        '%s: started at the provider, approved in the app, captured once',
        async (flow) => {
          setTiming('none');
          const { paymentId, orderId, next } = await start(flow);
          expect(next.at(-1)?.action).toBe('redirect');
          if (flow === 'collect') {
            expect(next).toHaveLength(2);
            expect(next[0]).toMatchObject({ action: 'upi_collect', expires_at: expect.any(Number) });
          } else {
            expect(next[0]).toMatchObject({
              action: `upi_${flow}`,
              url: expect.stringMatching(/^upi:\/\/pay\?/),
            });
            if (flow === 'qr') expect(decodeQr(next[0]?.qr_image as string)).toBe(next[0]?.url);
          }
          expect(await payment(paymentId)).toMatchObject({
            status: 'created',
            method: 'upi',
            upi: { flow, payer_vpa: null },
          });
          await sync();
          expect((await payment(paymentId)).status).toBe('created');
          await customer(paymentId, 'approve');
          await expectCaptured(paymentId, orderId, flow);
          await sync();
          expect(await captures(paymentId)).toBe(1);
        },
      );

      it("a decline in the app fails the payment with the provider's reason", async () => {
        setTiming('none');
        const { paymentId } = await start('intent');
        await customer(paymentId, 'decline');
        const failed = await payment(paymentId);
        expect(failed).toMatchObject({ status: 'failed', error_code: fake().upiDeclineCode });
        expect(failed.error_reason).toEqual(expect.any(String));
        expect(failed.upi.payer_vpa).toBeNull();
        expect(await captures(paymentId)).toBe(0);
      });

      it.each(['before', 'after', 'instead'] as const)(
        "the provider's webhook %s Kosh's poll: captured once",
        async (when) => {
          setTiming(when);
          const { paymentId, orderId } = await start('qr');
          const decided = fake().upiCustomer(paymentId, 'approve');
          if (when === 'after') await sync();
          await decided;
          // Before or instead of any poll, the webhook alone captured it.
          if (when !== 'after') expect((await payment(paymentId)).status).toBe('captured');
          if (when === 'before') await sync();
          await expectCaptured(paymentId, orderId, 'qr');
        },
      );

      it('a forged webhook changes nothing; Kosh asks the provider instead', async () => {
        setTiming('none');
        const { paymentId } = await start('intent');
        await fake().upiCustomer(paymentId, 'approve');
        const before = await payment(paymentId);
        expect(before.status).toBe('created');
        expect(await fake().sendForgedWebhook(paymentId)).toBe(200);
        const after = await payment(paymentId);
        expect([after.status, after.error_code, after.captured_at]).toEqual([
          before.status,
          before.error_code,
          before.captured_at,
        ]);
        expect(await captures(paymentId)).toBe(0);
        await sync();
        expect((await payment(paymentId)).status).toBe('captured');
      });

      for (const fault of FAULTS) {
        it(`provider ${fault} when the order is made: open, then paid from Kosh's page once it recovers`, async () => {
          setTiming('none');
          fake().setFault('initiate', fault);
          const { paymentId, orderId, next } = await start('intent');
          expect(next.map((step) => step.action)).toEqual(['redirect']);
          await sync();
          expect((await payment(paymentId)).status).toBe('created');
          fake().setFault('initiate', undefined);
          expect(await openPage(paymentId)).toContain('upi://pay?');
          await customer(paymentId, 'approve');
          await expectCaptured(paymentId, orderId, 'intent');
        });

        it(`provider ${fault} after it made the UPI attempt: open, a fresh attempt from Kosh's page, captured once`, async () => {
          setTiming('none');
          fake().setFault('pay', fault);
          const { paymentId, orderId } = await start('qr');
          expect(fake().attemptsFor(paymentId).length).toBeGreaterThan(0);
          await sync();
          expect((await payment(paymentId)).status).toBe('created');
          fake().setFault('pay', undefined);
          expect(await openPage(paymentId)).toContain('upi://pay?');
          await customer(paymentId, 'approve');
          await expectCaptured(paymentId, orderId, 'qr');
          expect(
            fake()
              .attemptsFor(paymentId)
              .filter((attempt) => attempt.captured),
          ).toHaveLength(1);
        });

        it(`provider ${fault} on status: still open; the reconciler captures it once it recovers`, async () => {
          setTiming('none');
          const { paymentId, orderId } = await start('collect');
          fake().setFault('status', fault);
          await fake().upiCustomer(paymentId, 'approve');
          await sync();
          expect((await payment(paymentId)).status).toBe('created');
          fake().setFault('status', undefined);
          await sync();
          await expectCaptured(paymentId, orderId, 'collect');
        });
      }

      it('an unpaid payment fails with upi_expired at its expires_at', async () => {
        setTiming('none');
        const { paymentId, next } = await start('intent', { expiry_minutes: 5 });
        const expiresAt = (next[0]?.expires_at as number) * 1000;
        harness().clock.advance(expiresAt - harness().clock.now().getTime() - 1_000);
        await sync(0);
        expect((await payment(paymentId)).status).toBe('created');
        await sync(2_000);
        expect(await payment(paymentId)).toMatchObject({ status: 'failed', error_code: 'upi_expired' });
        expect(await captures(paymentId)).toBe(0);
      });

      it('the sandbox UPI app never acts on a live payment: 404 as for an unknown payment, nothing changes', async () => {
        setTiming('none');
        const { paymentId } = await start('qr');
        const before = await payment(paymentId);
        expect(before.status).toBe('created');
        const attempts = fake().attemptsFor(paymentId).length;
        // Kosh's page for a live payment offers the provider's link, never the sandbox app.
        const page = await openPage(paymentId);
        expect(page).toContain('upi://pay?');
        expect(page).not.toContain('upi-simulator');

        const unknownId = 'pay_00000000000000000000000000';
        /** The page's message with the payment id taken out (the nonce differs per page). */
        const main = (body: string, id: string) =>
          /<main>[\s\S]*<\/main>/.exec(body.replaceAll(id, '<id>'))?.[0];
        const unknown = await harness().request('GET', `/v1/payments/${unknownId}/upi-simulator/`);
        expect(unknown.statusCode).toBe(404);
        const shown = await harness().request('GET', `/v1/payments/${paymentId}/upi-simulator/`);
        expect(shown.statusCode).toBe(404);
        expect(shown.body).not.toContain('name="token"');
        expect(main(shown.body, paymentId)).toBe(main(unknown.body, unknownId));

        // Any token, even one whose hash the payment holds, with the choice that would capture it.
        const token = 'a-token-the-payment-holds';
        await harness().container.db.query('UPDATE payments SET auth_token_hash = $2 WHERE id = $1', [
          paymentId,
          createHash('sha256').update(token).digest(),
        ]);
        for (const [body, options] of [
          [{ token, choice: 'success' }, 'form'],
          [{ token: 'forged', choice: 'success' }, 'form'],
          [{ token, choice: 'success' }, 'json'],
        ] as const) {
          const posted = await harness().request(
            'POST',
            `/v1/payments/${paymentId}/upi-simulator/`,
            options === 'form' ? { form: body } : { json: body },
          );
          expect(posted.statusCode, `${options} ${body.token}`).toBe(404);
          expect(main(posted.body, paymentId)).toBe(main(unknown.body, unknownId));
        }

        const after = await payment(paymentId);
        expect(after).toEqual(before);
        const events = await harness().container.db.query(
          `SELECT type FROM events WHERE payload->'payment'->>'id' = $1`,
          [paymentId],
        );
        expect(events).toEqual([]);
        expect(fake().attemptsFor(paymentId)).toHaveLength(attempts);
        expect(fake().ordersFor(paymentId)).toBe(1);
      });

      it('a captured UPI payment is refunded in full, once at the provider', async () => {
        setTiming('none');
        fake().setRefundOutcome('processed');
        const { paymentId } = await start('intent');
        await customer(paymentId, 'approve');
        expect((await payment(paymentId)).status).toBe('captured');
        const refund = (await api('POST', `/v1/payments/${paymentId}/refunds/`, {})).data;
        expect(refund).toMatchObject({ status: 'processed', amount: 5050 });
        expect(await payment(paymentId)).toMatchObject({ amount_refunded: 5050, refund_status: 'full' });
        expect(fake().refundsMadeFor(refund.id)).toBe(1);
      });
    },
    // A healthy call to a local fake has taken over 300 ms on a loaded 2-core machine: 1 s, as the
    // connector unit tests use; the fakes hold a "timeout" answer for 3 s, so those still time out.
    () => ({ ...provider().env(), KOSH_PROVIDER_TIMEOUT_MS: '1000' }),
    {
      webhookSender: async (request: SendRequest) => {
        sent.push(request);
        return { statusCode: 200, latencyMs: 1, responseBody: 'ok', retryAfter: undefined, error: undefined };
      },
    },
  );
}
