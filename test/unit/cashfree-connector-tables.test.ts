import { describe, expect, it } from 'vitest';
import { cashfreeIdempotencyKey } from '../../src/connectors/cashfree/cashfree.client.js';
import { createCashfreeConnector } from '../../src/connectors/cashfree/cashfree.connector.js';
import {
  cashfreeAmount,
  cashfreeOrderRequest,
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
import { SANDBOX_BANKS, SANDBOX_WALLETS } from '../../src/connectors/sandbox/catalogue.js';
import { connectorPayment } from '../helpers/connector-objects.js';
import {
  CASHFREE_DOCUMENTED_APP_PROVIDERS,
  CASHFREE_DOCUMENTED_BANK_CODES,
  CASHFREE_FAKE_API_VERSION,
} from '../helpers/providers/cashfree-fake.js';

/** The Cashfree connector's tables (banks, wallets, statuses, errors), amounts, phones and idempotency keys. */

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

  it('ends the order with the late window from the payment’s creation, never under 15 minutes', () => {
    const payment = connectorPayment({ createdAt: new Date('2026-11-29T10:00:00.250Z') });
    expect(cashfreeOrderRequest(payment, 86_400).order_expiry_time).toBe('2026-11-30T10:00:00+00:00');
    expect(cashfreeOrderRequest(payment, 60).order_expiry_time).toBe('2026-11-29T10:15:00+00:00');
    // The same request when it is sent again later (after a lost answer): the idempotency key holds.
    expect(cashfreeOrderRequest(payment).order_expiry_time).toBe('2026-12-02T10:00:00+00:00');
  });
});
