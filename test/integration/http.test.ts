import { gzipSync } from 'node:zlib';
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/domain/errors.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { RAW_VALIDATOR_WORDING } from '../security/fuzz.js';

describeEachDatabase('HTTP conventions', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant();
  });

  const expectError = (response: LightMyRequestResponse, status: number, code: string) => {
    expect(response.statusCode).toBe(status);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const body = response.json();
    expect(Object.keys(body)).toEqual(['error']);
    expect(body.error).toMatchObject({ code, request_id: response.headers['x-request-id'] });
    expect(body.error.message).toEqual(expect.any(String));
  };

  it('answers an unknown route with a JSON 404', async () => {
    expectError(
      await harness().request('GET', '/v1/nothing-here/', { auth: merchant }),
      404,
      'route_not_found',
    );
    expectError(await harness().request('GET', '/nope'), 404, 'route_not_found');
  });

  it('answers a known path with the wrong method with a JSON 405 and Allow', async () => {
    const response = await harness().request('DELETE', '/v1/orders/order_00000000000000000000000000/', {
      auth: merchant,
    });
    expectError(response, 405, 'method_not_allowed');
    expect(response.headers.allow).toContain('GET');
    expectError(
      await harness().request('PUT', '/v1/payments/methods', { auth: merchant }),
      405,
      'method_not_allowed',
    );
  });

  it('refuses an oversized body with 413', async () => {
    const big = JSON.stringify({ amount: 5000, currency: 'INR', receipt: 'x'.repeat(200_000) });
    expectError(
      await harness().request('POST', '/v1/orders/', { auth: merchant, json: big }),
      413,
      'body_too_large',
    );
  });

  it('refuses an unsupported content type with 415', async () => {
    const response = await harness().request('POST', '/v1/orders/', {
      auth: merchant,
      json: 'amount=5000',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(response, 415, 'unsupported_media_type');
  });

  it('refuses a compressed body with 415, naming its Content-Encoding, and creates nothing', async () => {
    const body = JSON.stringify({ amount: 5000, currency: 'INR', receipt: 'encoded' });
    for (const [encoding, payload] of [
      ['gzip', gzipSync(body)],
      ['br', body],
    ] as const) {
      const response = await harness().app.inject({
        method: 'POST',
        url: '/v1/orders/',
        headers: {
          authorization: merchant.auth,
          'content-type': 'application/json',
          'content-encoding': encoding,
        },
        payload,
      });
      expectError(response, 415, 'unsupported_media_type');
      expect(response.json().error.message).toBe(
        `Content-Encoding '${encoding}' is not accepted: send the body uncompressed.`,
      );
    }
    const form = await harness().request('POST', '/v1/orders/', {
      auth: merchant,
      form: 'amount=5000&currency=INR',
      headers: { 'content-encoding': 'deflate' },
    });
    expectError(form, 415, 'unsupported_media_type');
    const orders = await harness().request('GET', '/v1/orders/?receipt=encoded', { auth: merchant });
    expect(orders.json().data).toEqual([]);
    // `identity` is no encoding at all.
    const plain = await harness().request('POST', '/v1/orders/', {
      auth: merchant,
      json: { amount: 5000, currency: 'INR' },
      headers: { 'content-encoding': 'identity' },
    });
    expect(plain.statusCode).toBe(200);
  });

  it('says what is wrong with a form field given both as a value and as an object', async () => {
    for (const form of [
      'amount=5000&currency=INR&metadata=x&metadata[a]=b',
      'amount=5000&currency=INR&metadata[]=x',
    ]) {
      const response = await harness().request('POST', '/v1/orders/', { auth: merchant, form });
      expect(response.statusCode, form).toBe(400);
      expect(response.json().error.message, form).toMatch(/given both as a value and as an object or list/);
    }
  });

  it.each([
    ['malformed JSON', '{"amount": 5000,', 'invalid_json'],
    // No body is no body, whatever the header says: the schema names what is required.
    ['an empty body', '', 'missing_field'],
    ['a JSON array', '[1,2]', 'invalid_body'],
    ['a JSON string', '"hello"', 'invalid_body'],
    ['JSON null', 'null', 'invalid_body'],
  ])('refuses %s with a 400', async (_name, body, code) => {
    const response = await harness().request('POST', '/v1/orders/', {
      auth: merchant,
      json: body,
      headers: { 'content-type': 'application/json' },
    });
    expectError(response, 400, code);
  });

  describe('bodies Kosh would otherwise read differently from what was sent', () => {
    const ordersOf = async () =>
      (await harness().request('GET', '/v1/orders/?limit=100', { auth: merchant })).json().data.length;

    it.each([
      ['at the top', '{"amount":5000,"currency":"INR","__proto__":{"admin":true}}', '__proto__'],
      ['in metadata', '{"amount":5000,"currency":"INR","metadata":{"__proto__":"x"}}', 'metadata.__proto__'],
      [
        'as constructor.prototype',
        '{"amount":5000,"currency":"INR","metadata":{"constructor":{"prototype":{"a":1}}}}',
        'metadata.constructor.prototype',
      ],
    ])('refuses a prototype key %s, naming where it stands', async (_where, body, field) => {
      const before = await ordersOf();
      const response = await harness().request('POST', '/v1/orders/', { auth: merchant, json: body });
      expectError(response, 400, 'invalid_field');
      expect(response.json().error.field).toBe(field);
      expect(response.json().error.message).toContain(`'${field}'`);
      expect(await ordersOf()).toBe(before);
    });

    it('refuses a field sent twice, in JSON and in a form, naming it', async () => {
      const before = await ordersOf();
      const cases: [string, { json?: string; form?: string }][] = [
        ['amount', { json: '{"amount":5000,"amount":100,"currency":"INR"}' }],
        ['amount', { json: '{"amount":5000,"\\u0061mount":100,"currency":"INR"}' }],
        ['metadata.note', { json: '{"amount":5000,"currency":"INR","metadata":{"note":"a","note" : "b"}}' }],
        ['amount', { form: 'amount=5000&currency=INR&amount=100' }],
        ['metadata.note', { form: 'amount=5000&currency=INR&metadata[note]=a&metadata%5Bnote%5D=b' }],
      ];
      for (const [field, body] of cases) {
        const response = await harness().request('POST', '/v1/orders/', { auth: merchant, ...body });
        expectError(response, 400, 'invalid_field');
        expect(response.json().error.field, JSON.stringify(body)).toBe(field);
        expect(response.json().error.message).toContain('more than once');
      }
      expect(await ordersOf()).toBe(before);
      // The same key in two objects is no repeat, and a '":' inside a string is no key.
      const fine = await harness().request('POST', '/v1/orders/', {
        auth: merchant,
        json: '{"amount":5000,"currency":"INR","receipt":"a\\":b","metadata":{"amount":1,"x":"\\" : "}}',
      });
      expect(fine.statusCode, fine.body).toBe(200);
      expect(fine.json().data.metadata).toEqual({ amount: 1, x: '" : ' });
    });

    it('answers a hostile nesting with a 400, a prototype key at its bottom included', async () => {
      for (const inner of ['{"__proto__":1}', '{"a":1,"a":2}', '1']) {
        const deep = `${'['.repeat(20_000)}${inner}${']'.repeat(20_000)}`;
        const response = await harness().request('POST', '/v1/orders/', {
          auth: merchant,
          json: `{"amount":5000,"currency":"INR","metadata":{"x":${deep}}}`,
        });
        expect(response.statusCode, inner).toBe(400);
      }
    });

    /** A create-order request whose body is these bytes, as sent. */
    const postOrderBytes = (contentType: string, payload: Buffer) =>
      harness().app.inject({
        method: 'POST',
        url: '/v1/orders/',
        headers: { authorization: merchant.auth, 'content-type': contentType },
        payload,
      });

    it('refuses a JSON body that is not UTF-8 instead of storing U+FFFD', async () => {
      const before = await ordersOf();
      const payload = Buffer.concat([
        Buffer.from('{"amount":5000,"currency":"INR","receipt":"'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}'),
      ]);
      const response = await postOrderBytes('application/json', payload);
      expectError(response, 400, 'invalid_json');
      expect(response.json().error.message).toContain('UTF-8');
      expect(await ordersOf()).toBe(before);
      // Multi-byte UTF-8 is read as sent.
      const fine = await harness().request('POST', '/v1/orders/', {
        auth: merchant,
        json: { amount: 5000, currency: 'INR', receipt: 'चाय ☕' },
      });
      expect(fine.statusCode).toBe(200);
      expect(fine.json().data.receipt).toBe('चाय ☕');
    });

    it('refuses a form body that is not UTF-8, or whose percent-escapes are not, instead of storing other text', async () => {
      const before = await ordersOf();
      for (const payload of [
        Buffer.concat([Buffer.from('amount=5000&currency=INR&receipt=caf'), Buffer.from([0xe9])]),
        Buffer.from('amount=5000&currency=INR&receipt=caf%E9'),
        Buffer.from('amount=5000&currency=INR&receipt=50%ZZoff'),
        Buffer.from('amount=5000&currency=INR&rec%E9ipt=x'),
      ]) {
        const response = await postOrderBytes('application/x-www-form-urlencoded', payload);
        expectError(response, 400, 'invalid_body');
        expect(response.json().error.message, payload.toString('latin1')).toContain('UTF-8');
      }
      expect(await ordersOf()).toBe(before);
      // UTF-8, escaped or sent as bytes, and a + for a space, are read as sent.
      for (const receipt of ['caf%C3%A9+%E2%98%95', 'café ☕']) {
        const fine = await postOrderBytes(
          'application/x-www-form-urlencoded',
          Buffer.from(`amount=5000&currency=INR&receipt=${receipt}`),
        );
        expect(fine.statusCode, fine.body).toBe(200);
        expect(fine.json().data.receipt).toBe('café ☕');
      }
    });

    it('refuses a whole number written with a fraction or exponent, which JSON would read as another integer', async () => {
      const before = await ordersOf();
      for (const [body, field, written] of [
        ['{"amount":5000.0,"currency":"INR"}', 'amount', '5000.0'],
        ['{"amount":5e3,"currency":"INR"}', 'amount', '5e3'],
        ['{"amount":99.99999999999999999,"currency":"INR"}', 'amount', '99.99999999999999999'],
        ['{"amount":5000.0000000000001,"currency":"INR"}', 'amount', '5000.0000000000001'],
        [
          '{"currency":"INR","receipt":"5.0 \\" 7.0","metadata":{"n":2.0},"amount":5000}',
          'metadata.n',
          '2.0',
        ],
      ] as const) {
        const response = await harness().request('POST', '/v1/orders/', { auth: merchant, json: body });
        expectError(response, 400, 'invalid_field');
        expect(response.json().error.field, body).toBe(field);
        expect(response.json().error.message).toContain(written);
      }
      expect(await ordersOf()).toBe(before);
      // A fraction that is not whole is the schema's to judge; numbers inside strings are text.
      expectError(
        await harness().request('POST', '/v1/orders/', {
          auth: merchant,
          json: '{"amount":5000.5,"currency":"INR"}',
        }),
        400,
        'invalid_field',
      );
      const fine = await harness().request('POST', '/v1/orders/', {
        auth: merchant,
        json: '{"amount":5000,"currency":"INR","receipt":"5.0e3","metadata":{"ratio":0.25,"n":-7}}',
      });
      expect(fine.statusCode, fine.body).toBe(200);
      expect(fine.json().data).toMatchObject({
        amount: 5000,
        receipt: '5.0e3',
        metadata: { ratio: 0.25, n: -7 },
      });
    });

    it('refuses a metadata number a double cannot hold exactly, and keeps the largest one that fits', async () => {
      const before = await ordersOf();
      for (const text of ['12345678901234567890', '9007199254740993', '-9007199254740992', '1e300']) {
        const response = await harness().request('POST', '/v1/orders/', {
          auth: merchant,
          json: `{"amount":5000,"currency":"INR","metadata":{"n":${text}}}`,
        });
        expectError(response, 400, 'invalid_field');
        expect(response.json().error.field).toBe('metadata.n');
      }
      expect(await ordersOf()).toBe(before);
      const edge = await harness().request('POST', '/v1/orders/', {
        auth: merchant,
        json: '{"amount":5000,"currency":"INR","metadata":{"n":9007199254740991,"m":-9007199254740991,"f":0.25}}',
      });
      expect(edge.statusCode).toBe(200);
      expect(edge.json().data.metadata).toEqual({ n: 9007199254740991, m: -9007199254740991, f: 0.25 });
    });
  });

  it('refuses a query parameter on an API endpoint that takes none, and changes nothing', async () => {
    const created = await harness().request('POST', '/v1/orders/', {
      auth: merchant,
      json: { amount: 5000, currency: 'INR' },
    });
    const id = created.json().data.id;
    const count = async () =>
      (await harness().request('GET', '/v1/orders/?limit=100', { auth: merchant })).json().data.length;
    const before = await count();
    for (const [method, url, json] of [
      ['GET', `/v1/orders/${id}/?expand=payments`, undefined],
      ['GET', '/v1/payments/methods/?x=1', undefined],
      ['POST', '/v1/orders/?amount=100', { amount: 5000, currency: 'INR' }],
    ] as const) {
      const response = await harness().request(method, url, { auth: merchant, json });
      expectError(response, 400, 'unknown_field');
      expect(response.json().error.field).toBe(new URL(url, 'http://x').searchParams.keys().next().value);
    }
    expect(await count()).toBe(before);
    // An empty query string is no parameter; declared ones still work.
    expect((await harness().request('GET', `/v1/orders/${id}/?`, { auth: merchant })).statusCode).toBe(200);
    expect((await harness().request('GET', '/v1/orders/?limit=1', { auth: merchant })).statusCode).toBe(200);
  });

  it('refuses a query parameter given twice by name, whichever value would be read', async () => {
    for (const url of [
      '/v1/orders/?limit=1&limit=2',
      '/v1/orders/?status=paid&status=paid',
      '/v1/refunds/?limit=5&status=failed&status=processed',
    ]) {
      const response = await harness().request('GET', url, { auth: merchant });
      expectError(response, 400, 'invalid_field');
      const name = url.includes('limit=1&') ? 'limit' : 'status';
      expect(response.json().error).toMatchObject({
        field: name,
        message: `The query parameter '${name}' is given more than once.`,
      });
    }
  });

  it('gives every response an X-Request-Id and keeps a sane one from the caller', async () => {
    const generated = await harness().request('GET', '/healthz');
    expect(generated.headers['x-request-id']).toMatch(/^req_/);
    const kept = await harness().request('GET', '/healthz', {
      headers: { 'x-request-id': 'client-abc-123' },
    });
    expect(kept.headers['x-request-id']).toBe('client-abc-123');
    const replaced = await harness().request('GET', '/healthz', {
      headers: { 'x-request-id': 'bad id <script>' },
    });
    expect(replaced.headers['x-request-id']).toMatch(/^req_/);
  });

  it('serves /healthz, /readyz and /metrics', async () => {
    expect((await harness().request('GET', '/healthz')).json()).toEqual({ status: 'ok' });
    expect((await harness().request('GET', '/readyz')).json()).toEqual({
      status: 'ok',
      database: harness().kind,
    });
    const metrics = await harness().request('GET', '/metrics');
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('kosh_http_request_duration_seconds');
    // The process's own series (prom-client's defaults) are served with the server's.
    expect(metrics.body).toContain('process_cpu_user_seconds_total');
    expect(metrics.body).toContain('nodejs_eventloop_lag_seconds');
  });

  describe('errors that teach', () => {
    it('links every error to its entry in the error reference Kosh serves', async () => {
      const response = await harness().request('GET', '/v1/orders/order_0000000000000000000000000x/', {
        auth: merchant,
      });
      const { error } = response.json();
      expect(error.doc_url).toBe(`${harness().container.config.publicUrl}/docs/errors#resource_not_found`);
      const page = await harness().request('GET', '/docs/errors');
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
      for (const code of Object.keys(ERROR_CATALOGUE)) expect(page.body).toContain(`<section id="${code}">`);
    });

    it('tells a caller who sent JSON as a form to send Content-Type: application/json', async () => {
      const body = '{"amount": 5000, "currency": "INR"}';
      const response = await harness().request('POST', '/v1/orders/', {
        auth: merchant,
        form: body,
      });
      expectError(response, 400, 'invalid_body');
      expect(response.json().error.message).toContain("'Content-Type: application/json'");
      // curl's form type with a JSON array is the same mistake.
      const array = await harness().request('POST', '/v1/orders/', { auth: merchant, form: ' [1]' });
      expect(array.json().error.message).toContain('application/json');
    });

    it("says what is wrong with a field in its own words, never the validator's", async () => {
      const cases: [Record<string, unknown>, string, string][] = [
        [{ amount: 'five', currency: 'INR' }, 'amount', "The field 'amount' must be an integer."],
        [{ amount: 5000, currency: 'INR', receipt: 'r'.repeat(41) }, 'receipt', 'at most 40 characters long'],
        [
          { amount: 5000, currency: 'INR', metadata: { a: { b: 1 } } },
          'metadata.a',
          'must be a string, a number, true or false or null',
        ],
        [
          { amount: 5000, currency: 'INR', metadata: { ['k'.repeat(41)]: 1 } },
          'metadata',
          `has a key '${'k'.repeat(40)}…' that must be at most 40 characters long`,
        ],
        [
          {
            amount: 5000,
            currency: 'INR',
            metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i])),
          },
          'metadata',
          'must have at most 20 keys',
        ],
      ];
      for (const [json, field, words] of cases) {
        const response = await harness().request('POST', '/v1/orders/', { auth: merchant, json });
        expectError(response, 400, 'invalid_field');
        const { error } = response.json();
        expect(error.field, JSON.stringify(json)).toBe(field);
        expect(error.message).toContain(words);
        expect(error.message).not.toMatch(RAW_VALIDATOR_WORDING);
      }
    });
  });
});
