import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { BANK, gstinFor, merchantBody, proprietorBody } from '../helpers/onboarding.js';

const BASE = '/v1/api-portal';

describeEachDatabase('api-portal merchants', (harness) => {
  let partner: TestAccount;
  beforeAll(async () => {
    partner = await harness().partner();
  });

  async function createMerchant(body = merchantBody(), auth: TestAccount = partner) {
    const response = await harness().request('POST', `${BASE}/merchants/`, { auth, json: body });
    expect(response.statusCode).toBe(200);
    return response.json().data;
  }

  describe('GET business-categories', () => {
    it('lists about ten categories, each with subcategories, with stable snake_case codes', async () => {
      const response = await harness().request('GET', `${BASE}/business-categories/`, { auth: partner });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.has_more).toBe(false);
      const codes = body.data.map((category: { code: string }) => category.code);
      expect(codes).toEqual([
        'ecommerce',
        'education',
        'food',
        'healthcare',
        'services',
        'it_and_software',
        'financial_services',
        'travel',
        'utilities',
        'others',
      ]);
      for (const category of body.data) {
        expect(category.subcategories.length).toBeGreaterThan(2);
        for (const sub of category.subcategories) expect(sub.code).toMatch(/^[a-z][a-z0-9_]+$/);
      }
      expect(body.data[0].subcategories).toContainEqual({ code: 'grocery', name: 'Grocery' });
    });
  });

  describe('POST merchants', () => {
    it('creates a merchant with its status, requirements and test credentials shown once', async () => {
      const response = await harness().request('POST', `${BASE}/merchants/`, {
        auth: partner,
        json: merchantBody(),
      });
      expect(response.statusCode).toBe(200);
      const merchant = response.json().data;
      expect(merchant.id).toMatch(/^mid_[0-9a-z]{26}$/);
      expect(merchant).toMatchObject({
        entity: 'merchant',
        status: 'created',
        mode: 'test',
        display_name: 'Kirana Kart',
        legal_name: 'Kirana Kart Private Limited',
        business_type: 'private_limited',
        bank_account: null,
        activated_at: null,
        requirements: {
          currently_due: [
            'bank_details',
            'kyc_document.pan',
            'kyc_document.address_proof',
            'kyc_document.incorporation_certificate',
            'kyc_document.gst_certificate',
          ],
          errors: [],
        },
      });
      expect(merchant.credentials.api_key).toMatch(/^key_test_/);
      expect(merchant.credentials.secret_key).toMatch(/^sk_test_/);

      const fetched = await harness().request('GET', `${BASE}/merchants/${merchant.id}/`, { auth: partner });
      expect(fetched.statusCode).toBe(200);
      const { credentials: _shownOnce, ...withoutCredentials } = merchant;
      expect(fetched.json().data).toEqual(withoutCredentials);
      expect(fetched.body).not.toContain(merchant.credentials.secret_key);

      // The credentials work: the merchant itself calls the merchant API.
      const auth = `Basic ${Buffer.from(`${merchant.credentials.api_key}:${merchant.credentials.secret_key}`).toString('base64')}`;
      const methods = await harness().request('GET', '/v1/payments/methods/', { auth });
      expect(methods.statusCode).toBe(200);
    });

    it('asks a proprietorship for fewer documents and no GSTIN', async () => {
      const merchant = await createMerchant(proprietorBody());
      expect(merchant.gstin).toBeNull();
      expect(merchant.requirements.currently_due).toEqual([
        'bank_details',
        'kyc_document.pan',
        'kyc_document.address_proof',
      ]);
    });

    it('accepts the same body as a form with bracket nesting', async () => {
      const body = proprietorBody();
      const form = { ...body, address: body.address };
      const response = await harness().request('POST', `${BASE}/merchants/`, { auth: partner, form });
      expect(response.statusCode).toBe(200);
      expect(response.json().data.address.postal_code).toBe('560001');
    });

    const { address } = merchantBody() as { address: Record<string, string> };
    const invalid: [string, Record<string, unknown>, string, string][] = [
      ['legal_name missing', { legal_name: undefined }, 'missing_field', 'legal_name'],
      ['legal_name too short', { legal_name: 'K' }, 'invalid_field', 'legal_name'],
      ['display_name missing', { display_name: undefined }, 'missing_field', 'display_name'],
      ['display_name too long', { display_name: 'x'.repeat(101) }, 'invalid_field', 'display_name'],
      ['email malformed', { email: 'owner-at-kiranakart.in' }, 'invalid_field', 'email'],
      ['contact with letters', { contact: '98765abcde' }, 'invalid_field', 'contact'],
      ['contact too short', { contact: '12345' }, 'invalid_field', 'contact'],
      ['business_type unknown', { business_type: 'company' }, 'invalid_field', 'business_type'],
      ['business_category unknown', { business_category: 'gaming' }, 'invalid_field', 'business_category'],
      [
        'business_category malformed',
        { business_category: 'E-Commerce' },
        'invalid_field',
        'business_category',
      ],
      [
        'business_subcategory of another category',
        { business_subcategory: 'hospitals' },
        'invalid_field',
        'business_subcategory',
      ],
      ['website not https', { website: 'http://kiranakart.in' }, 'invalid_field', 'website'],
      ['website not a URL', { website: 'kiranakart' }, 'invalid_field', 'website'],
      ['address missing', { address: undefined }, 'missing_field', 'address'],
      [
        'address.line1 missing',
        { address: { ...address, line1: undefined } },
        'missing_field',
        'address.line1',
      ],
      ['address.city empty', { address: { ...address, city: '' } }, 'invalid_field', 'address.city'],
      [
        'address.state missing',
        { address: { ...address, state: undefined } },
        'missing_field',
        'address.state',
      ],
      [
        'address.postal_code 5 digits',
        { address: { ...address, postal_code: '56000' } },
        'invalid_field',
        'address.postal_code',
      ],
      [
        'address.postal_code starting with 0',
        { address: { ...address, postal_code: '060001' } },
        'invalid_field',
        'address.postal_code',
      ],
      [
        'address.country not IN',
        { address: { ...address, country: 'US' } },
        'invalid_field',
        'address.country',
      ],
      ['address with an unknown key', { address: { ...address, zip: '1' } }, 'unknown_field', 'address.zip'],
      ['pan malformed', { pan: 'AABC1234L' }, 'invalid_field', 'pan'],
      ['pan lowercase', { pan: 'aabck1234l' }, 'invalid_field', 'pan'],
      ['pan of a person on a company', { pan: 'AABPK1234L' }, 'invalid_field', 'pan'],
      ['gstin missing for a company', { gstin: undefined }, 'missing_field', 'gstin'],
      ['gstin wrong length', { gstin: '27AABCK1234L1Z' }, 'invalid_field', 'gstin'],
      ['gstin wrong check character', { gstin: '27AABCK1234L1ZA' }, 'invalid_field', 'gstin'],
      ['gstin of another PAN', { gstin: gstinFor('AABCX9999Q') }, 'invalid_field', 'gstin'],
      ['gstin unknown state', { gstin: gstinFor('AABCK1234L', '45') }, 'invalid_field', 'gstin'],
      ['display_name of spaces only', { display_name: '   ' }, 'invalid_field', 'display_name'],
      ['legal_name with one character besides spaces', { legal_name: ' K ' }, 'invalid_field', 'legal_name'],
      ['display_name with a line break', { display_name: 'Kirana\nKart' }, 'invalid_field', 'display_name'],
      [
        'display_name with a direction override',
        { display_name: 'Kirana \u202eKart' },
        'invalid_field',
        'display_name',
      ],
      ['address.line1 of a space', { address: { ...address, line1: ' ' } }, 'invalid_field', 'address.line1'],
      ['a typo', { legal_nmae: 'x' }, 'unknown_field', 'legal_nmae'],
      ['server-owned status', { status: 'activated' }, 'server_owned_field', 'status'],
      ['server-owned id', { id: 'mid_x' }, 'server_owned_field', 'id'],
      ['server-owned mode', { mode: 'live' }, 'server_owned_field', 'mode'],
      ['requirements', { requirements: { currently_due: [] } }, 'unknown_field', 'requirements'],
    ];

    it.each(invalid)('refuses %s, and creates nothing', async (_name, change, code, field) => {
      const own = await harness().partner('Validation Partner');
      const body = { ...merchantBody(), ...change };
      for (const [key, value] of Object.entries(change)) if (value === undefined) delete body[key];
      const response = await harness().request('POST', `${BASE}/merchants/`, { auth: own, json: body });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toMatchObject({ type: 'invalid_request_error', code, field });
      const list = await harness().request('GET', `${BASE}/merchants/`, { auth: own });
      expect(list.json().data).toEqual([]);
    });
  });

  describe('a value outside a list of allowed values', () => {
    it('is told every allowed value, not only the first', async () => {
      const own = await harness().partner('Enum Partner');
      const created = await harness().request('POST', `${BASE}/merchants/`, {
        auth: own,
        json: { ...merchantBody(), business_type: 'corp' },
      });
      expect(created.json().error.message).toBe(
        "The field 'business_type' must be one of 'proprietorship', 'partnership', 'private_limited', 'public_limited', 'llp', 'trust', 'society', 'ngo', 'individual'.",
      );
      const merchant = (
        await harness().request('POST', `${BASE}/merchants/`, { auth: own, json: proprietorBody() })
      ).json().data;
      const key = await harness().request('POST', `${BASE}/merchants/${merchant.id}/keys/`, {
        auth: own,
        json: { mode: 'TEST' },
      });
      expect(key.statusCode).toBe(400);
      expect(key.json().error.message).toBe("The field 'mode' must be one of 'test', 'live'.");
    });
  });

  describe('GET merchants', () => {
    it('lists only the partner’s own merchants, newest first, in pages', async () => {
      const own = await harness().partner('Lister');
      const other = await harness().partner('Other');
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push((await createMerchant(proprietorBody({ display_name: `Shop ${i}` }), own)).id);
        harness().clock.advance(1);
      }
      await createMerchant(proprietorBody(), other);
      const first = (await harness().request('GET', `${BASE}/merchants/?limit=2`, { auth: own })).json();
      expect(first.data.map((m: { id: string }) => m.id)).toEqual([ids[2], ids[1]]);
      expect(first.has_more).toBe(true);
      const second = (
        await harness().request('GET', `${BASE}/merchants/?limit=2&cursor=${first.next_cursor}`, {
          auth: own,
        })
      ).json();
      expect(second.data.map((m: { id: string }) => m.id)).toEqual([ids[0]]);
      expect(second.has_more).toBe(false);
      expect(JSON.stringify([first, second])).not.toContain('secret_key');
    });

    it('keeps test-mode and live-mode merchants apart', async () => {
      const own = await harness().partner('Two modes');
      const live = await harness().liveKey(own);
      const testMerchant = await createMerchant(proprietorBody(), own);
      const liveMerchant = await createMerchant(proprietorBody(), live);
      expect(liveMerchant.mode).toBe('live');
      const testList = (await harness().request('GET', `${BASE}/merchants/`, { auth: own })).json();
      expect(testList.data.map((m: { id: string }) => m.id)).toEqual([testMerchant.id]);
      const cross = await harness().request('GET', `${BASE}/merchants/${liveMerchant.id}/`, { auth: own });
      expect(cross.statusCode).toBe(404);
    });
  });

  describe('POST merchants/bank-details/<mid>', () => {
    it('stores the account, names the bank from the IFSC and shows only the last four digits', async () => {
      const merchant = await createMerchant();
      const response = await harness().request('POST', `${BASE}/merchants/bank-details/${merchant.id}/`, {
        auth: partner,
        json: BANK,
      });
      expect(response.statusCode).toBe(200);
      const data = response.json().data;
      expect(data.bank_account).toEqual({
        account_number: 'XXXXXXXX7890',
        last4: '7890',
        ifsc: 'HDFC0001234',
        bank_name: 'HDFC Bank',
        beneficiary_name: 'Kirana Kart Private Limited',
        account_type: 'current',
        status: 'verified',
        failure_reason: null,
      });
      expect(data.requirements.currently_due).not.toContain('bank_details');
      expect(response.body).not.toContain(BANK.account_number);
    });

    it('refuses a beneficiary name of spaces or with a direction mark, and records nothing', async () => {
      const merchant = await createMerchant();
      for (const beneficiary_name of ['   ', 'Kirana\u200f Kart']) {
        const response = await harness().request('POST', `${BASE}/merchants/bank-details/${merchant.id}/`, {
          auth: partner,
          json: { ...BANK, beneficiary_name },
        });
        expect(response.statusCode).toBe(400);
        expect(response.json().error).toMatchObject({ code: 'invalid_field', field: 'beneficiary_name' });
      }
      const fetched = await harness().request('GET', `${BASE}/merchants/${merchant.id}/`, { auth: partner });
      expect(fetched.json().data.bank_account).toBeNull();
      expect(fetched.json().data.requirements.currently_due).toContain('bank_details');
    });

    it('fails the simulated penny drop when the beneficiary name contains MISMATCH, then accepts a correction', async () => {
      const merchant = await createMerchant();
      const url = `${BASE}/merchants/bank-details/${merchant.id}/`;
      const failed = await harness().request('POST', url, {
        auth: partner,
        json: { ...BANK, beneficiary_name: 'Name Mismatch Traders' },
      });
      expect(failed.statusCode).toBe(200);
      const data = failed.json().data;
      expect(data.bank_account).toMatchObject({
        status: 'failed',
        failure_reason: 'beneficiary_name_mismatch',
      });
      expect(data.requirements.currently_due).toContain('bank_details');
      expect(data.requirements.errors).toEqual([
        expect.objectContaining({ requirement: 'bank_details', code: 'beneficiary_name_mismatch' }),
      ]);
      const fixed = await harness().request('POST', url, { auth: partner, json: BANK });
      expect(fixed.json().data.bank_account.status).toBe('verified');
      expect(fixed.json().data.requirements.errors).toEqual([]);
    });

    const invalid: [string, Record<string, unknown>, string, string][] = [
      ['account_number too short', { account_number: '12345678' }, 'invalid_field', 'account_number'],
      ['account_number too long', { account_number: '1'.repeat(19) }, 'invalid_field', 'account_number'],
      ['account_number with letters', { account_number: '00123456789A' }, 'invalid_field', 'account_number'],
      ['account_number a number', { account_number: 1234567890 }, 'invalid_field', 'account_number'],
      ['account_number missing', { account_number: undefined }, 'missing_field', 'account_number'],
      ['ifsc without the zero', { ifsc: 'HDFC1001234' }, 'invalid_field', 'ifsc'],
      ['ifsc lowercase', { ifsc: 'hdfc0001234' }, 'invalid_field', 'ifsc'],
      ['ifsc of an unknown bank', { ifsc: 'ZZZZ0001234' }, 'invalid_field', 'ifsc'],
      ['beneficiary_name missing', { beneficiary_name: undefined }, 'missing_field', 'beneficiary_name'],
      ['beneficiary_name too short', { beneficiary_name: 'K' }, 'invalid_field', 'beneficiary_name'],
      ['account_type unknown', { account_type: 'nro' }, 'invalid_field', 'account_type'],
      ['server-owned status', { status: 'verified' }, 'server_owned_field', 'status'],
      ['a typo', { acount_number: '001234567890' }, 'unknown_field', 'acount_number'],
    ];

    it.each(invalid)('refuses %s', async (_name, change, code, field) => {
      const merchant = await createMerchant(proprietorBody());
      const body: Record<string, unknown> = { ...BANK, ...change };
      for (const [key, value] of Object.entries(change)) if (value === undefined) delete body[key];
      const response = await harness().request('POST', `${BASE}/merchants/bank-details/${merchant.id}/`, {
        auth: partner,
        json: body,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toMatchObject({ code, field });
      expect(response.body).not.toContain('001234567890');
      const after = await harness().request('GET', `${BASE}/merchants/${merchant.id}/`, { auth: partner });
      expect(after.json().data.bank_account).toBeNull();
    });
  });

  describe('POST merchants/<mid>/keys', () => {
    it.each([
      ['mode missing', {}, 'missing_field', 'mode'],
      ['mode unknown', { mode: 'prod' }, 'invalid_field', 'mode'],
      [
        'a server-owned account_id',
        { mode: 'test', account_id: 'mid_x' },
        'server_owned_field',
        'account_id',
      ],
    ])('refuses %s', async (_name, body, code, field) => {
      const created = await createMerchant(proprietorBody());
      const response = await harness().request('POST', `${BASE}/merchants/${created.id}/keys/`, {
        auth: partner,
        json: body,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toMatchObject({ code, field });
    });
  });

  describe('PATCH merchants/<mid>/methods', () => {
    it('disables and re-enables banks and wallets, reflected by GET /v1/payments/methods/', async () => {
      const created = await createMerchant(proprietorBody());
      const auth = `Basic ${Buffer.from(`${created.credentials.api_key}:${created.credentials.secret_key}`).toString('base64')}`;
      const before = (await harness().request('GET', '/v1/payments/methods/', { auth })).json();
      expect(before.netbanking.HDFC).toBe('HDFC Bank');
      expect(before.wallet.payzapp).toBe('PayZapp');

      const url = `${BASE}/merchants/${created.id}/methods/`;
      const off = await harness().request('PATCH', url, {
        auth: partner,
        json: { netbanking: { HDFC: false }, wallet: { payzapp: false } },
      });
      expect(off.statusCode).toBe(200);
      expect(off.json().data.netbanking.HDFC).toBeUndefined();
      const after = (await harness().request('GET', '/v1/payments/methods/', { auth })).json();
      expect(after.netbanking.HDFC).toBeUndefined();
      expect(after.netbanking.ICIC).toBe('ICICI Bank');
      expect(after.wallet.payzapp).toBeUndefined();

      await harness().request('PATCH', url, { auth: partner, json: { netbanking: { HDFC: true } } });
      const again = (await harness().request('GET', '/v1/payments/methods/', { auth })).json();
      expect(again.netbanking.HDFC).toBe('HDFC Bank');

      // The same as a bracket-nested form, as every body may be sent.
      const asForm = await harness().request('PATCH', url, {
        auth: partner,
        form: { 'netbanking[HDFC]': 'false', 'wallet[payzapp]': 'false', 'upi[collect]': 'false' },
      });
      expect(asForm.statusCode, asForm.body).toBe(200);
      const fromForm = (await harness().request('GET', '/v1/payments/methods/', { auth })).json();
      expect(fromForm.netbanking.HDFC).toBeUndefined();
      expect(fromForm.wallet.payzapp).toBeUndefined();
      expect(fromForm.upi.collect).toBe(false);
      const notBoolean = await harness().request('PATCH', url, {
        auth: partner,
        form: { 'netbanking[HDFC]': 'off' },
      });
      expect(notBoolean.statusCode).toBe(400);
      expect(notBoolean.json().error).toMatchObject({ code: 'invalid_field', field: 'netbanking.HDFC' });
    });

    it.each([
      ['an unknown bank', { netbanking: { ZZZZ: false } }, 'invalid_field', 'netbanking.ZZZZ'],
      ['a wallet in upper case', { wallet: { PAYZAPP: false } }, 'invalid_field', 'wallet.PAYZAPP'],
      ['a non-boolean', { netbanking: { HDFC: 'off' } }, 'invalid_field', 'netbanking.HDFC'],
      ['cards', { card_networks: { visa: true } }, 'unknown_field', 'card_networks'],
      ['an empty body', {}, 'invalid_body', ''],
    ])('refuses %s', async (_name, body, code, field) => {
      const created = await createMerchant(proprietorBody());
      const response = await harness().request('PATCH', `${BASE}/merchants/${created.id}/methods/`, {
        auth: partner,
        json: body,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toMatchObject({ code, field: field || null });
    });
  });
});
