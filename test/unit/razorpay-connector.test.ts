import http from 'node:http';
import type { AddressInfo } from 'node:net';
import qs from 'qs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  BrowserDetails,
  BrowserReturn,
  Connector,
  ConnectorPayment,
  InitiateResult,
  StatusResult,
} from '../../src/connectors/connector.js';
import { createRazorpayConnector } from '../../src/connectors/razorpay/razorpay.connector.js';
import {
  razorpayFailure,
  razorpayPaymentStatus,
  razorpayRefundResult,
} from '../../src/connectors/razorpay/razorpay.shapes.js';
import {
  RAZORPAY_BANKS,
  RAZORPAY_DEFAULT_ERROR,
  RAZORPAY_ERRORS,
  RAZORPAY_PAYMENT_STATUSES,
  RAZORPAY_REFUND_SPEEDS,
  RAZORPAY_REFUND_STATUSES,
  RAZORPAY_WALLETS,
} from '../../src/connectors/razorpay/razorpay.tables.js';
import { SANDBOX_BANKS, SANDBOX_WALLETS } from '../../src/connectors/sandbox/catalogue.js';
import { connectorPayment, connectorRefund } from '../helpers/connector-objects.js';
import { unescapeHtml } from '../helpers/html.js';
import {
  FakeRazorpay,
  type RazorpayEndpoint,
  type RazorpayFault,
} from '../helpers/providers/razorpay-fake.js';

/** Razorpay's own sample customer and order, as its documentation shows them. */
const newPayment = (overrides: Partial<ConnectorPayment> = {}): ConnectorPayment =>
  connectorPayment({
    amount: 50_000,
    customer: { name: 'Gaurav Kumar', email: 'gaurav.kumar@example.com', contact: '+919876543210' },
    description: 'Order #1',
    ...overrides,
  });

const BROWSER: BrowserDetails = {
  ip: '203.0.113.7',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0',
  referer: 'https://shop.example/checkout',
};

/** What Kosh records of a connector's answer (provider_reference, provider_status, provider_data). */
function record(payment: ConnectorPayment, answer: InitiateResult | StatusResult): ConnectorPayment {
  const result = answer as {
    reference?: string | null;
    rawStatus?: string | null;
    data?: Record<string, unknown>;
  };
  return {
    ...payment,
    provider: {
      ...payment.provider,
      reference: result.reference ?? payment.provider.reference,
      status: result.rawStatus ?? payment.provider.status,
      data: { ...payment.provider.data, ...result.data },
    },
  };
}

/** The connector's browser step (the Razorpay connector always has one). */
function continueWith(connector: Connector, payment: ConnectorPayment, browser: BrowserDetails) {
  if (!connector.continueInBrowser) throw new Error('no continueInBrowser');
  return connector.continueInBrowser(payment, browser);
}

function expectStarted(result: InitiateResult): Extract<InitiateResult, { outcome: 'started' }> {
  expect(result.outcome, JSON.stringify(result)).toBe('started');
  return result as Extract<InitiateResult, { outcome: 'started' }>;
}

/** Kosh's form parser (src/http/body.ts): bracket keys one level deep. */
const parseForm = (fields: Record<string, string>) =>
  qs.parse(new URLSearchParams(fields).toString(), {
    depth: 1,
    parameterLimit: 1_000,
    arrayLimit: 0,
    plainObjects: true,
    allowPrototypes: true,
    strictDepth: true,
  }) as Record<string, unknown>;

/** The customer at the fake bank page: the decision, then the auto-submitting return form. */
async function atBank(url: string, choice: 'success' | 'failure' | 'cancel') {
  const page = await fetch(url);
  expect(page.status).toBe(200);
  const html = await page.text();
  const action = /<form method="POST" action="([^"]+)"/.exec(html)?.[1];
  expect(action).toBeDefined();
  const decided = await fetch(new URL(action as string, url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ choice }).toString(),
  });
  const back = await decided.text();
  const target = /<form id="back" method="POST" action="([^"]+)"/.exec(back)?.[1];
  const fields: Record<string, string> = {};
  for (const match of back.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[unescapeHtml(match[1] as string)] = unescapeHtml(match[2] as string);
  }
  const browserReturn: BrowserReturn = { method: 'POST', query: {}, body: parseForm(fields) };
  return { target: target && unescapeHtml(target), fields, browserReturn, html: back };
}

describe('Razorpay tables', () => {
  const connector = createRazorpayConnector({
    baseUrl: 'http://127.0.0.1:9',
    credentials: { key_id: 'rzp_test_x', key_secret: 'secret', webhook_secret: 'whsec' },
  });

  it('offers only Kosh bank and wallet codes', () => {
    const banks = new Set(SANDBOX_BANKS.map((bank) => bank.code));
    const wallets = new Set(SANDBOX_WALLETS.map((wallet) => wallet.code));
    expect(connector.methods?.netbanking.length).toBeGreaterThan(0);
    for (const code of connector.methods?.netbanking ?? []) expect(banks.has(code), code).toBe(true);
    for (const code of connector.methods?.wallet ?? []) expect(wallets.has(code), code).toBe(true);
    expect(connector.methods?.netbanking).toEqual(RAZORPAY_BANKS);
    expect(connector.methods?.wallet).toEqual(Object.keys(RAZORPAY_WALLETS));
  });

  it('takes every Kosh bank (Razorpay uses the same codes) and every listed wallet but Freecharge', () => {
    expect([...RAZORPAY_BANKS].sort()).toEqual(SANDBOX_BANKS.map((bank) => bank.code).sort());
    expect(Object.keys(RAZORPAY_WALLETS).sort()).toEqual(
      SANDBOX_WALLETS.map((wallet) => wallet.code)
        .filter((code) => code !== 'freecharge')
        .sort(),
    );
    for (const [kosh, razorpay] of Object.entries(RAZORPAY_WALLETS)) {
      expect(kosh).toBe(kosh.toLowerCase());
      expect(razorpay).toMatch(/^[a-z]+$/);
    }
  });

  it.each([
    ['created', 'pending'],
    ['authorized', 'pending'],
    ['captured', 'captured'],
    ['failed', 'failed'],
    ['refunded', 'captured'],
  ] as const)('payment status %s → %s', (status, outcome) => {
    expect(RAZORPAY_PAYMENT_STATUSES[status]).toBe(outcome);
    const result = razorpayPaymentStatus({
      id: 'pay_X',
      status,
      order_id: 'order_X',
      captured: status !== 'failed',
    });
    expect(result.outcome).toBe(outcome);
    expect(result.rawStatus).toBe(status);
    expect(result.reference).toBe('order_X');
    if (outcome === 'failed') expect(result.errorCode).toBe(RAZORPAY_DEFAULT_ERROR.code);
  });

  it('walks every payment status row', () => {
    for (const [status, outcome] of Object.entries(RAZORPAY_PAYMENT_STATUSES)) {
      expect(razorpayPaymentStatus({ status, captured: true }).outcome).toBe(outcome);
    }
  });

  it.each(['pending', 'CAPTURED', 'processing', 'constructor', '__proto__', 'toString', ''])(
    'an unknown payment status %j is unknown, never failed',
    (status) => {
      const result = razorpayPaymentStatus({ status });
      expect(result.outcome).toBe('unknown');
      expect(result.errorCode).toBeUndefined();
    },
  );

  it('reads a body without a status, or no object at all, as unknown', () => {
    expect(razorpayPaymentStatus({}).outcome).toBe('unknown');
    expect(razorpayPaymentStatus(null).outcome).toBe('unknown');
    expect(razorpayPaymentStatus('captured').outcome).toBe('unknown');
  });

  it('tells an authorisation returned uncaptured from a refunded capture', () => {
    const uncaptured = razorpayPaymentStatus({ status: 'refunded', captured: false });
    expect(uncaptured.outcome).toBe('failed');
    expect(uncaptured.errorCode).toBe('payment_timed_out');
    expect(razorpayPaymentStatus({ status: 'refunded', captured: true }).outcome).toBe('captured');
  });

  it('maps every error row, by reason first and code second', () => {
    for (const [key, failure] of Object.entries(RAZORPAY_ERRORS)) {
      expect(failure.code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(failure.reason.length).toBeGreaterThan(10);
      expect(razorpayFailure(key, undefined)).toEqual(failure);
      expect(razorpayFailure(undefined, key)).toEqual(failure);
    }
    expect(razorpayFailure('payment_cancelled', 'BAD_REQUEST_ERROR').code).toBe('payment_cancelled');
    expect(razorpayFailure('something_new', 'GATEWAY_ERROR').code).toBe('bank_unavailable');
  });

  it.each([
    [undefined, undefined],
    ['something_new', undefined],
    ['constructor', '__proto__'],
    ['hasOwnProperty', 'NEW_ERROR'],
  ])('an unknown error (%s, %s) is the default decline', (reason, code) => {
    expect(razorpayFailure(reason, code)).toEqual(RAZORPAY_DEFAULT_ERROR);
  });

  it('maps the documented failures the way Kosh names them', () => {
    expect(razorpayPaymentStatus({ status: 'failed', error_reason: 'payment_cancelled' }).errorCode).toBe(
      'payment_cancelled',
    );
    expect(razorpayPaymentStatus({ status: 'failed', error_reason: 'bank_technical_error' }).errorCode).toBe(
      'bank_unavailable',
    );
    expect(
      razorpayPaymentStatus({
        status: 'failed',
        error_code: 'BAD_REQUEST_ERROR',
        error_reason: 'payment_failed',
      }).errorCode,
    ).toBe('payment_declined');
    expect(razorpayPaymentStatus({ status: 'failed', error_reason: 'payment_timed_out' }).errorCode).toBe(
      'payment_timed_out',
    );
  });

  it.each(Object.entries(RAZORPAY_REFUND_STATUSES))('refund status %s → %s', (status, outcome) => {
    const result = razorpayRefundResult({ id: 'rfnd_X', status });
    expect(result.outcome).toBe(outcome);
    expect(result.reference).toBe('rfnd_X');
    if (outcome === 'failed') expect(result.errorCode).toBe('refund_declined');
  });

  it.each(['created', 'PROCESSED', 'constructor', ''])('an unknown refund status %j is unknown', (status) => {
    expect(razorpayRefundResult({ status }).outcome).toBe('unknown');
  });

  it('sends instant refunds as optimum', () => {
    expect(RAZORPAY_REFUND_SPEEDS).toEqual({ normal: 'normal', instant: 'optimum' });
  });
});

describe('Razorpay connector against FakeRazorpay', () => {
  let fake: FakeRazorpay;
  let connector: Connector;

  const connectorFor = (
    overrides: Partial<{ key_id: string; key_secret: string; webhook_secret: string }> = {},
  ) =>
    createRazorpayConnector({
      baseUrl: fake.url,
      credentials: {
        key_id: fake.keyId,
        key_secret: fake.keySecret,
        webhook_secret: fake.webhookSecret,
        ...overrides,
      },
      timeoutMs: 1_000,
    });

  beforeEach(async () => {
    fake = await FakeRazorpay.start();
    fake.timeoutMs = 2_500;
    connector = connectorFor();
  });

  afterEach(async () => {
    await fake.close();
  });

  /** Kosh's path up to the bank: the order, then the payment once the browser is here. */
  async function toBank(payment = newPayment()) {
    const initiated = expectStarted(await connector.initiate(payment));
    const withOrder = record(payment, initiated);
    const continued = expectStarted(await continueWith(connector, withOrder, BROWSER));
    const atRazorpay = record(withOrder, continued);
    const next = continued.next;
    if (next.kind !== 'redirect') throw new Error(`expected a redirect, got ${next.kind}`);
    return { payment: atRazorpay, url: next.url };
  }

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

  describe('refunds', () => {
    async function captured() {
      const { payment, url } = await toBank();
      await atBank(url, 'success');
      return record(payment, await connector.status(payment));
    }

    it('refunds in full, with its receipt, notes and idempotency key', async () => {
      const payment = await captured();
      const refund = connectorRefund(payment);
      const result = await connector.refund(refund);
      const [made] = fake.refundsFor(refund.id);
      expect(result).toMatchObject({ outcome: 'processed', rawStatus: 'processed', reference: made?.id });
      expect(made).toMatchObject({
        amount: 50_000,
        speedRequested: 'normal',
        notes: { kosh_refund_id: refund.id, kosh_payment_id: payment.id },
      });
      expect(fake.calls.slice(-2)).toEqual(['GET /v1/payments/:id/refunds', 'POST /v1/payments/:id/refund']);
    });

    it('refunds in parts, and an instant refund as optimum', async () => {
      const payment = await captured();
      const first = connectorRefund(payment, { amount: 20_000, speed: 'instant' });
      const second = connectorRefund(payment, { amount: 30_000 });
      expect((await connector.refund(first)).outcome).toBe('processed');
      expect((await connector.refund(second)).outcome).toBe('processed');
      expect(fake.refundsFor(first.id)[0]?.speedRequested).toBe('optimum');
      expect(fake.refundsFor(second.id)[0]?.amount).toBe(30_000);
      const third = await connector.refund(connectorRefund(payment, { amount: 100 }));
      expect(third).toMatchObject({ outcome: 'failed', errorCode: 'refund_declined' });
    });

    it('a resend with the same Kosh refund id makes one refund (found by its receipt)', async () => {
      const payment = await captured();
      const refund = connectorRefund(payment, { amount: 10_000 });
      const first = await connector.refund(refund);
      const again = await connector.refund(refund);
      expect(again.reference).toBe(first.reference);
      expect(fake.refundsFor(refund.id)).toHaveLength(1);
      expect(fake.calls.filter((call) => call === 'POST /v1/payments/:id/refund')).toHaveLength(1);
    });

    it('a resend with the same Kosh refund id makes one refund (the idempotency key, when the look-up fails)', async () => {
      const payment = await captured();
      const refund = connectorRefund(payment, { amount: 10_000 });
      const first = await connector.refund(refund);
      fake.faults.refundStatus = 'bad_gateway_html';
      const again = await connector.refund(refund);
      expect(again).toMatchObject({ outcome: 'processed', reference: first.reference });
      expect(fake.refundsFor(refund.id)).toHaveLength(1);
      expect(fake.calls.filter((call) => call === 'POST /v1/payments/:id/refund')).toHaveLength(2);
    });

    it('is pending, then settles either way', async () => {
      fake.refundOutcome = 'pending';
      const payment = await captured();
      const refund = connectorRefund(payment, { amount: 10_000 });
      const result = await connector.refund(refund);
      expect(result).toMatchObject({ outcome: 'pending', rawStatus: 'pending' });
      const acknowledged = {
        ...refund,
        provider: { reference: result.reference ?? null, status: 'pending', data: {} },
      };
      expect((await connector.refundStatus(acknowledged)).outcome).toBe('pending');
      fake.settleRefunds('processed');
      expect(await connector.refundStatus(acknowledged)).toMatchObject({ outcome: 'processed' });
      expect(fake.calls).toContain('GET /v1/refunds/:id');

      const other = connectorRefund(payment, { amount: 10_000 });
      await connector.refund(other);
      fake.settleRefunds('failed');
      // Never acknowledged (its answer lost): found by its receipt.
      expect(await connector.refundStatus(other)).toMatchObject({
        outcome: 'failed',
        errorCode: 'refund_declined',
      });
    });

    it('does not know a refund Razorpay never made', async () => {
      const payment = await captured();
      expect(await connector.refundStatus(connectorRefund(payment))).toMatchObject({ outcome: 'unknown' });
    });

    it('refuses to refund a payment that was not captured', async () => {
      fake.autoCapture = false;
      const { payment, url } = await toBank();
      await atBank(url, 'success');
      expect(await connector.refund(connectorRefund(payment))).toMatchObject({
        outcome: 'failed',
        errorCode: 'refund_declined',
      });
    });
  });

  describe('unreadable answers are unknown, never failed', () => {
    const FAULTS: RazorpayFault[] = ['timeout', 'bad_gateway_html', 'garbage', 'reset'];
    const cases = FAULTS.flatMap((fault) =>
      (['order', 'pay', 'status', 'refund', 'refundStatus'] as RazorpayEndpoint[]).map(
        (endpoint) => [endpoint, fault] as const,
      ),
    );

    it.each(cases)('%s: %s', async (endpoint, fault) => {
      if (endpoint === 'order') {
        const payment = newPayment();
        fake.faults.order = fault;
        const result = await connector.initiate(payment);
        expect(result.outcome).toBe('unknown');
        // Razorpay made the order; the next start finds it instead of making another.
        expect(fake.ordersFor(payment.id)).toHaveLength(1);
        fake.faults = {};
        expectStarted(await connector.initiate(payment));
        expect(fake.ordersFor(payment.id)).toHaveLength(1);
        return;
      }
      if (endpoint === 'pay') {
        const payment = newPayment();
        const started = record(payment, expectStarted(await connector.initiate(payment)));
        fake.faults.pay = fault;
        const result = await continueWith(connector, started, BROWSER);
        expect(result.outcome).toBe('unknown');
        const orderId = started.provider.reference as string;
        expect(fake.paymentsFor(orderId)).toHaveLength(1);
        fake.faults = {};
        // The customer never saw that attempt: nothing they did is at Razorpay yet.
        expect(await connector.status(started)).toMatchObject({
          outcome: 'not_started',
          rawStatus: 'attempt_not_shown',
          reference: orderId,
        });
        // Called again, a fresh attempt on the same order takes the customer to the bank.
        const again = expectStarted(await continueWith(connector, started, BROWSER));
        expect(again.reference).toBe(orderId);
        if (again.next.kind !== 'redirect') throw new Error(`expected a redirect, got ${again.next.kind}`);
        await atBank(again.next.url, 'success');
        expect(await connector.status(record(started, again))).toMatchObject({ outcome: 'captured' });
        expect(fake.ordersFor(started.id)).toHaveLength(1);
        expect(fake.paymentsFor(orderId).map((attempt) => attempt.status)).toEqual(['created', 'captured']);
        return;
      }
      const { payment, url } = await toBank();
      await atBank(url, 'success');
      const paid = record(payment, await connector.status(payment));
      if (endpoint === 'status') {
        fake.faults.status = fault;
        expect((await connector.status(paid)).outcome).toBe('unknown');
        const byOrder = {
          ...paid,
          provider: { ...paid.provider, data: { razorpay_order_id: paid.provider.reference } },
        };
        expect((await connector.status(byOrder)).outcome).toBe('unknown');
        return;
      }
      const refund = connectorRefund(paid, { amount: 10_000 });
      if (endpoint === 'refund') {
        fake.faults.refund = fault;
        expect((await connector.refund(refund)).outcome).toBe('unknown');
        expect(fake.refundsFor(refund.id)).toHaveLength(1);
        fake.faults = {};
        expect((await connector.refund(refund)).outcome).toBe('processed');
        expect(fake.refundsFor(refund.id)).toHaveLength(1);
        return;
      }
      const made = await connector.refund(refund);
      fake.faults.refundStatus = fault;
      const acknowledged = {
        ...refund,
        provider: { reference: made.reference ?? null, status: 'processed', data: {} },
      };
      expect((await connector.refundStatus(acknowledged)).outcome).toBe('unknown');
      expect((await connector.refundStatus(refund)).outcome).toBe('unknown');
    });
  });

  describe('wrong credentials', () => {
    it.each([401, 400] as const)('are never a success, nor a failure (HTTP %s)', async (status) => {
      fake.authFailureStatus = status;
      const { payment, url } = await toBank();
      await atBank(url, 'success');
      const paid = record(payment, await connector.status(payment));
      const wrong = connectorFor({ key_secret: 'wrong-secret' });
      expect((await wrong.initiate(newPayment())).outcome).toBe('unknown');
      const fresh = newPayment();
      const started = record(fresh, expectStarted(await connector.initiate(fresh)));
      expect((await continueWith(wrong, started, BROWSER)).outcome).toBe('unknown');
      expect((await wrong.status(paid)).outcome).toBe('unknown');
      expect((await wrong.refund(connectorRefund(paid))).outcome).toBe('unknown');
      expect(fake.refunds.size).toBe(0);
    });
  });
});
