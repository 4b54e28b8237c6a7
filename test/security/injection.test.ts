import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { HOSTILE_STRINGS, STRING_FIELD_ROUTES } from './tables.js';

describeEachDatabase('security: injection', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant('Injection');
  });

  for (const table of STRING_FIELD_ROUTES) {
    for (const field of table.fields) {
      describe(`POST ${table.route} ${field.name}`, () => {
        const values = HOSTILE_STRINGS.filter(
          (value) => value.length <= field.maxLength && !field.excludes?.includes(value),
        );
        it.each(values)('stores %j verbatim as data and returns it as JSON', async (value) => {
          const created = await harness().request('POST', table.route, {
            auth: merchant,
            json: field.body(value),
          });
          expect(created.statusCode, created.body).toBe(200);
          expect(created.headers['content-type']).toMatch(/^application\/json/);
          expect(created.headers['x-content-type-options']).toBe('nosniff');
          const data = created.json().data;
          expect(field.read(data)).toBe(value);
          const fetched = await harness().request('GET', table.fetchUrl(data), { auth: merchant });
          expect(fetched.statusCode).toBe(200);
          expect(field.read(fetched.json().data)).toBe(value);
        });

        it.each(values)('stores %j verbatim from a form body', async (value) => {
          const created = await harness().request('POST', table.route, {
            auth: merchant,
            form: field.body(value),
          });
          expect(created.statusCode, created.body).toBe(200);
          expect(field.read(created.json().data)).toBe(value);
        });
      });
    }
  }

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
      null,
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
});
