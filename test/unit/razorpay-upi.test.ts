import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Connector, ConnectorPayment, InitiateResult } from '../../src/connectors/connector.js';
import { createRazorpayConnector } from '../../src/connectors/razorpay/razorpay.connector.js';
import { razorpayPaymentStatus } from '../../src/connectors/razorpay/razorpay.shapes.js';
import {
  RAZORPAY_ERRORS,
  RAZORPAY_PAYMENT_STATUSES,
  RAZORPAY_UPI,
  RAZORPAY_UPI_PAYMENT_STATUSES,
} from '../../src/connectors/razorpay/razorpay.tables.js';
import { upiExpiryMinutes, upiLinkOf } from '../../src/connectors/razorpay/razorpay.upi.js';
import { connectorPayment } from '../helpers/connector-objects.js';
import { FakeRazorpay } from '../helpers/providers/razorpay-fake.js';
import { openUpiAttempt, upiCustomer } from '../helpers/providers/razorpay-fake-upi.js';

const CREATED = new Date('2026-11-26T10:00:00Z');
const upiPayment = (
  flow: 'intent' | 'qr' | 'collect',
  overrides: Partial<ConnectorPayment> = {},
  minutes = 10,
): ConnectorPayment =>
  connectorPayment({
    amount: 123_456,
    method: 'upi',
    code: '',
    description: 'Two notebooks',
    createdAt: CREATED,
    upi: {
      flow,
      vpa: flow === 'collect' ? 'asha.rao@okbank' : null,
      expiresAt: new Date(CREATED.getTime() + minutes * 60_000),
    },
    ...overrides,
  });

/** What Kosh records of a start's answer. */
function record(payment: ConnectorPayment, answer: InitiateResult): ConnectorPayment {
  if (answer.outcome !== 'started') return { ...payment, provider: { ...payment.provider, data: {} } };
  return {
    ...payment,
    provider: {
      ...payment.provider,
      reference: answer.reference,
      status: answer.rawStatus,
      data: { ...answer.data },
    },
  };
}

describe('Razorpay UPI tables and shapes', () => {
  it('takes intent (and so QR) and collect', () => {
    expect(RAZORPAY_UPI).toEqual({ intent: true, collect: true });
  });

  it.each(Object.entries(RAZORPAY_UPI_PAYMENT_STATUSES))('UPI status %s → %s', (status, outcome) => {
    expect(razorpayPaymentStatus({ id: 'pay_1', method: 'upi', status }).outcome).toBe(outcome);
  });

  it('reads `created` as not started for UPI (nobody approved it yet), pending for net banking', () => {
    expect(razorpayPaymentStatus({ method: 'upi', status: 'created' }).outcome).toBe('not_started');
    expect(razorpayPaymentStatus({ method: 'netbanking', status: 'created' }).outcome).toBe(
      RAZORPAY_PAYMENT_STATUSES.created,
    );
  });

  it.each(['CREATED', 'pending', 'constructor', '__proto__', ''])(
    'an unknown UPI status %j is unknown',
    (s) => {
      expect(razorpayPaymentStatus({ method: 'upi', status: s }).outcome).toBe('unknown');
    },
  );

  it("reads the payer's VPA and the UPI RRN of a captured UPI payment (Razorpay's documented sample)", () => {
    const result = razorpayPaymentStatus({
      id: 'pay_G8VQzjPLoAvm6D',
      entity: 'payment',
      amount: 1000,
      currency: 'INR',
      status: 'captured',
      order_id: 'order_G8VPOayFxWEU28',
      method: 'upi',
      captured: true,
      vpa: 'gaurav.kumar@exampleupi',
      fee: 24,
      tax: 4,
      acquirer_data: { rrn: '033814379298' },
    });
    expect(result).toMatchObject({
      outcome: 'captured',
      rawStatus: 'captured',
      amount: 1000,
      currency: 'INR',
      reference: 'order_G8VPOayFxWEU28',
      bankReference: '033814379298',
      payerVpa: 'gaurav.kumar@exampleupi',
      fee: 24,
      tax: 4,
      data: { razorpay_payment_id: 'pay_G8VQzjPLoAvm6D' },
    });
  });

  it('names no payer for net banking', () => {
    expect(razorpayPaymentStatus({ method: 'netbanking', status: 'captured' })).not.toHaveProperty(
      'payerVpa',
    );
  });

  it("fails a UPI payment with Kosh's code for the reason and Razorpay's own description", () => {
    const result = razorpayPaymentStatus({
      method: 'upi',
      status: 'failed',
      error_code: 'BAD_REQUEST_ERROR',
      error_reason: 'payment_cancelled',
      error_description: 'The customer declined the payment in the UPI app.',
    });
    expect(result).toMatchObject({
      outcome: 'failed',
      errorCode: RAZORPAY_ERRORS.payment_cancelled?.code,
      errorReason: 'The customer declined the payment in the UPI app.',
    });
    // Without a description, Kosh's own reason for the code.
    expect(
      razorpayPaymentStatus({ method: 'upi', status: 'failed', error_reason: 'payment_failed' }),
    ).toMatchObject({ errorCode: 'payment_declined', errorReason: RAZORPAY_ERRORS.payment_failed?.reason });
  });

  it('keeps only a upi://pay link with a payee', () => {
    expect(upiLinkOf({ link: 'upi://pay?pa=shop@icici&am=1.00' })).toBe('upi://pay?pa=shop@icici&am=1.00');
    for (const link of ['https://rzp.io/x', 'upi://mandate?pa=shop@icici', 'upi://pay?am=1.00', '', 7, null])
      expect(upiLinkOf({ link })).toBeUndefined();
    expect(upiLinkOf('garbage')).toBeUndefined();
  });

  it("sends Kosh's window as upi.expiry_time, within Razorpay's 5 to 5760 minutes", () => {
    expect(upiExpiryMinutes(upiPayment('intent', {}, 10) as never)).toBe(10);
    expect(upiExpiryMinutes(upiPayment('intent', {}, 60) as never)).toBe(60);
    expect(upiExpiryMinutes(upiPayment('intent', {}, 2) as never)).toBe(5);
    expect(upiExpiryMinutes(upiPayment('intent', {}, 10_000) as never)).toBe(5760);
  });
});

describe('Razorpay UPI against FakeRazorpay', () => {
  let fake: FakeRazorpay;
  let connector: Connector;

  beforeEach(async () => {
    fake = await FakeRazorpay.start();
    fake.timeoutMs = 2_000;
    fake.webhookTiming = 'none';
    connector = createRazorpayConnector({
      baseUrl: fake.url,
      credentials: { key_id: fake.keyId, key_secret: fake.keySecret, webhook_secret: fake.webhookSecret },
      timeoutMs: 1_000,
    });
  });
  afterEach(() => fake.close());

  function started(result: InitiateResult) {
    expect(result.outcome, JSON.stringify(result)).toBe('started');
    return result as Extract<InitiateResult, { outcome: 'started' }>;
  }

  it.each(['intent', 'qr'] as const)(
    '%s: one order, then an S2S UPI intent attempt; its upi://pay link as Razorpay gave it',
    async (flow) => {
      const payment = upiPayment(flow);
      const result = started(await connector.initiate(payment));
      const [order] = fake.ordersFor(payment.id);
      const attempt = openUpiAttempt(fake, payment.id);
      expect(fake.ordersFor(payment.id)).toHaveLength(1);
      expect(result).toEqual({
        outcome: 'started',
        action: 'upi',
        next: { kind: 'upi', link: attempt?.upi?.link },
        reference: order?.id,
        rawStatus: 'created',
        data: { razorpay_order_id: order?.id, razorpay_payment_id: attempt?.id },
        reconcile: true,
      });
      const link = new URL((result.next as { link: string }).link);
      expect(link.protocol).toBe('upi:');
      expect(link.searchParams.get('pa')).toBe(fake.upiPayeeVpa);
      expect(link.searchParams.get('am')).toBe('1234.56');
      expect(fake.calls).toEqual(['GET /v1/orders', 'POST /v1/orders', 'POST /v1/payments/create/upi']);
      // No browser at the merchant's S2S call: no ip, referer or user agent, and no placeholders.
      expect(fake.lastUpiRequest).toEqual({
        amount: 123_456,
        currency: 'INR',
        order_id: order?.id,
        email: payment.customer.email,
        contact: payment.customer.contact,
        method: 'upi',
        upi: { flow: 'intent', expiry_time: 10 },
        callback_url: payment.callbackUrl,
        description: 'Two notebooks',
        notes: { kosh_payment_id: payment.id, kosh_order_id: payment.orderId },
      });
    },
  );

  it('collect: the request goes to the VPA; no link; the payer is that VPA', async () => {
    const payment = upiPayment('collect', {}, 30);
    const result = started(await connector.initiate(payment));
    expect(result.next).toEqual({ kind: 'upi', link: null });
    expect(fake.lastUpiRequest?.upi).toEqual({ flow: 'collect', vpa: 'asha.rao@okbank', expiry_time: 30 });
    const recorded = record(payment, result);
    expect(await connector.status(recorded)).toMatchObject({ outcome: 'not_started', rawStatus: 'created' });
    await upiCustomer(fake, payment.id, 'approve');
    const status = await connector.status(recorded);
    expect(status).toMatchObject({
      outcome: 'captured',
      payerVpa: 'asha.rao@okbank',
      bankReference: expect.stringMatching(/^\d{12}$/),
      amount: 123_456,
      reference: result.reference,
    });
  });

  it('intent approved: captured, paid by the customer’s VPA, with its RRN', async () => {
    const payment = upiPayment('intent');
    const recorded = record(payment, started(await connector.initiate(payment)));
    expect((await connector.status(recorded)).outcome).toBe('not_started');
    await upiCustomer(fake, payment.id, 'approve');
    expect(await connector.status(recorded)).toMatchObject({
      outcome: 'captured',
      payerVpa: fake.upiPayerVpa,
      bankReference: expect.stringMatching(/^\d{12}$/),
    });
  });

  it("declined in the app: failed with Kosh's code and Razorpay's description", async () => {
    const payment = upiPayment('intent');
    const recorded = record(payment, started(await connector.initiate(payment)));
    await upiCustomer(fake, payment.id, 'decline');
    expect(await connector.status(recorded)).toMatchObject({
      outcome: 'failed',
      rawStatus: 'failed',
      errorCode: RAZORPAY_ERRORS[fake.upiDeclineReason]?.code,
      errorReason: 'The customer declined the payment in the UPI app.',
    });
  });

  it('a VPA Razorpay refuses fails the start with its description', async () => {
    const payment = upiPayment('collect', {
      upi: { flow: 'collect', vpa: 'asha@9bank', expiresAt: new Date(CREATED.getTime() + 600_000) },
    });
    const result = await connector.initiate(payment);
    expect(result).toMatchObject({
      outcome: 'failed',
      errorCode: 'invalid_request',
      errorReason: 'Invalid VPA. Please enter a valid Virtual Payment Address',
      rawStatus: 'input_validation_failed',
    });
  });

  for (const fault of ['timeout', 'bad_gateway_html', 'garbage', 'reset'] as const) {
    it(`${fault} after the UPI attempt was made: unknown; the next start makes a fresh attempt on the same order`, async () => {
      const payment = upiPayment('intent');
      fake.faults.pay = fault;
      const lost = await connector.initiate(payment);
      expect(lost.outcome).toBe('unknown');
      const afterLoss = record(payment, lost);
      // The attempt nobody saw is not the customer's doing.
      expect(await connector.status(afterLoss)).toMatchObject({ outcome: 'not_started' });
      delete fake.faults.pay;
      const again = started(await connector.initiate(afterLoss));
      expect(fake.ordersFor(payment.id)).toHaveLength(1);
      const order = fake.ordersFor(payment.id)[0];
      expect(fake.paymentsFor(order?.id as string)).toHaveLength(2);
      await upiCustomer(fake, payment.id, 'approve');
      expect((await connector.status(record(afterLoss, again))).outcome).toBe('captured');
    });
  }

  it('an attempt whose answer was lost and that the customer paid (collect): asked, never a second payment', async () => {
    const payment = upiPayment('collect');
    fake.faults.pay = 'garbage';
    const afterLoss = record(payment, await connector.initiate(payment));
    delete fake.faults.pay;
    await upiCustomer(fake, payment.id, 'approve');
    // The order is paid: Razorpay refuses another attempt, and the connector asks instead.
    expect((await connector.initiate(afterLoss)).outcome).toBe('unknown');
    expect(await connector.status(afterLoss)).toMatchObject({
      outcome: 'captured',
      payerVpa: 'asha.rao@okbank',
    });
  });

  it('a declined attempt leaves the payment open while the collect request whose answer was lost can still be approved', async () => {
    const payment = upiPayment('collect');
    fake.faults.pay = 'garbage';
    const afterLoss = record(payment, await connector.initiate(payment));
    delete fake.faults.pay;
    const recorded = record(afterLoss, started(await connector.initiate(afterLoss)));
    const order = fake.ordersFor(payment.id)[0];
    const [lost, shown] = fake.paymentsFor(order?.id as string);
    expect(shown?.id).toBe(recorded.provider.data.razorpay_payment_id);
    fake.decide(shown!, 'upi_decline');
    // The first request is still on the customer's phone: its approval would take the money.
    expect(await connector.status(recorded)).toMatchObject({ outcome: 'pending' });
    fake.decide(lost!, 'success');
    expect(await connector.status(recorded)).toMatchObject({ outcome: 'captured' });
  });

  it('a status Razorpay does not answer readably is unknown', async () => {
    const payment = upiPayment('intent');
    const recorded = record(payment, started(await connector.initiate(payment)));
    await upiCustomer(fake, payment.id, 'approve');
    fake.faults.status = 'bad_gateway_html';
    expect((await connector.status(recorded)).outcome).toBe('unknown');
  });

  it("a signed payment.captured webhook of a UPI payment reads as captured, with the payer's VPA", async () => {
    const payment = upiPayment('intent');
    started(await connector.initiate(payment));
    await upiCustomer(fake, payment.id, 'approve');
    const attempt = fake.paymentsFor(fake.ordersFor(payment.id)[0]?.id as string)[0];
    if (!attempt || !connector.parseWebhook) throw new Error('no attempt or no webhooks');
    const body = fake.webhookBody(attempt);
    const parsed = await connector.parseWebhook({
      headers: { 'x-razorpay-signature': fake.webhookSignature(body), 'x-razorpay-event-id': 'evt_1' },
      rawBody: Buffer.from(body),
    });
    expect(parsed).toMatchObject({
      verified: true,
      paymentId: payment.id,
      status: { outcome: 'captured', payerVpa: fake.upiPayerVpa, bankReference: attempt.bankTransactionId },
    });
  });
});
