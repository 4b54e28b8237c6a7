import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { BANK, proprietorBody } from '../helpers/onboarding.js';
import { HOSTILE_STRINGS } from './hostile-inputs.js';
import { SecretLedger } from './secrets.js';
import { STRING_FIELD_ROUTES, type StringField } from './string-fields.js';

describeEachDatabase('security: injection', (harness) => {
  const ledger = new SecretLedger();
  let merchant: TestAccount;
  let partner: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant('Injection');
    partner = await harness().partner('Injection');
    ledger.add(merchant, partner);
    // The bank-details rows submit this number: only its last four digits may be logged.
    ledger.addValue(BANK.account_number);
  });

  for (const table of STRING_FIELD_ROUTES) {
    const caller = () => (table.auth === 'partner' ? partner : merchant);
    /** Creates through the route with `body` encoded as JSON or as a form; returns reply and data. */
    async function create(field: StringField, value: string, encoding: 'json' | 'form') {
      const context = (await table.setup?.(harness(), caller())) ?? '';
      const body = field.body(value, context);
      const reply = await harness().request('POST', table.url?.(context) ?? table.route, {
        auth: caller(),
        ...(encoding === 'json' ? { json: body } : { form: body }),
      });
      expect(reply.statusCode, reply.body).toBe(200);
      const json = reply.json();
      // Credentials of merchants made here join the secrets the logs must not hold.
      if (json.data?.credentials) ledger.addValue(json.data.credentials.secret_key);
      const data = table.created ? table.created(json) : json.data;
      return { reply, data };
    }

    for (const field of table.fields) {
      describe(`POST ${table.route} ${field.name}`, () => {
        const values = HOSTILE_STRINGS.filter(
          (value) =>
            value.length <= field.maxLength &&
            !field.excludes?.includes(value) &&
            (field.accepts?.(value) ?? true),
        );
        it.each(values)('stores %j verbatim as data and returns it as JSON', async (value) => {
          const { reply, data } = await create(field, value, 'json');
          expect(reply.headers['content-type']).toMatch(/^application\/json/);
          expect(reply.headers['x-content-type-options']).toBe('nosniff');
          if (table.echoes !== false) expect(field.read(data, value)).toBe(value);
          const fetched = await harness().request('GET', table.fetchUrl(data), { auth: caller() });
          expect(fetched.statusCode).toBe(200);
          expect(field.read(fetched.json().data, value)).toBe(value);
        });

        it.each(values)('stores %j verbatim from a form body', async (value) => {
          const { data } = await create(field, value, 'form');
          const fetched = await harness().request('GET', table.fetchUrl(data), { auth: caller() });
          expect(field.read(fetched.json().data, value)).toBe(value);
        });
      });
    }
  }

  it.each(HOSTILE_STRINGS.filter((value) => !/^[a-z0-9]{3,20}$/.test(value)))(
    'refuses %j as a VPA descriptor (lower-case letters and digits only)',
    async (value) => {
      const mid = (
        await harness().request('POST', '/v1/api-portal/merchants/', {
          auth: partner,
          json: proprietorBody(),
        })
      ).json().data.id;
      const reply = await harness().request('POST', `/v1/api-portal/generate-vpa/${mid}/`, {
        auth: partner,
        json: { descriptor: value },
      });
      expect(reply.statusCode, reply.body).toBe(400);
      expect(reply.json().error).toMatchObject({ code: 'invalid_field', field: 'descriptor' });
      const vpas = await harness().request('GET', `/v1/api-portal/merchants/${mid}/vpas/`, { auth: partner });
      expect(vpas.json().data).toEqual([]);
    },
  );

  it.each([
    ['a NUL in a path parameter', '/v1/orders/order_%00x/', 'id'],
    ['a NUL in a query parameter', '/v1/orders/?cursor=%00', 'cursor'],
  ])('refuses %s with a 400', async (_name, url, field) => {
    const reply = await harness().request('GET', url, { auth: merchant });
    expect(reply.statusCode, reply.body).toBe(400);
    expect(reply.json().error).toMatchObject({ code: 'invalid_field', field });
  });

  it('still has every table and row after the hostile values (nothing was executed)', async () => {
    const [row] = await harness().container.db.query<{ orders: string; accounts: string }>(
      'SELECT (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM accounts) AS accounts',
    );
    expect(Number(row?.orders)).toBeGreaterThan(0);
    expect(Number(row?.accounts)).toBeGreaterThan(0);
  });

  it.each([
    ['a NUL character in a string', { amount: 5000, currency: 'INR', receipt: 'a\u0000b' }, 'receipt'],
    [
      'a NUL character in a metadata value',
      { amount: 5000, currency: 'INR', metadata: { k: 'a\u0000b' } },
      'metadata.k',
    ],
    ['a lone surrogate in a string', { amount: 5000, currency: 'INR', receipt: 'a\ud800b' }, 'receipt'],
    ['SQL in the currency', { amount: 5000, currency: "'--" }, 'currency'],
    [
      '__proto__ as a metadata key (JSON)',
      '{"amount":5000,"currency":"INR","metadata":{"__proto__":{"x":1}}}',
      'metadata.__proto__',
    ],
    [
      '__proto__ as a metadata key (form)',
      'amount=5000&currency=INR&metadata[__proto__]=1',
      'metadata.__proto__',
    ],
    ['__proto__ at the top (form)', 'amount=5000&currency=INR&__proto__[x]=1', '__proto__.x'],
  ])('refuses %s with a 400 naming the field and stores nothing', async (name, body, field) => {
    const account = await harness().merchant('Refused');
    const reply = await harness().request(
      'POST',
      '/v1/orders/',
      name.endsWith('(form)') ? { auth: account, form: body as string } : { auth: account, json: body },
    );
    expect(reply.statusCode, reply.body).toBe(400);
    expect(reply.json().error.field).toBe(field);
    const list = await harness().request('GET', '/v1/orders/', { auth: account });
    expect(list.json().data).toEqual([]);
  });

  it('logs no secret, no Authorization value', () => {
    ledger.expectCleanLogs(harness());
  });
});
