import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cashfreeIdempotencyKey } from '../../src/connectors/cashfree/cashfree.client.js';
import { createCashfreeConnector } from '../../src/connectors/cashfree/cashfree.connector.js';
import {
  cashfreeAmount,
  cashfreePaymentMethod,
  cashfreePhone,
  cashfreeStatus,
  paiseFromCashfree,
} from '../../src/connectors/cashfree/cashfree.shapes.js';
import {
  CASHFREE_API_VERSION,
  CASHFREE_BANKS,
  CASHFREE_DEFAULT_DECLINE,
  CASHFREE_ERRORS,
  CASHFREE_PAYMENT_STATUSES,
  CASHFREE_REFUND_STATUSES,
  CASHFREE_STATUS_ERRORS,
  CASHFREE_WALLETS,
} from '../../src/connectors/cashfree/cashfree.tables.js';
import type {
  Connector,
  ConnectorPayment,
  InitiateResult,
  NextStep,
} from '../../src/connectors/connector.js';
import { SANDBOX_BANKS, SANDBOX_WALLETS } from '../../src/connectors/sandbox/catalogue.js';
import { connectorPayment, connectorRefund } from '../helpers/connector-objects.js';
import {
  CASHFREE_DOCUMENTED_APP_PROVIDERS,
  CASHFREE_DOCUMENTED_BANK_CODES,
  CASHFREE_FAKE_API_VERSION,
  type CashfreeFault,
  FakeCashfree,
  type FakeCashfreeOrder,
} from '../helpers/providers/cashfree-fake.js';

function started(result: InitiateResult) {
  if (result.outcome !== 'started') throw new Error(`not started: ${JSON.stringify(result)}`);
  return result;
}

describe('Cashfree tables and amounts', () => {
  const connector = createCashfreeConnector({
    baseUrl: 'http://127.0.0.1:9/pg',
    credentials: { client_id: 'id', client_secret: 'secret' },
  });

  it('pins the API version', () => {
    expect(CASHFREE_API_VERSION).toBe('2023-08-01');
    expect(CASHFREE_FAKE_API_VERSION).toBe(CASHFREE_API_VERSION);
  });

  it('offers exactly the codes in its tables', () => {
    expect(connector.name).toBe('cashfree');
    expect(connector.methods?.netbanking).toEqual(Object.keys(CASHFREE_BANKS));
    expect(connector.methods?.wallet).toEqual(Object.keys(CASHFREE_WALLETS));
  });

  it('maps every Kosh bank (Cashfree documents all of them), each to its own code', () => {
    expect(Object.keys(CASHFREE_BANKS).sort()).toEqual(SANDBOX_BANKS.map((bank) => bank.code).sort());
    const codes = Object.values(CASHFREE_BANKS);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it.each(Object.entries(CASHFREE_BANKS))('bank %s → Cashfree code %i is documented', (kosh, code) => {
    expect(SANDBOX_BANKS.some((bank) => bank.code === kosh)).toBe(true);
    expect(CASHFREE_DOCUMENTED_BANK_CODES.has(code)).toBe(true);
    expect(
      cashfreePaymentMethod({ method: 'netbanking', code: kosh, customer: connectorPayment().customer }),
    ).toEqual({
      netbanking: { channel: 'link', netbanking_bank_code: code },
    });
  });

  it('fixes the codes confirmed in Cashfree’s list', () => {
    expect(CASHFREE_BANKS).toMatchObject({
      UTIB: 3003,
      BARB_R: 3005,
      BARB_C: 3060,
      BKID: 3006,
      MAHB: 3007,
      CNRB: 3009,
      FDRL: 3020,
      HDFC: 3021,
      ICIC: 3022,
      IOBA: 3027,
      INDB: 3028,
      KKBK: 3032,
      PUNB_R: 3038,
      PUNB_C: 3065,
      AUBL: 3087,
      SBIN: 3044,
      YESB: 3058,
      IDFB: 3024,
      UBIN: 3055,
      RATN: 3039,
    });
  });

  it.each(Object.entries(CASHFREE_WALLETS))(
    'wallet %s → Cashfree provider %s is documented',
    (kosh, provider) => {
      expect(SANDBOX_WALLETS.some((wallet) => wallet.code === kosh)).toBe(true);
      expect(CASHFREE_DOCUMENTED_APP_PROVIDERS.has(provider)).toBe(true);
      expect(
        cashfreePaymentMethod({
          method: 'wallet',
          code: kosh.toUpperCase(),
          customer: connectorPayment().customer,
        }),
      ).toEqual({ app: { channel: 'link', provider, phone: '9876543210' } });
    },
  );

  it('leaves out the wallet Cashfree does not document (PayZapp), and only it', () => {
    const offered = new Set(Object.keys(CASHFREE_WALLETS));
    expect(
      SANDBOX_WALLETS.filter((wallet) => !offered.has(wallet.code)).map((wallet) => wallet.code),
    ).toEqual(['payzapp']);
    expect(
      cashfreePaymentMethod({ method: 'wallet', code: 'payzapp', customer: connectorPayment().customer }),
    ).toBe(undefined);
    expect(
      cashfreePaymentMethod({ method: 'netbanking', code: 'NOPE', customer: connectorPayment().customer }),
    ).toBe(undefined);
  });

  const PAYMENT_STATUSES: [string, string][] = [
    ['SUCCESS', 'captured'],
    ['FAILED', 'failed'],
    ['USER_DROPPED', 'failed'],
    ['CANCELLED', 'failed'],
    ['VOID', 'failed'],
    ['PENDING', 'pending'],
    ['NOT_ATTEMPTED', 'not_started'],
  ];

  it('has a row for every documented payment status and no other', () => {
    expect(Object.keys(CASHFREE_PAYMENT_STATUSES).sort()).toEqual(
      PAYMENT_STATUSES.map(([raw]) => raw).sort(),
    );
  });

  it.each(PAYMENT_STATUSES)('payment_status %s → %s', (raw, outcome) => {
    expect(CASHFREE_PAYMENT_STATUSES[raw]).toBe(outcome);
    const status = cashfreeStatus({ payment_status: raw, payment_amount: 50.5, payment_currency: 'INR' });
    expect(status.outcome).toBe(outcome);
    expect(status.rawStatus).toBe(raw);
    expect(status.amount).toBe(5050);
    expect(status.currency).toBe('INR');
    if (outcome === 'failed') expect(status.errorCode).toMatch(/^payment_/);
    else expect(status.errorCode).toBeUndefined();
  });

  it.each(['FLAGGED', 'success', '', 'constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'an unknown payment_status %j is unknown, never failed',
    (raw) => {
      const status = cashfreeStatus({ payment_status: raw, payment_amount: 1 });
      expect(status.outcome).toBe('unknown');
      expect(status.errorCode).toBeUndefined();
    },
  );

  it('a missing status or an unreadable amount is unknown', () => {
    expect(cashfreeStatus({}).outcome).toBe('unknown');
    expect(cashfreeStatus(null).outcome).toBe('unknown');
    expect(cashfreeStatus({ payment_status: 'SUCCESS', payment_amount: 50.505 }).outcome).toBe('unknown');
    expect(cashfreeStatus({ payment_status: 'SUCCESS', payment_amount: -1 }).outcome).toBe('unknown');
    expect(cashfreeStatus({ payment_status: 'SUCCESS', payment_amount: 'fifty' }).outcome).toBe('unknown');
  });

  it('names a failure by its error code, its reason, its status, or else as a plain decline', () => {
    const declined = cashfreeStatus({
      payment_status: 'FAILED',
      error_details: { error_code: 'TRANSACTION_DECLINED', error_reason: 'bank_rejected' },
    });
    expect([declined.errorCode, declined.errorReason]).toEqual([
      CASHFREE_ERRORS.TRANSACTION_DECLINED?.code,
      CASHFREE_ERRORS.TRANSACTION_DECLINED?.reason,
    ]);
    const byReason = cashfreeStatus({
      payment_status: 'FAILED',
      error_details: { error_reason: 'bank_rejected' },
    });
    expect(byReason.errorCode).toBe('payment_declined');
    const dropped = cashfreeStatus({ payment_status: 'USER_DROPPED', error_details: null });
    expect(dropped.errorCode).toBe(CASHFREE_STATUS_ERRORS.USER_DROPPED?.code);
    const unmapped = cashfreeStatus({
      payment_status: 'FAILED',
      error_details: { error_code: 'SOMETHING_NEW' },
    });
    expect([unmapped.errorCode, unmapped.errorReason]).toEqual([
      CASHFREE_DEFAULT_DECLINE.code,
      CASHFREE_DEFAULT_DECLINE.reason,
    ]);
    expect(CASHFREE_DEFAULT_DECLINE.code).toBe('payment_declined');
    for (const entry of [...Object.values(CASHFREE_ERRORS), ...Object.values(CASHFREE_STATUS_ERRORS)]) {
      expect(entry.code).toMatch(/^[a-z_]+$/);
      expect(entry.reason.length).toBeGreaterThan(10);
    }
  });

  const REFUND_STATUSES: [string, string][] = [
    ['SUCCESS', 'processed'],
    ['PENDING', 'pending'],
    ['ONHOLD', 'pending'],
    ['CANCELLED', 'failed'],
    ['FAILED', 'failed'],
  ];

  it.each(REFUND_STATUSES)('refund_status %s → %s', (raw, outcome) => {
    expect(CASHFREE_REFUND_STATUSES[raw]).toBe(outcome);
  });

  it('has a row for every documented refund status and no other', () => {
    expect(Object.keys(CASHFREE_REFUND_STATUSES).sort()).toEqual(REFUND_STATUSES.map(([raw]) => raw).sort());
  });

  it.each([
    [1, 0.01, '0.01'],
    [10, 0.1, '0.1'],
    [100, 1, '1'],
    [999, 9.99, '9.99'],
    [5000, 50, '50'],
    [5050, 50.5, '50.5'],
    [100000099, 1000000.99, '1000000.99'],
    [10_000_000_000, 100_000_000, '100000000'],
  ])('%i paise are %d rupees, sent as %s', (paise, rupees, json) => {
    expect(cashfreeAmount(paise)).toBe(rupees);
    expect(JSON.stringify({ order_amount: cashfreeAmount(paise) })).toBe(`{"order_amount":${json}}`);
    expect(paiseFromCashfree(cashfreeAmount(paise))).toBe(paise);
  });

  it('formats every amount up to 2,000 rupees without float drift, and reads it back', () => {
    const wrong: number[] = [];
    for (let paise = 0; paise <= 200_000; paise++) {
      const rupees = cashfreeAmount(paise);
      // Independently of the connector's own reading: the decimal toFixed gives is the number sent.
      const exact = rupees === Number((paise / 100).toFixed(2));
      if (!/^\d+(\.\d{1,2})?$/.test(String(rupees)) || paiseFromCashfree(rupees) !== paise || !exact) {
        wrong.push(paise);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('refuses to read or write what is not an amount', () => {
    for (const value of [50.505, -1, Number.NaN, Number.POSITIVE_INFINITY, 1e21, null, undefined, {}, '5O']) {
      expect(paiseFromCashfree(value)).toBeUndefined();
    }
    expect(paiseFromCashfree('50.50')).toBe(5050);
    expect(() => cashfreeAmount(50.5)).toThrow(RangeError);
    expect(() => cashfreeAmount(-1)).toThrow(RangeError);
  });

  it('sends Indian phone numbers as their 10 digits, others as they are', () => {
    expect(cashfreePhone('+919876543210')).toBe('9876543210');
    expect(cashfreePhone('919876543210')).toBe('9876543210');
    expect(cashfreePhone('+14155550100')).toBe('+14155550100');
  });

  it('derives one UUID idempotency key per Kosh id', () => {
    const key = cashfreeIdempotencyKey('pay_1');
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(cashfreeIdempotencyKey('pay_1')).toBe(key);
    expect(cashfreeIdempotencyKey('pay_2')).not.toBe(key);
  });
});

describe('Cashfree connector against FakeCashfree', () => {
  let fake: FakeCashfree;
  let connector: Connector;

  beforeAll(async () => {
    fake = await FakeCashfree.start();
    fake.timeoutMs = 2_500;
    connector = createCashfreeConnector({
      baseUrl: fake.url,
      credentials: { client_id: fake.clientId, client_secret: fake.clientSecret },
      timeoutMs: 1_000,
    });
  });

  afterAll(async () => {
    await fake.close();
  });

  beforeEach(() => {
    fake.faults = {};
    fake.refundOutcome = 'PENDING';
    fake.replayIdempotencyKeys = true;
    fake.webhookTiming = 'none';
    fake.webhookUrl = undefined;
    fake.disabledBanks.clear();
  });

  const orderOf = (payment: ConnectorPayment): FakeCashfreeOrder => {
    const orders = fake.ordersFor(payment.id);
    expect(orders).toHaveLength(1);
    return orders[0] as FakeCashfreeOrder;
  };

  /** The browser at the bank's page, arriving the way Cashfree said (a POST form or a GET link). */
  async function visitBank(next: NextStep): Promise<string> {
    const response =
      next.kind === 'form'
        ? await fetch(next.url, { method: 'POST', body: new URLSearchParams(next.fields) })
        : next.kind === 'redirect'
          ? await fetch(next.url)
          : undefined;
    if (!response) throw new Error(`no page for ${next.kind}`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('value="success"');
    return html;
  }

  /** The customer's choice on the bank's page (the fake's `/bank/<id>/decide`). */
  async function decide(cfPaymentId: unknown, choice: 'success' | 'failure' | 'pending' | 'drop') {
    return fetch(`${fake.origin}/bank/${String(cfPaymentId)}/decide`, {
      method: 'POST',
      body: new URLSearchParams({ choice }),
      redirect: 'manual',
    });
  }

  async function pay(
    overrides: Partial<ConnectorPayment> = {},
    choice: 'success' | 'failure' | 'pending' | 'drop' = 'success',
  ): Promise<ConnectorPayment> {
    const payment = connectorPayment(overrides);
    const result = started(await connector.initiate(payment));
    await visitBank(result.next);
    const back = await decide(result.data?.cf_payment_id, choice);
    expect(back.status).toBe(302);
    return payment;
  }

  describe('initiate', () => {
    it('starts net banking: the order, then its payment, answered with a POST form', async () => {
      const payment = connectorPayment({ code: 'HDFC', amount: 5050 });
      const result = started(await connector.initiate(payment));
      const order = orderOf(payment);
      expect(result.action).toBe('html_form');
      expect(result.next.kind).toBe('form');
      if (result.next.kind !== 'form') return;
      expect(result.next.url).toBe(`${fake.origin}/bank/${order.payments[0]?.cfPaymentId}`);
      expect(result.next.fields).toEqual({ cf_payment_id: order.payments[0]?.cfPaymentId, bank: '3021' });
      expect(result.reference).toBe(order.cfOrderId);
      expect(result.rawStatus).toBe('ACTIVE');
      expect(result.reconcile).toBe(true);
      expect(result.data).toEqual({
        cf_order_id: order.cfOrderId,
        payment_session_id: order.sessionId,
        cf_payment_id: order.payments[0]?.cfPaymentId,
      });
      expect(order.amount).toBe(5050);
      expect(order.returnUrl).toBe(payment.callbackUrl);
      expect(order.customer).toEqual({
        customer_id: payment.id.replace('_', ''),
        customer_phone: '9876543210',
        customer_email: 'asha@example.com',
        customer_name: 'Asha Rao',
      });
      expect(order.payments[0]?.method).toEqual({
        netbanking: { channel: 'link', netbanking_bank_code: 3021 },
      });
      await visitBank(result.next);
    });

    it('starts a wallet payment, answered with a GET link', async () => {
      const payment = connectorPayment({ method: 'wallet', code: 'amazonpay' });
      const result = started(await connector.initiate(payment));
      expect(result.action).toBe('redirect');
      expect(result.next).toEqual({
        kind: 'redirect',
        url: `${fake.origin}/bank/${orderOf(payment).payments[0]?.cfPaymentId}?provider=amazon`,
      });
      expect(orderOf(payment).payments[0]?.method).toEqual({
        app: { channel: 'link', provider: 'amazon', phone: '9876543210' },
      });
      await visitBank(result.next);
    });

    it.each([
      ...Object.keys(CASHFREE_BANKS).map((code) => ['netbanking', code] as const),
      ...Object.keys(CASHFREE_WALLETS).map((code) => ['wallet', code] as const),
    ])('%s %s is accepted by Cashfree (the fake checks the code)', async (method, code) => {
      const result = await connector.initiate(connectorPayment({ method, code }));
      expect(result.outcome).toBe('started');
    });

    it('does not call Cashfree for a code it does not take', async () => {
      const before = fake.calls.length;
      const result = await connector.initiate(connectorPayment({ method: 'wallet', code: 'payzapp' }));
      expect(result).toMatchObject({ outcome: 'failed', errorCode: 'bank_unavailable', reference: null });
      expect(fake.calls.length).toBe(before);
    });

    it.each([1, 5000, 5050, 100000099])('sends %i paise as exact rupees', async (amount) => {
      const payment = connectorPayment({ amount });
      const result = await connector.initiate(payment);
      if (amount < 100) {
        // Cashfree takes orders of one rupee or more: a documented refusal, so the payment failed.
        expect(result).toMatchObject({ outcome: 'failed', errorCode: 'amount_not_accepted' });
        expect(fake.ordersFor(payment.id)).toHaveLength(0);
      } else {
        expect(result.outcome).toBe('started');
        expect(orderOf(payment).amount).toBe(amount);
      }
    });

    it('a bank the account has not enabled is a documented refusal: failed, with the reason', async () => {
      fake.disabledBanks.add(3044);
      const payment = connectorPayment({ code: 'SBIN' });
      const result = await connector.initiate(payment);
      expect(result).toMatchObject({
        outcome: 'failed',
        errorCode: CASHFREE_ERRORS.payment_method_unsupported?.code,
        reference: orderOf(payment).cfOrderId,
        rawStatus: 'payment_method_unsupported',
      });
    });

    it('a retried start finds the first order (idempotency key): one order at Cashfree', async () => {
      const payment = connectorPayment();
      started(await connector.initiate(payment));
      started(await connector.initiate(payment));
      expect(fake.ordersFor(payment.id)).toHaveLength(1);
    });

    it('an "order already exists" answer fetches the order and carries on', async () => {
      fake.replayIdempotencyKeys = false;
      const payment = connectorPayment();
      const first = started(await connector.initiate(payment));
      const calls = fake.calls.length;
      const again = started(await connector.initiate(payment));
      expect(fake.calls.slice(calls)).toEqual([
        'POST /pg/orders',
        'GET /pg/orders/:id',
        'POST /pg/orders/sessions',
      ]);
      expect(again.reference).toBe(first.reference);
      expect(fake.ordersFor(payment.id)).toHaveLength(1);
    });

    it('an existing order for another amount is unknown, not this payment’s order', async () => {
      fake.replayIdempotencyKeys = false;
      const payment = connectorPayment({ amount: 5050 });
      started(await connector.initiate(payment));
      const result = await connector.initiate({ ...payment, amount: 6000 });
      expect(result.outcome).toBe('unknown');
    });

    it('an existing order that is paid is unknown (Kosh asks status), and status says captured', async () => {
      fake.replayIdempotencyKeys = false;
      const payment = await pay();
      expect((await connector.initiate(payment)).outcome).toBe('unknown');
      expect((await connector.status(payment)).outcome).toBe('captured');
    });
  });

  describe('status and the return', () => {
    it('is not_started until the customer decides at the bank, then captured', async () => {
      const payment = connectorPayment();
      expect(await connector.status(payment)).toEqual({ outcome: 'not_started', rawStatus: null });
      const result = started(await connector.initiate(payment));
      expect((await connector.status(payment)).outcome).toBe('not_started');
      await visitBank(result.next);
      const notYet = await connector.status(payment);
      expect(notYet).toMatchObject({ outcome: 'not_started', rawStatus: 'NOT_ATTEMPTED' });
      const back = await decide(result.data?.cf_payment_id, 'success');
      // Back to Kosh's callback, unsigned: the order id only.
      expect(back.status).toBe(302);
      const location = new URL(back.headers.get('location') ?? '');
      expect(`${location.origin}${location.pathname}`).toBe(payment.callbackUrl);
      expect(location.searchParams.get('order_id')).toBe(payment.id);
      const returned = await connector.handleReturn?.(payment, {
        method: 'GET',
        query: Object.fromEntries(location.searchParams),
        body: {},
      });
      expect(returned).toEqual({ verified: false });
      const status = await connector.status(payment);
      const attempt = orderOf(payment).payments[0];
      expect(status).toEqual({
        outcome: 'captured',
        rawStatus: 'SUCCESS',
        amount: 5050,
        currency: 'INR',
        bankReference: attempt?.bankReference,
        data: { cf_payment_id: attempt?.cfPaymentId },
      });
      expect(fake.calls).toContain('GET /pg/orders/:id/payments');
    });

    it('a decline at the bank is failed, with the mapped reason', async () => {
      const payment = await pay({}, 'failure');
      expect(await connector.status(payment)).toMatchObject({
        outcome: 'failed',
        rawStatus: 'FAILED',
        errorCode: 'payment_declined',
        errorReason: CASHFREE_ERRORS.TRANSACTION_DECLINED?.reason,
        amount: 5050,
      });
    });

    it('a customer who leaves the bank is failed as cancelled; an undecided bank is pending', async () => {
      expect(await connector.status(await pay({}, 'drop'))).toMatchObject({
        outcome: 'failed',
        rawStatus: 'USER_DROPPED',
        errorCode: 'payment_cancelled',
      });
      expect(await connector.status(await pay({}, 'pending'))).toMatchObject({
        outcome: 'pending',
        rawStatus: 'PENDING',
      });
    });

    it('a bad URL answer (404 request_failed) is unknown, not "no such order"', async () => {
      const misplaced = createCashfreeConnector({
        baseUrl: `${fake.url}/v9`,
        credentials: { client_id: fake.clientId, client_secret: fake.clientSecret },
        timeoutMs: 1_000,
      });
      const payment = await pay();
      expect((await misplaced.status(payment)).outcome).toBe('unknown');
      expect((await connector.status(connectorPayment())).outcome).toBe('not_started');
    });

    it('speaks for the order by its successful attempt, else its latest', async () => {
      const payment = await pay({}, 'failure');
      // The customer tries again on the same order (the start is retried): a second attempt.
      const again = started(await connector.initiate(payment));
      expect(orderOf(payment).payments).toHaveLength(2);
      expect((await connector.status(payment)).outcome).toBe('not_started');
      await decide(again.data?.cf_payment_id, 'success');
      expect((await connector.status(payment)).outcome).toBe('captured');
    });
  });

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

    it('reads a PAYMENT_FAILED_WEBHOOK’s error details', async () => {
      const payment = await pay({}, 'failure');
      const { headers, body } = fake.buildWebhook(orderOf(payment));
      const result = await connector.parseWebhook?.({ headers, rawBody: Buffer.from(body) });
      expect(result).toMatchObject({
        verified: true,
        paymentId: payment.id,
        status: { outcome: 'failed', errorCode: 'payment_declined', rawStatus: 'FAILED' },
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

  describe('refunds', () => {
    it('refunds in full: pending, then processed when the bank settles it', async () => {
      const payment = await pay();
      const refund = connectorRefund(payment);
      const result = await connector.refund(refund);
      const [made] = fake.refundsFor(refund.id);
      expect(result).toEqual({
        outcome: 'pending',
        rawStatus: 'PENDING',
        reference: made?.cfRefundId,
        data: { cf_refund_id: made?.cfRefundId },
      });
      expect(made).toMatchObject({ amount: 5050, speed: 'STANDARD', orderId: payment.id });
      expect((await connector.refundStatus(refund)).outcome).toBe('pending');
      fake.settleRefunds('SUCCESS');
      expect(await connector.refundStatus(refund)).toEqual({
        outcome: 'processed',
        rawStatus: 'SUCCESS',
        reference: made?.cfRefundId,
        data: { cf_refund_id: made?.cfRefundId, refund_arn: `ARN${made?.cfRefundId}` },
      });
      expect(fake.calls).toContain('GET /pg/orders/:id/refunds/:rid');
    });

    it('refunds in part, twice, and refuses more than is left (a documented refusal: failed)', async () => {
      const payment = await pay({ amount: 5050 });
      fake.refundOutcome = 'SUCCESS';
      const first = connectorRefund(payment, { amount: 2000 });
      const second = connectorRefund(payment, { amount: 3050, speed: 'instant' });
      expect((await connector.refund(first)).outcome).toBe('processed');
      expect((await connector.refund(second)).outcome).toBe('processed');
      expect(fake.refundsFor(first.id)[0]?.amount).toBe(2000);
      expect(fake.refundsFor(second.id)[0]).toMatchObject({ amount: 3050, speed: 'INSTANT' });
      const third = connectorRefund(payment, { amount: 1 });
      expect(await connector.refund(third)).toMatchObject({
        outcome: 'failed',
        errorCode: 'refund_declined',
        rawStatus: 'refund_amount_invalid',
      });
      expect(fake.refundsFor(third.id)).toHaveLength(0);
    });

    it('a resend with the same refund id makes one refund (idempotency key)', async () => {
      const payment = await pay();
      const refund = connectorRefund(payment);
      const first = await connector.refund(refund);
      const again = await connector.refund(refund);
      expect(again.reference).toBe(first.reference);
      expect(fake.refundsFor(refund.id)).toHaveLength(1);
    });

    it('a resend Cashfree answers with "refund exists" fetches that refund: still one refund', async () => {
      fake.replayIdempotencyKeys = false;
      const payment = await pay();
      const refund = connectorRefund(payment);
      const first = await connector.refund(refund);
      const calls = fake.calls.length;
      fake.settleRefunds('SUCCESS');
      const again = await connector.refund(refund);
      expect(fake.calls.slice(calls)).toEqual([
        'POST /pg/orders/:id/refunds',
        'GET /pg/orders/:id/refunds/:rid',
      ]);
      expect(again).toMatchObject({ outcome: 'processed', reference: first.reference });
      expect(fake.refundsFor(refund.id)).toHaveLength(1);
    });

    it('a refund the bank cancels is failed, with its description', async () => {
      const payment = await pay();
      fake.refundOutcome = 'CANCELLED';
      expect(await connector.refund(connectorRefund(payment))).toMatchObject({
        outcome: 'failed',
        rawStatus: 'CANCELLED',
        errorCode: 'refund_declined',
        errorReason: 'Refund cancelled by the bank.',
      });
    });

    it('a refund of an unpaid payment is refused; an unknown refund is unknown', async () => {
      const payment = await pay({}, 'failure');
      expect(await connector.refund(connectorRefund(payment))).toMatchObject({
        outcome: 'failed',
        rawStatus: 'order_not_paid',
      });
      expect((await connector.refundStatus(connectorRefund(payment))).outcome).toBe('unknown');
    });
  });

  describe('an answer that cannot be read is unknown, never failed', () => {
    const FAULTS: CashfreeFault[] = ['timeout', 'bad_gateway_html', 'garbage', 'reset'];

    it.each(FAULTS)('create order: %s', async (fault) => {
      const payment = connectorPayment();
      fake.faults.create = fault;
      const result = await connector.initiate(payment);
      expect(result.outcome).toBe('unknown');
      // The fake acted before the answer was lost: the order is there, and only one.
      expect(fake.ordersFor(payment.id)).toHaveLength(1);
      fake.faults = {};
      started(await connector.initiate(payment));
      expect(fake.ordersFor(payment.id)).toHaveLength(1);
    });

    it.each(FAULTS)('start the payment: %s', async (fault) => {
      const payment = connectorPayment();
      fake.faults.pay = fault;
      expect((await connector.initiate(payment)).outcome).toBe('unknown');
      expect(orderOf(payment).payments).toHaveLength(1);
      fake.faults = {};
      expect((await connector.status(payment)).outcome).toBe('not_started');
    });

    it.each(FAULTS)('status: %s', async (fault) => {
      const payment = await pay({}, 'failure');
      fake.faults.status = fault;
      const status = await connector.status(payment);
      expect(status.outcome).toBe('unknown');
      expect(status.errorCode).toBeUndefined();
      fake.faults = {};
      expect((await connector.status(payment)).outcome).toBe('failed');
    });

    it.each(FAULTS)('refund: %s', async (fault) => {
      const payment = await pay();
      const refund = connectorRefund(payment);
      fake.faults.refund = fault;
      expect((await connector.refund(refund)).outcome).toBe('unknown');
      expect(fake.refundsFor(refund.id)).toHaveLength(1);
      fake.faults = {};
      expect((await connector.refund(refund)).outcome).toBe('pending');
      expect(fake.refundsFor(refund.id)).toHaveLength(1);
    });

    it.each(FAULTS)('refund status: %s', async (fault) => {
      const payment = await pay();
      const refund = connectorRefund(payment);
      await connector.refund(refund);
      fake.faults.refundStatus = fault;
      expect((await connector.refundStatus(refund)).outcome).toBe('unknown');
      fake.faults = {};
      expect((await connector.refundStatus(refund)).outcome).toBe('pending');
    });
  });

  describe('wrong credentials', () => {
    it.each([
      ['client secret', (id: string) => ({ client_id: id, client_secret: 'cfsk_wrong' })],
      ['client id', () => ({ client_id: 'cf_app_wrong', client_secret: fake.clientSecret })],
    ])('a wrong %s is never a success', async (_, credentials) => {
      const wrong = createCashfreeConnector({
        baseUrl: fake.url,
        credentials: credentials(fake.clientId),
        timeoutMs: 1_000,
      });
      const payment = connectorPayment();
      const result = await wrong.initiate(payment);
      expect(result).toMatchObject({ outcome: 'failed', errorCode: 'provider_authentication_failed' });
      expect(fake.ordersFor(payment.id)).toHaveLength(0);

      const paid = await pay();
      expect((await wrong.status(paid)).outcome).toBe('unknown');
      const refund = connectorRefund(paid);
      expect(await wrong.refund(refund)).toMatchObject({
        outcome: 'failed',
        errorCode: 'provider_authentication_failed',
      });
      expect(fake.refundsFor(refund.id)).toHaveLength(0);
      expect((await wrong.refundStatus(refund)).outcome).toBe('unknown');
    });

    it('a webhook signed with another secret is not verified', async () => {
      const payment = await pay();
      const { headers, body } = fake.buildWebhook(orderOf(payment));
      const other = createCashfreeConnector({
        baseUrl: fake.url,
        credentials: { client_id: fake.clientId, client_secret: 'cfsk_other' },
      });
      expect(await other.parseWebhook?.({ headers, rawBody: Buffer.from(body) })).toMatchObject({
        verified: false,
      });
    });
  });
});
