import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCashfreeConnector } from '../../src/connectors/cashfree/cashfree.connector.js';
import type { Connector } from '../../src/connectors/connector.js';
import { connectorPayment } from '../helpers/connector-objects.js';
import type { FakeCashfree } from '../helpers/providers/cashfree-fake.js';
import { cashfreeSteps, started, useCashfreeFake } from './support/cashfree-connector.js';

/** The Cashfree connector against FakeCashfree: its signed webhooks, read directly and sent over HTTP. */

describe('Cashfree connector against FakeCashfree', () => {
  let fake: FakeCashfree;
  let connector: Connector;

  useCashfreeFake((suite) => {
    ({ fake, connector } = suite);
  });

  const { orderOf, visitBank, decide, pay } = cashfreeSteps(() => ({ fake, connector }));

  describe('webhooks', () => {
    it('verifies a signed PAYMENT_SUCCESS_WEBHOOK and reads the payment', async () => {
      const payment = await pay();
      const order = orderOf(payment);
      const { headers, body } = fake.buildWebhook(order);
      const result = await connector.parseWebhook?.({ headers, rawBody: Buffer.from(body) });
      expect(result).toEqual({
        verified: true,
        eventId: `PAYMENT_SUCCESS_WEBHOOK:${order.payments[0]?.cfPaymentId}`,
        paymentId: payment.id,
        status: {
          outcome: 'captured',
          rawStatus: 'SUCCESS',
          amount: 5050,
          currency: 'INR',
          bankReference: order.payments[0]?.bankReference,
          data: { cf_payment_id: order.payments[0]?.cfPaymentId },
        },
      });
    });

    it('has Kosh ask about a PAYMENT_FAILED_WEBHOOK, whose status reads the error details', async () => {
      const payment = await pay({}, 'failure');
      const { headers, body } = fake.buildWebhook(orderOf(payment));
      const result = await connector.parseWebhook?.({ headers, rawBody: Buffer.from(body) });
      expect(result).toMatchObject({ verified: true, paymentId: payment.id, status: null });
      expect(await connector.status(payment)).toMatchObject({
        outcome: 'failed',
        errorCode: 'payment_declined',
        rawStatus: 'FAILED',
      });
    });

    it('refuses a bad signature, a changed body, and an unsigned one, naming the payment to ask about', async () => {
      const payment = await pay();
      const order = orderOf(payment);
      const forged = fake.buildWebhook(order, { signature: Buffer.alloc(32, 7).toString('base64') });
      expect(
        await connector.parseWebhook?.({ headers: forged.headers, rawBody: Buffer.from(forged.body) }),
      ).toEqual({ verified: false, paymentId: payment.id, reason: 'bad signature' });
      const genuine = fake.buildWebhook(order);
      const changed = genuine.body.replace('"payment_amount":50.5', '"payment_amount":5.5');
      expect(changed).not.toBe(genuine.body);
      expect(
        await connector.parseWebhook?.({ headers: genuine.headers, rawBody: Buffer.from(changed) }),
      ).toMatchObject({ verified: false, reason: 'bad signature' });
      const unsigned = Object.fromEntries(
        Object.entries(genuine.headers).filter(([name]) => name !== 'x-webhook-signature'),
      );
      expect(
        await connector.parseWebhook?.({ headers: unsigned, rawBody: Buffer.from(genuine.body) }),
      ).toMatchObject({ verified: false, paymentId: payment.id, reason: 'unsigned' });
      expect(
        await connector.parseWebhook?.({ headers: genuine.headers, rawBody: Buffer.from('not json') }),
      ).toEqual({ verified: false, paymentId: null, reason: 'not JSON' });
    });

    it('refuses a signed webhook whose millisecond timestamp is outside the tolerance', async () => {
      const payment = await pay();
      const order = orderOf(payment);
      const parse = async (timestamp: number) => {
        const { headers, body } = fake.buildWebhook(order, { timestamp });
        return connector.parseWebhook?.({ headers, rawBody: Buffer.from(body) });
      };
      const now = Date.now();
      expect(await parse(now - 301_000)).toMatchObject({
        verified: false,
        reason: 'timestamp outside the tolerance',
      });
      expect(await parse(now + 301_000)).toMatchObject({ verified: false });
      expect(await parse(now - 290_000)).toMatchObject({ verified: true });
      // Seconds are not Cashfree's unit: read as milliseconds they are decades old.
      expect(await parse(Math.floor(now / 1000))).toMatchObject({ verified: false });
    });

    it('takes its clock and tolerance from the options', async () => {
      const payment = await pay();
      const { headers, body } = fake.buildWebhook(orderOf(payment), {
        timestamp: Date.parse('2026-01-01T00:00:00Z'),
      });
      const options = {
        baseUrl: fake.url,
        credentials: { client_id: fake.clientId, client_secret: fake.clientSecret },
        webhookToleranceSeconds: 60,
      };
      const at = (iso: string) => createCashfreeConnector({ ...options, now: () => new Date(iso) });
      const rawBody = Buffer.from(body);
      expect(await at('2026-01-01T00:00:59Z').parseWebhook?.({ headers, rawBody })).toMatchObject({
        verified: true,
      });
      expect(await at('2026-01-01T00:01:01Z').parseWebhook?.({ headers, rawBody })).toMatchObject({
        verified: false,
      });
    });

    describe('sent over HTTP, before, after or instead of the browser’s return', () => {
      let receiver: http.Server;
      const received: { headers: http.IncomingHttpHeaders; body: Buffer }[] = [];

      beforeAll(async () => {
        receiver = http.createServer((request, response) => {
          const chunks: Buffer[] = [];
          request.on('data', (chunk: Buffer) => chunks.push(chunk));
          request.on('end', () => {
            received.push({ headers: request.headers, body: Buffer.concat(chunks) });
            response.writeHead(200).end('ok');
          });
        });
        await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      });

      afterAll(async () => {
        await new Promise((resolve) => receiver.close(resolve));
      });

      beforeEach(() => {
        received.length = 0;
        fake.webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/connectors/cashfree/webhooks/ca_1/`;
      });

      const settle = () => new Promise((resolve) => setTimeout(resolve, 600));

      it.each([
        ['before', 302, 1, 1],
        ['instead', 200, 1, 1],
        ['after', 302, 0, 1],
        ['none', 302, 0, 0],
      ] as const)(
        'timing %s: return %i, %i webhook at the return, %i in all',
        async (timing, code, atReturn, total) => {
          fake.webhookTiming = timing;
          const payment = connectorPayment();
          const result = started(await connector.initiate(payment));
          await visitBank(result.next);
          const back = await decide(result.data?.cf_payment_id, 'success');
          expect(back.status).toBe(code);
          expect(received).toHaveLength(atReturn);
          // The fake sends the 'after' webhook 300 ms after the return: wait for it, then a while
          // more to see that no other comes.
          await expect.poll(() => received.length, { timeout: 5_000 }).toBe(total);
          await settle();
          expect(received).toHaveLength(total);
          for (const webhook of received) {
            const parsed = await connector.parseWebhook?.({
              headers: webhook.headers,
              rawBody: webhook.body,
            });
            expect(parsed).toMatchObject({
              verified: true,
              paymentId: payment.id,
              status: { outcome: 'captured' },
            });
          }
        },
      );
    });
  });
});
