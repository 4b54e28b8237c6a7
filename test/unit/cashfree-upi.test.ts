import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCashfreeConnector } from '../../src/connectors/cashfree/cashfree.connector.js';
import { CASHFREE_UPI, CASHFREE_UPI_ERRORS } from '../../src/connectors/cashfree/cashfree.tables.js';
import { cashfreeUpiMethod, upiStepOf } from '../../src/connectors/cashfree/cashfree.upi.js';
import type { Connector, ConnectorPayment, InitiateResult } from '../../src/connectors/connector.js';
import { connectorPayment } from '../helpers/connector-objects.js';
import { FakeCashfree } from '../helpers/providers/cashfree-fake.js';
import { CASHFREE_FAKE_PAYER_VPA, fakeUpiLink } from '../helpers/providers/cashfree-fake-upi.js';
import { decodeQr } from '../helpers/qr.js';

const minutes = (n: number) => new Date(Date.now() + n * 60_000);
const upiPayment = (flow: 'intent' | 'qr' | 'collect', overrides: Partial<ConnectorPayment> = {}) =>
  connectorPayment({
    method: 'upi',
    code: '',
    upi: { flow, vpa: flow === 'collect' ? CASHFREE_FAKE_PAYER_VPA : null, expiresAt: minutes(10) },
    ...overrides,
  });

function started(result: InitiateResult) {
  if (result.outcome !== 'started') throw new Error(`not started: ${JSON.stringify(result)}`);
  return result;
}

describe('Cashfree UPI requests and answers', () => {
  it('takes intent (and so QR) and collect', () => {
    expect(CASHFREE_UPI).toEqual({ intent: true, collect: true });
  });

  it('sends intent and QR as the link channel, collect with the VPA and 5 to 15 minutes', () => {
    const now = new Date();
    const upi = (flow: 'intent' | 'qr' | 'collect', left: number, vpa: string | null = 'a.b@okbank') =>
      cashfreeUpiMethod({ flow, vpa, expiresAt: new Date(now.getTime() + left * 60_000) }, now);
    expect(upi('intent', 10, null)).toEqual({ upi: { channel: 'link' } });
    expect(upi('qr', 30, null)).toEqual({ upi: { channel: 'link' } });
    expect(upi('collect', 10)).toEqual({
      upi: { channel: 'collect', upi_id: 'a.b@okbank', upi_expiry_minutes: 10 },
    });
    expect(upi('collect', 60)).toMatchObject({ upi: { upi_expiry_minutes: 15 } });
    expect(upi('collect', 1)).toMatchObject({ upi: { upi_expiry_minutes: 5 } });
    expect(upi('collect', 10, null)).toBeUndefined();
  });

  it('reads only a upi://pay link with a payee, for this amount, on the channel it asked for', () => {
    const payment = { amount: 5050, upi: { flow: 'intent' as const, vpa: null, expiresAt: minutes(5) } };
    const answer = (link: unknown, extra: Record<string, unknown> = {}) => ({
      payment_method: 'upi',
      channel: 'link',
      action: 'custom',
      data: { url: null, payload: { default: link } },
      ...extra,
    });
    const good = fakeUpiLink('42', 5050);
    expect(upiStepOf(answer(good), payment)).toEqual({ next: { kind: 'upi', link: good }, action: 'upi' });
    for (const bad of [
      answer('https://payments-test.cashfree.com/simulator/42'),
      answer('upi://mandate?pa=a@b'),
      answer('upi://pay?pn=Nobody&am=50.50'),
      answer(fakeUpiLink('42', 5051)),
      answer(undefined),
      answer(good, { channel: 'qrcode' }),
      answer(good, { payment_method: 'netbanking' }),
    ]) {
      expect(typeof upiStepOf(bad, payment), JSON.stringify(bad)).toBe('string');
    }
    const collect = { ...payment, upi: { ...payment.upi, flow: 'collect' as const } };
    expect(upiStepOf({ channel: 'collect', action: 'custom', data: { payload: null } }, collect)).toEqual({
      next: { kind: 'upi', link: null },
      action: 'upi',
    });
  });
});

describe('Cashfree UPI against FakeCashfree', () => {
  let fake: FakeCashfree;
  let connector: Connector;

  beforeAll(async () => {
    fake = await FakeCashfree.start();
    connector = createCashfreeConnector({
      baseUrl: fake.url,
      credentials: { client_id: fake.clientId, client_secret: fake.clientSecret },
      timeoutMs: 1_000,
    });
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.webhookTiming = 'none';
    fake.webhookUrl = undefined;
  });

  /** Started, with what Kosh records of the answer, as the core would. */
  async function start(flow: 'intent' | 'qr' | 'collect') {
    const payment = upiPayment(flow);
    const result = started(await connector.initiate(payment));
    const recorded: ConnectorPayment = {
      ...payment,
      provider: { ...payment.provider, data: result.data ?? {}, reference: result.reference },
    };
    return { payment: recorded, result };
  }

  it.each(['intent', 'qr'] as const)('%s: the link channel answers the upi://pay link', async (flow) => {
    const { payment, result } = await start(flow);
    const [order] = fake.ordersFor(payment.id);
    const attempt = order?.payments[0];
    expect(attempt?.method).toEqual({ upi: { channel: 'link', upi_id: null } });
    expect(result).toMatchObject({
      action: 'upi',
      next: { kind: 'upi', link: fakeUpiLink(attempt?.cfPaymentId as string, 5050) },
      reconcile: true,
    });
    expect(await connector.status(payment)).toMatchObject({
      outcome: 'not_started',
      rawStatus: 'NOT_ATTEMPTED',
    });
  });

  it('the link is what the qrcode channel draws (the fake answers both as Cashfree documents)', async () => {
    const { payment } = await start('qr');
    const [order] = fake.ordersFor(payment.id);
    const answer = await fetch(`${fake.url}/orders/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-version': '2023-08-01' },
      body: JSON.stringify({
        payment_session_id: order?.sessionId,
        payment_method: { upi: { channel: 'qrcode' } },
      }),
    });
    const body = (await answer.json()) as { cf_payment_id: string; data: { payload: { qrcode: string } } };
    expect(body).toMatchObject({ channel: 'qrcode', action: 'custom' });
    expect(decodeQr(body.data.payload.qrcode)).toBe(fakeUpiLink(String(body.cf_payment_id), 5050));
  });

  it('collect: the request to the VPA, no link; approved, captured with the payer and the RRN', async () => {
    const { payment, result } = await start('collect');
    expect(result.next).toEqual({ kind: 'upi', link: null });
    const attempt = fake.ordersFor(payment.id)[0]?.payments[0];
    expect(attempt?.method).toEqual({ upi: { channel: 'collect', upi_id: CASHFREE_FAKE_PAYER_VPA } });
    await fake.upiCustomer(payment.id, 'approve');
    const status = await connector.status(payment);
    expect(status).toMatchObject({
      outcome: 'captured',
      amount: 5050,
      payerVpa: CASHFREE_FAKE_PAYER_VPA,
      bankReference: expect.stringMatching(/^\d{12}$/),
    });
  });

  it('a decline in the app is failed with the UPI reason; its webhook only makes Kosh ask', async () => {
    const { payment } = await start('intent');
    await fake.upiCustomer(payment.id, 'decline');
    expect(await connector.status(payment)).toMatchObject({
      outcome: 'failed',
      errorCode: CASHFREE_UPI_ERRORS.auth_declined?.code,
      errorReason: CASHFREE_UPI_ERRORS.auth_declined?.reason,
    });
    const [order] = fake.ordersFor(payment.id);
    const { headers, body } = fake.buildWebhook(order as never);
    const parsed = await connector.parseWebhook?.({ headers, rawBody: Buffer.from(body) });
    expect(parsed).toMatchObject({ verified: true, paymentId: payment.id, status: null });
  });

  it('an approved attempt’s webhook captures, naming the payer', async () => {
    const { payment } = await start('intent');
    await fake.upiCustomer(payment.id, 'approve');
    const [order] = fake.ordersFor(payment.id);
    const { headers, body } = fake.buildWebhook(order as never);
    const parsed = await connector.parseWebhook?.({ headers, rawBody: Buffer.from(body) });
    expect(parsed).toMatchObject({
      verified: true,
      status: { outcome: 'captured', payerVpa: CASHFREE_FAKE_PAYER_VPA },
    });
  });

  it('an attempt whose start Kosh never recorded is not_started unless it took the money', async () => {
    const { payment } = await start('collect');
    const unrecorded = { ...payment, provider: { ...payment.provider, data: {} } };
    await fake.upiCustomer(payment.id, 'decline');
    expect(await connector.status(unrecorded)).toEqual({ outcome: 'not_started', rawStatus: 'FAILED' });
    expect((await connector.status(payment)).outcome).toBe('failed');
    const again = upiPayment('intent');
    await connector.initiate(again);
    await fake.upiCustomer(again.id, 'approve');
    expect((await connector.status(again)).outcome).toBe('captured');
  });

  it('a declined attempt leaves the payment open while the collect request whose answer was lost can still be approved', async () => {
    const payment = upiPayment('collect');
    fake.faults.pay = 'garbage';
    expect((await connector.initiate(payment)).outcome).toBe('unknown');
    delete fake.faults.pay;
    const result = started(await connector.initiate(payment));
    const recorded = { ...payment, provider: { ...payment.provider, data: result.data ?? {} } };
    await fake.upiCustomer(payment.id, 'decline');
    const [lost, shown] = fake.ordersFor(payment.id)[0]?.payments ?? [];
    expect([lost?.status, shown?.status]).toEqual(['NOT_ATTEMPTED', 'FAILED']);
    expect(shown?.cfPaymentId).toBe(result.data?.cf_payment_id);
    // The first request is still on the customer's phone: its approval would take the money.
    expect(await connector.status(recorded)).toEqual({ outcome: 'pending', rawStatus: 'FAILED' });
    await fake.upiCustomer(payment.id, 'approve');
    expect(await connector.status(recorded)).toMatchObject({ outcome: 'captured' });
  });

  it('a collect request without a VPA is refused before Cashfree is called', async () => {
    const payment = upiPayment('collect', {
      upi: { flow: 'collect', vpa: null, expiresAt: minutes(10) },
    });
    expect(await connector.initiate(payment)).toMatchObject({
      outcome: 'failed',
      errorCode: 'bank_unavailable',
    });
    expect(fake.ordersFor(payment.id)).toHaveLength(0);
  });

  it('a VPA Cashfree refuses fails the start with its reason', async () => {
    const payment = upiPayment('collect', {
      upi: { flow: 'collect', vpa: 'x@1bank', expiresAt: minutes(10) },
    });
    expect(await connector.initiate(payment)).toMatchObject({
      outcome: 'failed',
      errorCode: CASHFREE_UPI_ERRORS.upi_id_invalid?.code,
      errorReason: CASHFREE_UPI_ERRORS.upi_id_invalid?.reason,
      rawStatus: 'upi_id_invalid',
    });
  });
});
