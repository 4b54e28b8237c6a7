import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { SANDBOX_BANKS, SANDBOX_WALLETS } from '../../src/connectors/sandbox/catalogue.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { BANK, gstinFor, merchantBody, proprietorBody } from '../helpers/onboarding.js';
import {
  bodiesFrom,
  encodings,
  FUZZ_RUNS,
  fuzzLists,
  fuzzRoute,
  idempotencyHeaders,
  listQueries,
  secretsIn,
  shortText,
} from './fuzz.js';
import { SecretLedger } from './secrets.js';

const BASE = '/v1/api-portal';
const MISSING = 'mid_00000000000000000000000000';
const BAD_IDS = ['x', "mid_'--", '%00', '..%2F..%2F', 'order_00000000000000000000000000'];

/** Names that fit the schema (2+ characters that are not only spaces), often hostile. */
const name = (maxLength: number) =>
  shortText(maxLength).filter((text) => text.trim().length >= 2 && text.length <= maxLength);

const validMerchant = fc
  .record({
    kind: fc.constantFrom('proprietorship', 'private_limited'),
    legal_name: name(200),
    display_name: name(100),
    line1: name(100),
    city: name(50),
    website: fc.constantFrom(undefined, 'https://shop.example.in'),
  })
  .map(({ kind, legal_name, display_name, line1, city, website }) => {
    const base = kind === 'proprietorship' ? proprietorBody() : merchantBody();
    const address = { ...(base.address as Record<string, string>), line1, city };
    const body: Record<string, unknown> = { ...base, legal_name, display_name, address };
    if (website) body.website = website;
    return body;
  });
const MERCHANT_FIELDS = [
  'legal_name',
  'display_name',
  'email',
  'contact',
  'business_type',
  'business_category',
  'business_subcategory',
  'website',
  'address',
  'address.line1',
  'address.line2',
  'address.city',
  'address.state',
  'address.postal_code',
  'address.country',
  'pan',
  'gstin',
  'credentials',
];
const merchantNear: Record<string, unknown[]> = {
  email: ['no-at', 'a@b', 'a b@c.in'],
  contact: ['+0123', '12', '+91 98765 43210'],
  business_type: ['llc', 'PROPRIETORSHIP', ''],
  business_category: ['ecommerce', 'food', 'unknown_category', 'Food'],
  business_subcategory: ['grocery', 'cloud_kitchens', 'nothing_here'],
  website: [
    'http://shop.example.in',
    'javascript:alert(1)',
    'shop',
    'https://user:pw@shop.example.in',
    'https://169.254.169.254/',
    'https://10.0.0.1',
    'https://shop.local',
    ' https://shop.example.in',
  ],
  'address.postal_code': ['012345', '56000', 'ABCDEF'],
  'address.country': ['US', 'in', ''],
  pan: ['AABCK1234L', 'ABCPS1234D', 'abcps1234d', 'AAAAA0000A'],
  gstin: [gstinFor('AABCK1234L'), `${gstinFor('AABCK1234L').slice(0, 14)}0`, gstinFor('ABCPS1234D'), 'X'],
};

/** Account numbers the suite submits start with 5550, so that one can be found in the logs. */
const submittedNumbers = new Set<string>();
const accountNumber = fc
  .stringMatching(/^[0-9]{8,14}$/)
  .map((digits) => `5550${digits}`)
  .map((number) => {
    submittedNumbers.add(number);
    return number;
  });

describeEachDatabase('security: fuzzing the api-portal', (harness) => {
  const ledger = new SecretLedger();
  let partner: TestAccount;
  let mids: string[];
  const keepSecrets = (body: string) => {
    for (const secret of secretsIn(body)) ledger.addValue(secret);
  };
  const midUrl = (path: (mid: string) => string) =>
    fc
      .oneof(
        { weight: 8, arbitrary: fc.constantFrom(...mids) },
        { weight: 1, arbitrary: fc.constantFrom(MISSING, ...BAD_IDS) },
      )
      .map(path);
  beforeAll(async () => {
    partner = await harness().partner('Fuzz portal');
    ledger.add(partner);
    mids = [];
    for (const body of [proprietorBody(), merchantBody()]) {
      const reply = await harness().request('POST', `${BASE}/merchants/`, { auth: partner, json: body });
      keepSecrets(reply.body);
      mids.push(reply.json().data.id);
    }
  });

  it(`POST merchants: ${FUZZ_RUNS} generated requests, JSON and form`, async () => {
    // A partner of its own: the merchants made here would otherwise weigh on every later digest.
    const creator = await harness().partner('Fuzz creator');
    ledger.add(creator);
    const statuses = await fuzzRoute(harness(), {
      method: 'POST',
      url: fc.constantFrom(`${BASE}/merchants/`, `${BASE}/merchants`),
      account: creator,
      body: encodings(bodiesFrom(validMerchant, MERCHANT_FIELDS, merchantNear)),
      headers: idempotencyHeaders,
      onSuccess(reply) {
        expect(reply.json().data.id).toMatch(/^mid_/);
        keepSecrets(reply.body);
      },
    });
    expect(statuses.get(200) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(FUZZ_RUNS / 5);
  }, 300_000);

  it(`POST bank-details/<mid>/: ${FUZZ_RUNS} generated requests, JSON and form`, async () => {
    const valid = fc.record({
      account_number: accountNumber,
      ifsc: fc.constantFrom(BANK.ifsc, 'SBIN0000001'),
      beneficiary_name: name(120),
      account_type: fc.constantFrom('savings', 'current'),
    });
    const near: Record<string, unknown[]> = {
      account_number: ['12345678', '1234567890123456789', '55501234abcd', 5550123456789],
      ifsc: ['hdfc0001234', 'HDFC1001234', 'HDFC000123'],
      account_type: ['checking', 'SAVINGS'],
      beneficiary_name: ['MISMATCH Name', 'x', ''],
    };
    const statuses = await fuzzRoute(harness(), {
      method: 'POST',
      url: midUrl((mid) => `${BASE}/merchants/bank-details/${mid}/`),
      account: partner,
      body: encodings(bodiesFrom(valid, Object.keys(near), near)),
      onSuccess(reply) {
        const account = reply.json().data.bank_account;
        // Only the last four digits ever leave Kosh.
        expect(account.account_number).not.toMatch(/[0-9]{5}/);
      },
    });
    expect(statuses.get(200) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(FUZZ_RUNS / 5);
  }, 300_000);

  it(`POST generate-vpa/<mid>/: ${FUZZ_RUNS} generated requests`, async () => {
    const valid = fc.record({ descriptor: fc.stringMatching(/^[a-z0-9]{3,20}$/) }, { requiredKeys: [] });
    const near = { descriptor: ['ab', 'a'.repeat(21), 'Asha', 'asha.t', 'asha@x', 'ash a', ''] };
    const statuses = await fuzzRoute(harness(), {
      method: 'POST',
      url: midUrl((mid) => `${BASE}/generate-vpa/${mid}/`),
      account: partner,
      body: encodings(bodiesFrom(valid, ['descriptor', 'address'], near)),
      headers: idempotencyHeaders,
      onSuccess(reply) {
        expect(reply.json().data.address).toMatch(/^[a-z0-9]{3,20}\.[a-z0-9]{6}@kosh$/);
      },
    });
    expect(statuses.get(200) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(FUZZ_RUNS / 5);
  }, 300_000);

  it(`PATCH merchants/<mid>/methods/: ${FUZZ_RUNS} generated requests, JSON and form`, async () => {
    const toggles = (codes: string[]) =>
      fc.dictionary(
        fc.oneof(
          { weight: 9, arbitrary: fc.constantFrom(...codes) },
          { weight: 1, arbitrary: shortText(20) },
        ),
        fc.boolean(),
        { maxKeys: 4 },
      );
    const valid = fc.record(
      {
        netbanking: toggles(SANDBOX_BANKS.map((bank) => bank.code)),
        wallet: toggles(SANDBOX_WALLETS.map((wallet) => wallet.code)),
        upi: fc.record({ intent: fc.boolean(), collect: fc.boolean() }, { requiredKeys: [] }),
      },
      { requiredKeys: [] },
    );
    const near = {
      netbanking: [{ HDFC: 'false' }, { NOPE: true }, { hdfc: false }, [], { ['x'.repeat(21)]: true }],
      wallet: [{ payzapp: 1 }, { PAYZAPP: true }, null],
      upi: [
        true,
        'intent',
        [],
        null,
        { qr: true },
        { intent: true, collect: true, payer_account_type: { bank_account: true } },
        { intent: null },
        { collect: 'yes' },
        { intent: 1 },
        { INTENT: true },
      ],
      'upi.intent': ['true', 'false', 1, 0, null, 'on', ''],
      'upi.collect': ['true', 'false', 1, 0, null, 'on', ''],
    };
    const upiSeen = new Set<string>();
    const statuses = await fuzzRoute(harness(), {
      method: 'PATCH',
      url: midUrl((mid) => `${BASE}/merchants/${mid}/methods/`),
      account: partner,
      body: encodings(bodiesFrom(valid, ['netbanking', 'wallet', 'upi', 'upi.intent', 'upi.collect'], near)),
      onSuccess(reply) {
        // Whatever was sent, the methods object stays well formed: bank accounts pay by UPI exactly
        // when a UPI flow is on, and UPI never pays from a credit card.
        const { upi } = reply.json().data;
        expect(Object.keys(upi).sort()).toEqual(['collect', 'intent', 'payer_account_type']);
        expect(upi.payer_account_type).toEqual({
          bank_account: upi.intent || upi.collect,
          credit_card: false,
        });
        upiSeen.add(`intent=${upi.intent}`).add(`collect=${upi.collect}`);
      },
    });
    // The generated bodies reached UPI: both flags were turned on and off.
    expect([...upiSeen].sort()).toEqual(['collect=false', 'collect=true', 'intent=false', 'intent=true']);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
  }, 300_000);

  it(`POST merchants/<mid>/keys/: ${FUZZ_RUNS} generated requests`, async () => {
    const valid = fc.record({ mode: fc.constantFrom('test', 'live') });
    const statuses = await fuzzRoute(harness(), {
      method: 'POST',
      url: midUrl((mid) => `${BASE}/merchants/${mid}/keys/`),
      account: partner,
      body: encodings(bodiesFrom(valid, ['mode'], { mode: ['TEST', 'sandbox', ''] })),
      onSuccess(reply) {
        expect(reply.json().data.secret_key).toBeTypeOf('string');
        keepSecrets(reply.body);
      },
    });
    expect(statuses.get(200) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(FUZZ_RUNS / 20);
  }, 300_000);

  it(`GET merchants, VPAs and documents lists: ${FUZZ_RUNS} generated queries each`, async () => {
    const urls = [
      listQueries([], [MISSING]).map((query) => `${BASE}/merchants/?${query}`),
      fc
        .tuple(fc.constantFrom(...mids, MISSING, ...BAD_IDS), listQueries([]))
        .map(([mid, query]) => `${BASE}/merchants/${mid}/vpas/?${query}`),
      fc
        .tuple(fc.constantFrom(...mids, MISSING, ...BAD_IDS), listQueries([]))
        .map(([mid, query]) => `${BASE}/merchants/${mid}/kyc-documents/?${query}`),
    ];
    await fuzzLists(harness(), partner, urls);
  }, 300_000);

  it('logs no secret, no Authorization value and no full bank account number', () => {
    for (const number of submittedNumbers) ledger.addValue(number);
    expect(submittedNumbers.size).toBeGreaterThan(FUZZ_RUNS / 20);
    ledger.expectCleanLogs(harness());
  });
});
