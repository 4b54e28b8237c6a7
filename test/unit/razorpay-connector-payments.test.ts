import { describe, expect, it } from 'vitest';
import type { Connector, ConnectorPayment } from '../../src/connectors/connector.js';
import { createRazorpayConnector } from '../../src/connectors/razorpay/razorpay.connector.js';
import {
  RAZORPAY_BANKS,
  RAZORPAY_ERRORS,
  RAZORPAY_WALLETS,
} from '../../src/connectors/razorpay/razorpay.tables.js';
import { PROVIDERS } from '../../src/connectors/registry.js';
import type { FakeRazorpay } from '../helpers/providers/razorpay-fake.js';
import {
  atBank,
  BROWSER,
  continueWith,
  expectStarted,
  newPayment,
  reachBank,
  record,
  useRazorpayFake,
} from './support/razorpay-connector.js';

/** The Razorpay connector against FakeRazorpay: starting a payment, the bank, the return and the status. */

describe('Razorpay connector against FakeRazorpay', () => {
  let fake: FakeRazorpay;
  let connector: Connector;

  useRazorpayFake((suite) => {
    ({ fake, connector } = suite);
  });

  /** Kosh's path up to the bank: the order, then the payment once the browser is here. */
  const toBank = (payment?: ConnectorPayment) => reachBank(connector, payment);

  describe('starting a payment', () => {
    it('creates one order per payment, with its receipt, notes and automatic capture', async () => {
      const payment = newPayment();
      const result = expectStarted(await connector.initiate(payment));
      const [order] = fake.ordersFor(payment.id);
      expect(order).toBeDefined();
      expect(result).toMatchObject({
        action: 'redirect',
        next: { kind: 'browser' },
        reference: order?.id,
        rawStatus: 'created',
        data: { razorpay_order_id: order?.id },
        reconcile: true,
      });
      expect(order).toMatchObject({
        amount: 50_000,
        currency: 'INR',
        receipt: payment.id,
        notes: { kosh_payment_id: payment.id, kosh_order_id: payment.orderId },
        capture: {
          capture: 'automatic',
          capture_options: { automatic_expiry_period: 4320, refund_speed: 'normal' },
        },
      });
      expect(fake.calls).toEqual(['GET /v1/orders', 'POST /v1/orders']);
    });

    it("captures automatically only within Kosh's late-authorisation window", async () => {
      const settings = { cashfreeBaseUrl: '', razorpayBaseUrl: fake.url, timeoutMs: 1_000 };
      const credentials = {
        key_id: fake.keyId,
        key_secret: fake.keySecret,
        webhook_secret: fake.webhookSecret,
      };
      for (const [windowSeconds, minutes] of [
        [5_400, 90],
        [5_459, 90],
        [30 * 86_400, 7_200],
      ] as const) {
        const payment = newPayment();
        const made = PROVIDERS.razorpay.create(credentials, {
          ...settings,
          lateWindowSeconds: windowSeconds,
        });
        expectStarted(await made.initiate(payment));
        expect(fake.ordersFor(payment.id)[0]?.capture).toMatchObject({
          capture: 'automatic',
          capture_options: { automatic_expiry_period: minutes },
        });
      }
    });

    it('finds the order again by its receipt instead of making another', async () => {
      const payment = newPayment();
      const first = expectStarted(await connector.initiate(payment));
      const second = expectStarted(await connector.initiate(payment));
      expect(second.reference).toBe(first.reference);
      expect(fake.ordersFor(payment.id)).toHaveLength(1);
      expect(fake.calls).toEqual(['GET /v1/orders', 'POST /v1/orders', 'GET /v1/orders']);
    });

    it('hands the browser details to Razorpay and redirects to the bank page', async () => {
      const { payment, url } = await toBank(newPayment({ code: 'hdfc' }));
      expect(fake.lastBrowser).toEqual({
        ip: BROWSER.ip,
        user_agent: BROWSER.userAgent,
        referer: BROWSER.referer,
      });
      const [attempt] = fake.paymentsFor(payment.provider.reference as string);
      expect(attempt).toMatchObject({
        amount: 50_000,
        method: 'netbanking',
        bank: 'HDFC',
        email: 'gaurav.kumar@example.com',
        contact: '+919876543210',
        callbackUrl: payment.callbackUrl,
        notes: { kosh_payment_id: payment.id },
        status: 'created',
      });
      expect(url).toBe(`${fake.url}/bank/${attempt?.id}`);
      expect(payment.provider.data).toMatchObject({ razorpay_payment_id: attempt?.id });
    });

    it('leaves out a missing referer instead of inventing one', async () => {
      const payment = newPayment();
      const started = record(payment, expectStarted(await connector.initiate(payment)));
      expectStarted(await continueWith(connector, started, { ...BROWSER, referer: null }));
      expect(fake.lastBrowser).toEqual({ ip: BROWSER.ip, user_agent: BROWSER.userAgent, referer: null });
    });

    it.each([
      ...RAZORPAY_BANKS.map((code) => ['netbanking', code]),
      ...Object.keys(RAZORPAY_WALLETS).map((code) => ['wallet', code]),
    ] as ['netbanking' | 'wallet', string][])('Razorpay takes the %s code %s', async (method, code) => {
      const { payment } = await toBank(newPayment({ method, code }));
      const [attempt] = fake.paymentsFor(payment.provider.reference as string);
      expect(method === 'netbanking' ? attempt?.bank : attempt?.wallet).toBe(
        method === 'netbanking' ? code : RAZORPAY_WALLETS[code],
      );
    });

    it('fails a code the tables do not have without asking Razorpay to pay', async () => {
      const payment = newPayment({ method: 'wallet', code: 'freecharge' });
      const started = record(payment, expectStarted(await connector.initiate(payment)));
      const result = await continueWith(connector, started, BROWSER);
      expect(result).toMatchObject({ outcome: 'failed', errorCode: 'method_unavailable' });
      expect(fake.calls).not.toContain('POST /v1/payments/create/json');
    });

    it("maps Razorpay's documented refusal of the payment", async () => {
      fake.disabledBanks.add('HDFC');
      const payment = newPayment();
      const started = record(payment, expectStarted(await connector.initiate(payment)));
      const result = await continueWith(connector, started, BROWSER);
      expect(result).toMatchObject({
        outcome: 'failed',
        errorCode: 'method_unavailable',
        rawStatus: 'bank_not_enabled',
        reference: started.provider.reference,
      });
    });

    it('refuses an amount Razorpay refuses, before any order exists', async () => {
      const result = await connector.initiate(newPayment({ amount: 50 }));
      expect(result).toMatchObject({ outcome: 'failed', errorCode: 'invalid_request' });
    });

    it('asks instead of failing when the order is already paid (an earlier attempt took the money)', async () => {
      const { payment, url } = await toBank();
      await atBank(url, 'success');
      const again = await continueWith(connector, payment, BROWSER);
      expect(again.outcome).toBe('unknown');
      expect((await connector.status(payment)).outcome).toBe('captured');
    });
  });

  describe('the bank, the return and the status', () => {
    it('a success: a signed return (pending until asked), then captured with the bank reference and fee', async () => {
      const { payment, url } = await toBank();
      const back = await atBank(url, 'success');
      expect(back.target).toBe(payment.callbackUrl);
      const returned = await connector.handleReturn?.(payment, back.browserReturn);
      expect(returned).toMatchObject({
        verified: true,
        status: { outcome: 'pending', reference: payment.provider.reference },
      });
      const status = await connector.status(payment);
      const [attempt] = fake.paymentsFor(payment.provider.reference as string);
      expect(status).toMatchObject({
        outcome: 'captured',
        rawStatus: 'captured',
        amount: 50_000,
        currency: 'INR',
        reference: payment.provider.reference,
        bankReference: attempt?.bankTransactionId,
        fee: 1_000,
        tax: 153,
        data: { razorpay_payment_id: attempt?.id },
      });
      expect(fake.calls).toContain('GET /v1/payments/:id');
    });

    it('takes the return as a GET too', async () => {
      const { payment, url } = await toBank();
      const back = await atBank(url, 'success');
      const returned = await connector.handleReturn?.(payment, {
        method: 'GET',
        query: back.fields,
        body: {},
      });
      expect(returned?.verified).toBe(true);
    });

    it('an authorisation not captured yet is still pending', async () => {
      fake.autoCapture = false;
      const { payment, url } = await toBank();
      await atBank(url, 'success');
      expect(await connector.status(payment)).toMatchObject({ outcome: 'pending', rawStatus: 'authorized' });
    });

    it('while the customer is at the bank the payment is pending', async () => {
      const { payment } = await toBank();
      expect(await connector.status(payment)).toMatchObject({ outcome: 'pending', rawStatus: 'created' });
    });

    it.each([
      ['failure', 'payment_failed', 'payment_declined'],
      ['failure', 'bank_technical_error', 'bank_unavailable'],
      ['failure', 'insufficient_funds', 'insufficient_funds'],
      ['cancel', 'payment_cancelled', 'payment_cancelled'],
    ] as const)(
      'a %s (%s) is mapped to %s, and the unsigned return is a hint only',
      async (choice, reason, code) => {
        fake.declineReason = reason;
        const { payment, url } = await toBank();
        const back = await atBank(url, choice);
        expect(back.fields['error[reason]']).toBe(reason);
        const returned = await connector.handleReturn?.(payment, back.browserReturn);
        expect(returned).toMatchObject({ verified: false, status: { outcome: 'failed', errorCode: code } });
        const status = await connector.status(payment);
        expect(status).toMatchObject({ outcome: 'failed', rawStatus: 'failed', errorCode: code });
        expect(status.errorReason).toBe(RAZORPAY_ERRORS[reason]?.reason);
      },
    );

    it('reads the error fields when the form is not parsed into objects', async () => {
      const { payment, url } = await toBank();
      const back = await atBank(url, 'failure');
      const returned = await connector.handleReturn?.(payment, {
        method: 'POST',
        query: {},
        body: back.fields,
      });
      expect(returned).toMatchObject({
        verified: false,
        status: { outcome: 'failed', errorCode: 'payment_declined' },
      });
    });

    it('refuses a forged signature', async () => {
      const { payment, url } = await toBank();
      const back = await atBank(url, 'success');
      for (const signature of ['0'.repeat(64), 'not-hex', '', `${back.fields.razorpay_signature}00`]) {
        const returned = await connector.handleReturn?.(payment, {
          method: 'POST',
          query: {},
          body: { ...back.fields, razorpay_signature: signature },
        });
        expect(returned, signature).toEqual({ verified: false });
      }
      // Signed with another key: not Razorpay's signature for this merchant.
      const other = createRazorpayConnector({
        baseUrl: fake.url,
        credentials: { key_id: fake.keyId, key_secret: 'another-secret', webhook_secret: fake.webhookSecret },
      });
      expect(await other.handleReturn?.(payment, back.browserReturn)).toEqual({ verified: false });
    });

    it("refuses another payment's signed return", async () => {
      const first = await toBank();
      const second = await toBank();
      const back = await atBank(first.url, 'success');
      // Correctly signed by Razorpay, but for the first payment's order.
      expect(await connector.handleReturn?.(second.payment, back.browserReturn)).toEqual({ verified: false });
      // Its order id replaced by the second payment's: the signature no longer matches.
      const swapped = { ...back.fields, razorpay_order_id: second.payment.provider.reference as string };
      expect(
        await connector.handleReturn?.(second.payment, { method: 'POST', query: {}, body: swapped }),
      ).toEqual({
        verified: false,
      });
      // An error return naming another order gives no hint either.
      const failed = await toBank();
      const error = await atBank(failed.url, 'failure');
      expect(await connector.handleReturn?.(second.payment, error.browserReturn)).toEqual({
        verified: false,
      });
    });

    it('reads a return with nothing in it as unverified', async () => {
      const { payment } = await toBank();
      expect(await connector.handleReturn?.(payment, { method: 'GET', query: {}, body: {} })).toEqual({
        verified: false,
      });
    });

    it('is not_started while the order has no payment, and finds a lost order by its receipt', async () => {
      const payment = newPayment();
      expect(await connector.status(payment)).toMatchObject({
        outcome: 'not_started',
        rawStatus: 'no_order',
      });
      fake.faults.order = 'timeout';
      expect((await connector.initiate(payment)).outcome).toBe('unknown');
      fake.faults = {};
      const [order] = fake.ordersFor(payment.id);
      expect(await connector.status(payment)).toMatchObject({
        outcome: 'not_started',
        rawStatus: 'no_payment',
        reference: order?.id,
      });
    });

    it("an attempt Kosh never recorded is not the customer's: created or failed, it is not_started", async () => {
      const payment = newPayment();
      const started = record(payment, expectStarted(await connector.initiate(payment)));
      for (const choice of ['created', 'failure'] as const) {
        fake.faults.pay = 'garbage';
        expect((await continueWith(connector, started, BROWSER)).outcome).toBe('unknown');
        fake.faults = {};
        const [attempt] = fake.paymentsFor(started.provider.reference as string).slice(-1);
        if (choice === 'failure' && attempt) fake.decide(attempt, 'failure');
        expect(await connector.status(started)).toMatchObject({
          outcome: 'not_started',
          rawStatus: 'attempt_not_shown',
        });
      }
    });

    /** Two visits of Kosh's page at once: two attempts on the order; Kosh records the second. */
    async function twoAttempts() {
      const payment = newPayment();
      const withOrder = record(payment, expectStarted(await connector.initiate(payment)));
      const first = expectStarted(await continueWith(connector, withOrder, BROWSER));
      const second = expectStarted(await continueWith(connector, withOrder, BROWSER));
      if (first.next.kind !== 'redirect') throw new Error('expected a redirect');
      const [firstAttempt, secondAttempt] = fake.paymentsFor(withOrder.provider.reference as string);
      return { recorded: record(withOrder, second), firstUrl: first.next.url, firstAttempt, secondAttempt };
    }

    it('finds the money when the customer paid the attempt Kosh did not record', async () => {
      const { recorded, firstUrl, firstAttempt, secondAttempt } = await twoAttempts();
      expect(recorded.provider.data.razorpay_payment_id).toBe(secondAttempt?.id);
      const back = await atBank(firstUrl, 'success');
      expect((await connector.handleReturn?.(recorded, back.browserReturn))?.verified).toBe(true);
      const paid = { outcome: 'captured', data: { razorpay_payment_id: firstAttempt?.id } };
      expect(await connector.status(recorded)).toMatchObject(paid);
      // Razorpay fails the abandoned attempt (the recorded one): the money is still found.
      fake.decide(secondAttempt!, 'failure');
      expect(await connector.status(recorded)).toMatchObject(paid);
    });

    it('keeps a failure of the recorded attempt open while another attempt is still at the bank', async () => {
      const { recorded, firstAttempt, secondAttempt } = await twoAttempts();
      fake.decide(secondAttempt!, 'failure');
      expect(await connector.status(recorded)).toMatchObject({ outcome: 'pending' });
      fake.decide(firstAttempt!, 'failure');
      expect(await connector.status(recorded)).toMatchObject({ outcome: 'failed', rawStatus: 'failed' });
    });

    it('asks the order for its best attempt when the payment id is not known', async () => {
      const { payment, url } = await toBank();
      await atBank(url, 'success');
      const withoutId = {
        ...payment,
        provider: { ...payment.provider, data: { razorpay_order_id: payment.provider.reference } },
      };
      expect(await connector.status(withoutId)).toMatchObject({ outcome: 'captured' });
      expect(fake.calls).toContain('GET /v1/orders/:id/payments');
    });

    it('reads a status it does not know as unknown', async () => {
      const { payment } = await toBank();
      const [attempt] = fake.paymentsFor(payment.provider.reference as string);
      (attempt as { status: string }).status = 'processing';
      expect(await connector.status(payment)).toMatchObject({ outcome: 'unknown', rawStatus: 'processing' });
    });
  });
});
