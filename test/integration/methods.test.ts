import { beforeAll, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';

describeEachDatabase('GET /v1/payments/methods/', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant();
  });

  it('answers the methods object of seed §2.3 with the sandbox catalogue in test mode', async () => {
    const response = await harness().request('GET', '/v1/payments/methods/', { auth: merchant });
    expect(response.statusCode).toBe(200);
    const methods = response.json();
    expect(Object.keys(methods).sort()).toEqual(
      ['entity', 'card_networks', 'card_type', 'card_subtype', 'upi', 'netbanking', 'wallet'].sort(),
    );
    expect(methods.entity).toBe('methods');
    expect(methods.card_networks).toEqual({
      diners: false,
      amex: false,
      mastercard: false,
      rupay: false,
      visa: false,
    });
    expect(methods.card_type).toEqual({ debit: false, credit: false, prepaid: false });
    expect(methods.card_subtype).toEqual({ business: false, consumer: false, premium: false });
    // Sandbox accounts take UPI intent and QR, not collect (NPCI retired it for most merchants).
    expect(methods.upi).toEqual({
      intent: true,
      collect: false,
      payer_account_type: { bank_account: true, credit_card: false },
    });

    const banks = Object.keys(methods.netbanking);
    expect(banks.length).toBeGreaterThanOrEqual(15);
    expect(banks).toEqual(expect.arrayContaining(['ICIC', 'HDFC', 'SBIN', 'UTIB', 'KKBK']));
    expect(banks.some((code) => code.endsWith('_R'))).toBe(true);
    expect(banks.some((code) => code.endsWith('_C'))).toBe(true);
    const wallets = Object.keys(methods.wallet);
    expect(wallets.length).toBeGreaterThanOrEqual(6);
    expect(wallets).toEqual(expect.arrayContaining(['airtelmoney', 'payzapp']));
    for (const code of wallets) expect(code).toBe(code.toLowerCase());
    for (const label of [...Object.values(methods.netbanking), ...Object.values(methods.wallet)]) {
      expect(label).toEqual(expect.any(String));
    }
  });

  it('is scoped to the account and follows its configuration in the database', async () => {
    const changed = await harness().merchant('Changed');
    const { methods } = harness().container.services;
    const current = await methods.get(changed.id, 'test');
    await methods.set(harness().container.db, changed.id, 'test', {
      ...current,
      netbanking: { HDFC: 'HDFC Bank' },
      wallet: {},
    });
    const mine = (await harness().request('GET', '/v1/payments/methods/', { auth: changed })).json();
    expect(mine.netbanking).toEqual({ HDFC: 'HDFC Bank' });
    expect(mine.wallet).toEqual({});
    const theirs = (await harness().request('GET', '/v1/payments/methods/', { auth: merchant })).json();
    expect(Object.keys(theirs.netbanking).length).toBeGreaterThanOrEqual(15);
  });
});
