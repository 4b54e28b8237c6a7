import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { verifyReturn } from '../../../src/modules/payments/return-signature.js';
import type { SendRequest } from '../../../src/modules/webhooks/http-sender.js';
import { describeEachDatabase, type TestAccount } from '../harness.js';
import { paymentBody, returnFields } from '../payments.js';
import { drain } from '../webhook-events.js';
import { verifyWebhook } from '../webhook-receiver.js';
import { BROWSER_HEADERS, RETURN_URL, walk } from './browser.js';
import { PHASES, type ProviderUnderTest } from './provider-under-test.js';

const MERCHANT_HOOKS = 'https://merchant.example/kosh/webhooks';
/** The webhook requests Kosh sent (see the sender below). */
const sent: SendRequest[] = [];

/**
 * The acceptance of a live connector (docs/connectors.md), over real HTTP against its local fake,
 * on both databases: a merchant's live key adds its provider account, and net banking and wallet
 * payments go through Kosh's authentication page to the provider and back; webhooks before, after
 * and instead of the return capture once; a forged one changes nothing; refunds; and the provider
 * down, slow, answering HTML or garbage on each call, with the reconciler finishing afterwards. When
 * the answer to the start is lost after the provider made the order and its payment attempt, the
 * same customer resumes from Kosh's page once the provider answers again: every connector's
 * `initiate` and `continueInBrowser` are safe to call again (docs/connectors.md).
 */
export function providerSuite(provider: () => ProviderUnderTest) {
  describeEachDatabase(
    `live payments through ${provider().name}`,
    (harness) => {
      let merchant: TestAccount;
      let base: string;
      let secret: string;
      let connectorAccount: { id: string; webhook_url: string };
      let providerWebhooks: string;
      const fake = () => provider();

      beforeAll(async () => {
        const h = harness();
        await h.app.listen({ port: 0, host: '127.0.0.1' });
        base = `http://127.0.0.1:${(h.app.server.address() as { port: number }).port}`;
        merchant = await h.liveKey(await h.merchant(`${fake().name} shop`));
        const { methods } = h.container.services;
        const enabled = {
          ...(await methods.get(merchant.id, 'test')),
          netbanking: { [fake().bank]: 'A Bank' },
          wallet: { [fake().wallet]: 'A Wallet' },
        };
        await h.container.db.transaction((tx) => methods.set(tx, merchant.id, 'live', enabled));
        const added = await h.request('POST', '/v1/connector-accounts/', {
          auth: merchant,
          json: { connector: fake().name, credentials: fake().credentials },
        });
        expect(added.statusCode, added.body).toBe(200);
        connectorAccount = added.json().data;
        // The address the merchant registers at the provider, on the port this Kosh listens on.
        providerWebhooks = connectorAccount.webhook_url.replace('http://localhost:3000', base);
        fake().setWebhookUrl(providerWebhooks);
        // merchant.example has a public address (this machine has no DNS): the endpoint is allowed.
        h.container.resolver.lookup = async () => [{ address: '93.184.215.14', family: 4 }];
        const endpoint = await h.request('POST', '/v1/webhooks/', {
          auth: merchant,
          json: { url: MERCHANT_HOOKS, enabled_events: ['payment.captured'] },
        });
        expect(endpoint.statusCode, endpoint.body).toBe(200);
        secret = endpoint.json().data.secret;
      });

      // The browser's and the provider's connections to this Kosh (keep-alive, or a provider webhook
      // still in flight) are cut, so that closing the server does not wait on them.
      afterAll(() => {
        harness().app.server.closeAllConnections();
      });

      // A test that fails midway leaves no fault behind for the next.
      afterEach(() => {
        for (const phase of PHASES) fake().setFault(phase, undefined);
        fake().setWebhookTiming('after');
        fake().setRefundOutcome('processed');
        fake().setOffer(0);
        if (providerWebhooks) fake().setWebhookUrl(providerWebhooks);
      });

      /** Every answer the merchant got, scanned for provider secrets at the end. */
      const answers: string[] = [];
      const api = async (method: 'GET' | 'POST', path: string, json?: unknown) => {
        const response = await harness().request(method, path, { auth: merchant, json });
        answers.push(response.body);
        expect(response.statusCode, `${method} ${path}: ${response.body}`).toBe(200);
        return response.json();
      };
      const payment = async (id: string) => (await api('GET', `/v1/payments/${id}/`)).data;
      const events = async (id: string, type: string) =>
        (
          await harness().container.db.query(
            `SELECT id FROM events WHERE type = $1 AND payload->'payment'->>'id' = $2`,
            [type, id],
          )
        ).length;

      async function start(method: 'netbanking' | 'wallet' = 'netbanking') {
        const order = (await api('POST', '/v1/orders/', { amount: 5050, currency: 'INR' })).data.id as string;
        const body = paymentBody(order, {
          amount: 5050,
          return_url: RETURN_URL,
          ...(method === 'netbanking'
            ? { bank: fake().bank }
            : { method: 'wallet', bank: undefined, wallet: fake().wallet }),
        });
        const created = await api('POST', '/v1/payments/create/s2s/', body);
        return { orderId: order, paymentId: created.payment_id as string };
      }
      const walkFrom = (start: string, choice: 'success' | 'failure') =>
        walk(start, choice, { publicUrl: 'http://localhost:3000', listening: base });
      const page = (paymentId: string) => `${base}/v1/payments/${paymentId}/authentication/`;
      const sync = async (ms = 20_000) => {
        harness().clock.advance(ms);
        await harness().container.jobs.paymentSync.run(new AbortController().signal);
      };
      const refundSync = async (ms: number) => {
        harness().clock.advance(ms);
        return harness().container.jobs.refundSync.run(new AbortController().signal);
      };
      async function captured(method: 'netbanking' | 'wallet' = 'netbanking') {
        const started = await start(method);
        await walkFrom(page(started.paymentId), 'success');
        expect((await payment(started.paymentId)).status).toBe('captured');
        return started;
      }

      it.each(['netbanking', 'wallet'] as const)(
        '%s: the bank page, Success, back through Kosh to the signed return POST; captured once, its webhook delivered',
        async (method) => {
          fake().setWebhookTiming('after');
          sent.length = 0;
          const { paymentId, orderId } = await start(method);
          const fields = await walkFrom(page(paymentId), 'success');
          expect(fields).toMatchObject({ payment_id: paymentId, order_id: orderId, status: 'captured' });
          const returnSecret = await harness().container.services.payments.returnSigningSecret(
            merchant.id,
            'live',
          );
          expect(verifyReturn(returnSecret, fields as never)).toBe(true);
          expect(await payment(paymentId)).toMatchObject({ status: 'captured', amount: 5050 });
          expect((await api('GET', `/v1/orders/${orderId}/`)).data.status).toBe('paid');
          // The provider's webhook follows the return; it changes nothing more.
          await new Promise((resolve) => setTimeout(resolve, 600));
          expect(await events(paymentId, 'payment.captured')).toBe(1);
          expect(fake().ordersFor(paymentId)).toBe(1);
          await drain(harness());
          // What Kosh sent to the merchant's https endpoint, verified as its receiver would.
          const delivered = sent.map((request) => {
            expect(request.url).toBe(MERCHANT_HOOKS);
            const received = {
              headers: request.headers,
              body: request.body,
              status: 200,
              receivedAt: harness().clock.now(),
            };
            return verifyWebhook(secret, received) as { type: string; data: { payment: { id: string } } };
          });
          expect(
            delivered.filter((body) => body.data.payment.id === paymentId).map((body) => body.type),
          ).toEqual(['payment.captured']);
        },
      );

      it("Failure at the bank: failed with the provider's reason mapped", async () => {
        const { paymentId } = await start();
        const fields = await walkFrom(page(paymentId), 'failure');
        expect(fields).toMatchObject({ payment_id: paymentId, status: 'failed' });
        expect(await payment(paymentId)).toMatchObject({ status: 'failed', error_code: fake().declineCode });
        expect(await events(paymentId, 'payment.captured')).toBe(0);
      });

      it('money the provider took for another amount (an offer set up there) is never captured, and the operator is told', async () => {
        fake().setWebhookTiming('none');
        fake().setOffer(100);
        const { paymentId, orderId } = await start();
        const alerts = () =>
          harness()
            .logs()
            .split('\n')
            .filter((line) => line.includes(paymentId) && line.includes('not for its amount'))
            .map((line) => JSON.parse(line));
        // The customer's return makes Kosh ask at once: the operator is told from there already.
        const fields = await walkFrom(page(paymentId), 'success');
        expect(fields?.status).not.toBe('captured');
        const fromReturn = alerts().length;
        expect(fromReturn).toBeGreaterThan(0);
        expect(alerts()[0]).toMatchObject({
          level: 50,
          amount: 5050,
          provider_amount: 4950,
          currency: 'INR',
        });
        // And by the reconciler, each time it asks.
        await sync();
        expect(alerts().length).toBeGreaterThan(fromReturn);
        expect((await payment(paymentId)).status).not.toBe('captured');
        expect((await api('GET', `/v1/orders/${orderId}/`)).data.status).not.toBe('paid');
      });

      it.each(['before', 'instead'] as const)(
        "the provider's webhook %s the browser's return: captured once",
        async (timing) => {
          fake().setWebhookTiming(timing);
          const { paymentId } = await start();
          const fields = await walkFrom(page(paymentId), 'success');
          if (timing === 'instead') expect(fields).toBeUndefined();
          else expect(fields?.status).toBe('captured');
          expect((await payment(paymentId)).status).toBe('captured');
          expect(await events(paymentId, 'payment.captured')).toBe(1);
          fake().setWebhookTiming('after');
        },
      );

      it('a webhook with a bad signature changes nothing', async () => {
        // The customer pays and is not sent back; the provider's genuine webhook is lost on the way.
        fake().setWebhookTiming('instead');
        fake().setWebhookUrl('http://127.0.0.1:9/nowhere');
        const { paymentId } = await start();
        expect(await walkFrom(page(paymentId), 'success')).toBeUndefined();
        fake().setWebhookUrl(providerWebhooks);
        const before = await payment(paymentId);
        expect(before.status).not.toBe('captured');
        expect(await fake().sendForgedWebhook(paymentId)).toBe(200);
        const after = await payment(paymentId);
        expect([after.status, after.error_code, after.captured_at]).toEqual([
          before.status,
          before.error_code,
          before.captured_at,
        ]);
        expect(await events(paymentId, 'payment.captured')).toBe(0);
        // Kosh asks the provider instead, and learns the truth.
        await sync();
        expect((await payment(paymentId)).status).toBe('captured');
      });

      it('an empty return while the provider cannot be asked is not the customer acting: created, the browser told Kosh is confirming', async () => {
        fake().setWebhookTiming('none');
        const { paymentId, orderId } = await start();
        const returnSecret = await harness().container.services.payments.returnSigningSecret(
          merchant.id,
          'live',
        );
        fake().setFault('status', 'reset');
        // Anyone who knows the payment id can send these: nothing the provider signed, no answer.
        const returns = [
          await harness().request('GET', `/v1/payments/${paymentId}/callback/`),
          await harness().request('POST', `/v1/payments/${paymentId}/callback/`, {
            form: { order_id: paymentId },
          }),
        ];
        for (const back of returns) {
          expect(back.statusCode, back.body).toBe(200);
          expect(back.body).toContain(`action="${RETURN_URL}"`);
          const fields = returnFields(back.body);
          expect(fields).toMatchObject({ payment_id: paymentId, order_id: orderId, status: 'pending' });
          expect(verifyReturn(returnSecret, fields as never)).toBe(true);
        }
        expect((await payment(paymentId)).status).toBe('created');
        expect(await events(paymentId, 'payment.pending')).toBe(0);
        const [row] = await harness().container.db.query<{
          pending_at: Date | null;
          next_sync_at: Date | null;
        }>('SELECT pending_at, next_sync_at FROM payments WHERE id = $1', [paymentId]);
        expect(row?.pending_at).toBeNull();
        expect(row?.next_sync_at).not.toBeNull();
        // The provider answers again; the customer pays at the bank: captured, never pending.
        fake().setFault('status', undefined);
        expect((await walkFrom(page(paymentId), 'success'))?.status).toBe('captured');
        expect((await payment(paymentId)).status).toBe('captured');
        expect(await events(paymentId, 'payment.pending')).toBe(0);
        expect(await events(paymentId, 'payment.captured')).toBe(1);
      });

      it('a full and a partial refund end processed; a refund the provider keeps pending is finished by the reconciler', async () => {
        fake().setRefundOutcome('processed');
        const first = await captured();
        const partial = (await api('POST', `/v1/payments/${first.paymentId}/refunds/`, { amount: 1050 }))
          .data;
        expect(partial).toMatchObject({ status: 'processed', amount: 1050 });
        const rest = (await api('POST', `/v1/payments/${first.paymentId}/refunds/`, {})).data;
        expect(rest).toMatchObject({ status: 'processed', amount: 4000 });
        expect(await payment(first.paymentId)).toMatchObject({
          amount_refunded: 5050,
          refund_status: 'full',
        });

        fake().setRefundOutcome('pending');
        const second = await captured('wallet');
        const pending = (await api('POST', `/v1/payments/${second.paymentId}/refunds/`, {})).data;
        expect(pending).toMatchObject({ status: 'pending', amount: 5050 });
        fake().settleRefunds();
        await refundSync(61_000);
        expect((await api('GET', `/v1/refunds/${pending.id}/`)).data.status).toBe('processed');
        for (const id of [partial.id, rest.id, pending.id]) expect(fake().refundsMadeFor(id)).toBe(1);

        // The provider's signed refund webhook has Kosh ask about the refund at once, not at the
        // next step of its schedule.
        const third = await captured();
        const waiting = (await api('POST', `/v1/payments/${third.paymentId}/refunds/`, {})).data;
        expect(waiting.status).toBe('pending');
        await refundSync(61_000);
        expect((await api('GET', `/v1/refunds/${waiting.id}/`)).data.status).toBe('pending');
        fake().settleRefunds();
        expect(await refundSync(0)).toBe(0);
        expect(await fake().sendRefundWebhook(waiting.id)).toBe(200);
        await refundSync(0);
        expect((await api('GET', `/v1/refunds/${waiting.id}/`)).data.status).toBe('processed');
        expect(fake().refundsMadeFor(waiting.id)).toBe(1);
        fake().setRefundOutcome('processed');
      });

      for (const fault of ['reset', 'timeout', 'bad_gateway_html', 'garbage'] as const) {
        it(`provider ${fault} on initiate: nothing failed; the payment goes through once it recovers`, async () => {
          fake().setFault('initiate', fault);
          const { paymentId } = await start();
          expect((await payment(paymentId)).status).toBe('created');
          await sync();
          expect((await payment(paymentId)).status).toBe('created');
          fake().setFault('initiate', undefined);
          await walkFrom(page(paymentId), 'success');
          expect((await payment(paymentId)).status).toBe('captured');
          expect(fake().ordersFor(paymentId)).toBe(1);
        });

        it(`provider ${fault} after it made the order and its payment attempt: the customer resumes from Kosh's page, pays once, captured once`, async () => {
          fake().setWebhookTiming('after');
          fake().setFault('pay', fault);
          const { paymentId, orderId } = await start();
          // The customer arrives while the provider's answers are lost: there is no bank page to
          // send them to yet, and they are not sent back to the merchant either.
          const early = await fetch(page(paymentId), { headers: BROWSER_HEADERS, redirect: 'manual' });
          const earlyPage = await early.text();
          expect(early.status, earlyPage.slice(0, 300)).toBe(503);
          expect(earlyPage).not.toContain(RETURN_URL);
          expect(fake().attemptsFor(paymentId).length).toBeGreaterThan(0);
          // The provider answers again; the reconciler asks about what it made: nothing the
          // customer did, so the payment stays open for them.
          fake().setFault('pay', undefined);
          await sync();
          expect((await payment(paymentId)).status).toBe('created');
          const fields = await walkFrom(page(paymentId), 'success');
          expect(fields).toMatchObject({ payment_id: paymentId, order_id: orderId, status: 'captured' });
          // The provider's webhook and later questions change nothing more.
          await new Promise((resolve) => setTimeout(resolve, 600));
          await sync();
          expect(await payment(paymentId)).toMatchObject({ status: 'captured', amount: 5050 });
          expect(await events(paymentId, 'payment.captured')).toBe(1);
          expect(fake().ordersFor(paymentId)).toBe(1);
          expect(
            fake()
              .attemptsFor(paymentId)
              .filter((attempt) => attempt.captured),
          ).toHaveLength(1);
        });

        it(`provider ${fault} on status: nothing failed; the reconciler captures it once it recovers`, async () => {
          fake().setWebhookTiming('none');
          const { paymentId } = await start();
          fake().setFault('status', fault);
          await walkFrom(page(paymentId), 'success');
          await sync();
          expect((await payment(paymentId)).status).not.toBe('failed');
          fake().setFault('status', undefined);
          await sync();
          expect((await payment(paymentId)).status).toBe('captured');
          expect(await events(paymentId, 'payment.captured')).toBe(1);
          fake().setWebhookTiming('after');
        });

        it(`provider ${fault} on refund: pending, then processed once by the reconciler`, async () => {
          fake().setRefundOutcome('processed');
          const { paymentId } = await captured();
          fake().setFault('refund', fault);
          const refund = (await api('POST', `/v1/payments/${paymentId}/refunds/`, { amount: 100 })).data;
          expect(refund.status).toBe('pending');
          fake().setFault('refund', undefined);
          await refundSync(61_000);
          await refundSync(10_000);
          expect((await api('GET', `/v1/refunds/${refund.id}/`)).data.status).toBe('processed');
          expect(fake().refundsMadeFor(refund.id)).toBe(1);
        });
      }

      it('a scan of the database, the logs and every answer finds no provider secret', async () => {
        const secrets = Object.entries(fake().credentials)
          .filter(([field]) => field.includes('secret'))
          .map(([, value]) => value);
        expect(secrets.length).toBeGreaterThan(0);
        const tables = await harness().container.db.query<{ table_name: string }>(
          `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
        );
        for (const { table_name } of tables) {
          const [dump] = await harness().container.db.query<{ text: string }>(
            `SELECT coalesce(string_agg(to_jsonb(t)::text, ''), '') AS text FROM "${table_name}" t`,
          );
          for (const value of secrets) expect(dump?.text.includes(value), table_name).toBe(false);
        }
        for (const value of secrets) expect(harness().logs().includes(value)).toBe(false);
        answers.push(
          (await harness().request('GET', '/v1/connector-accounts/', { auth: merchant })).body,
          (
            await harness().request('GET', `/v1/connector-accounts/${connectorAccount.id}/`, {
              auth: merchant,
            })
          ).body,
        );
        expect(answers.length).toBeGreaterThan(20);
        for (const value of secrets) expect(answers.some((answer) => answer.includes(value))).toBe(false);
      });
    },
    // A healthy call to a local fake has taken over 300 ms on a loaded 2-core machine: 1 s, as the
    // connector unit tests use; the fakes hold a "timeout" answer for 3 s, so those still time out.
    () => ({ ...provider().env(), KOSH_PROVIDER_TIMEOUT_MS: '1000' }),
    {
      // A live endpoint is never on this machine (live mode does not reach it): the signed request
      // is taken where it leaves Kosh, and answered 200 as the merchant's receiver would.
      webhookSender: async (request: SendRequest) => {
        sent.push(request);
        return { statusCode: 200, latencyMs: 1, responseBody: 'ok', retryAfter: undefined, error: undefined };
      },
    },
  );
}
