import { describe, expect, it } from 'vitest';
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

/** The Razorpay connector's tables and shapes: every status, error and refund row, without a provider. */

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
