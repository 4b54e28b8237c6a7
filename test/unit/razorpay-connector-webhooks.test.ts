import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Connector, ConnectorPayment } from '../../src/connectors/connector.js';
import type { FakeRazorpay } from '../helpers/providers/razorpay-fake.js';
import { atBank, connectorOn, reachBank, useRazorpayFake } from './support/razorpay-connector.js';

/** The Razorpay connector against FakeRazorpay: its signed webhooks, verified or refused. */

describe('Razorpay connector against FakeRazorpay', () => {
  let fake: FakeRazorpay;
  let connector: Connector;

  const connectorFor = (overrides: Parameters<typeof connectorOn>[1] = {}) => connectorOn(fake, overrides);

  useRazorpayFake((suite) => {
    ({ fake, connector } = suite);
  });

  /** Kosh's path up to the bank: the order, then the payment once the browser is here. */
  const toBank = (payment?: ConnectorPayment) => reachBank(connector, payment);

  describe('webhooks', () => {
    let receiver: http.Server;
    let received: { headers: http.IncomingHttpHeaders; body: Buffer }[];

    beforeEach(async () => {
      received = [];
      receiver = http.createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          received.push({ headers: request.headers, body: Buffer.concat(chunks) });
          response.writeHead(200).end('{}');
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      fake.webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
    });

    afterEach(async () => {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    });

    const parse = (delivery: { headers: http.IncomingHttpHeaders; body: Buffer }) =>
      connector.parseWebhook?.({ headers: delivery.headers, rawBody: delivery.body });

    it.each(['before', 'instead'] as const)(
      'verifies the signed payment.captured sent %s the return',
      async (timing) => {
        fake.webhookTiming = timing;
        const { payment, url } = await toBank();
        const back = await atBank(url, 'success');
        if (timing === 'instead') expect(back.target).toBeUndefined();
        expect(received).toHaveLength(1);
        const delivery = received[0] as (typeof received)[number];
        const parsed = await parse(delivery);
        expect(parsed).toMatchObject({
          verified: true,
          eventId: delivery.headers['x-razorpay-event-id'],
          paymentId: payment.id,
          status: {
            outcome: 'captured',
            amount: 50_000,
            currency: 'INR',
            reference: payment.provider.reference,
          },
        });
        expect(fake.webhooks[0]?.event).toBe('payment.captured');
      },
    );

    it('verifies the signed payment.failed sent after the return, and has Kosh ask about it', async () => {
      fake.webhookTiming = 'after';
      const { payment, url } = await toBank();
      await atBank(url, 'failure');
      await expect.poll(() => received.length, { timeout: 3_000 }).toBe(1);
      // It may be about an attempt the customer never saw: Kosh asks about the one it recorded.
      expect(await parse(received[0] as (typeof received)[number])).toMatchObject({
        verified: true,
        paymentId: payment.id,
        status: null,
      });
      expect(await connector.status(payment)).toMatchObject({
        outcome: 'failed',
        errorCode: 'payment_declined',
      });
    });

    it('refuses a bad signature or a changed body, and still names the payment to ask about', async () => {
      const { payment, url } = await toBank();
      fake.webhookTiming = 'none';
      await atBank(url, 'success');
      const [attempt] = fake.paymentsFor(payment.provider.reference as string);
      await fake.sendWebhook(attempt as NonNullable<typeof attempt>, {
        signature: 'ab'.repeat(32),
        eventId: 'evt_forged',
      });
      expect(await parse(received[0] as (typeof received)[number])).toEqual({
        verified: false,
        paymentId: payment.id,
        reason: 'bad signature',
      });
      await fake.sendWebhook(attempt as NonNullable<typeof attempt>);
      const good = received[1] as (typeof received)[number];
      const tampered = Buffer.from(good.body.toString('utf8').replace('"captured"', '"failed"'));
      expect(await connector.parseWebhook?.({ headers: good.headers, rawBody: tampered })).toMatchObject({
        verified: false,
      });
      const { 'x-razorpay-signature': _, ...unsigned } = good.headers;
      expect(await connector.parseWebhook?.({ headers: unsigned, rawBody: good.body })).toMatchObject({
        verified: false,
        paymentId: payment.id,
      });
      expect(await parse(good)).toMatchObject({ verified: true, paymentId: payment.id });
      // Signed with another merchant's secret.
      const other = connectorFor({ webhook_secret: 'another-secret' });
      expect(await other.parseWebhook?.({ headers: good.headers, rawBody: good.body })).toMatchObject({
        verified: false,
      });
    });

    it('reads a body that is not JSON as unverified', async () => {
      expect(
        await connector.parseWebhook?.({
          headers: { 'x-razorpay-signature': 'ab' },
          rawBody: Buffer.from('<html>'),
        }),
      ).toEqual({ verified: false, paymentId: null, reason: 'not JSON' });
    });

    it('names the payment by the order receipt on order.paid, and gives no status for other events', async () => {
      const body = JSON.stringify({
        entity: 'event',
        event: 'refund.processed',
        contains: ['refund'],
        payload: { refund: { entity: { id: 'rfnd_X', status: 'processed' } } },
      });
      const signed = { 'x-razorpay-signature': fake.webhookSignature(body), 'x-razorpay-event-id': 'evt_1' };
      expect(await connector.parseWebhook?.({ headers: signed, rawBody: Buffer.from(body) })).toEqual({
        verified: true,
        eventId: 'evt_1',
        paymentId: null,
        status: null,
      });
      const paid = JSON.stringify({
        event: 'order.paid',
        payload: {
          payment: {
            entity: { id: 'pay_Y', status: 'captured', order_id: 'order_Y', amount: 100, notes: [] },
          },
          order: { entity: { id: 'order_Y', receipt: 'pay_kosh', status: 'paid' } },
        },
      });
      expect(
        await connector.parseWebhook?.({
          headers: { 'X-Razorpay-Signature': fake.webhookSignature(paid) },
          rawBody: Buffer.from(paid),
        }),
      ).toMatchObject({
        verified: true,
        eventId: null,
        paymentId: 'pay_kosh',
        status: { outcome: 'captured' },
      });
    });
  });
});
