import SwaggerParser from '@apidevtools/swagger-parser';
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

  it.each([
    ['malformed JSON', '{"amount": 5000,', 'invalid_json'],
    ['an empty body', '', 'invalid_json'],
    ['a JSON array', '[1,2]', 'invalid_body'],
    ['a JSON string', '"hello"', 'invalid_body'],
    ['JSON null', 'null', 'invalid_body'],
    ['a __proto__ key', '{"amount":5000,"currency":"INR","__proto__":{"admin":true}}', 'invalid_json'],
  ])('refuses %s with a 400', async (_name, body, code) => {
    const response = await harness().request('POST', '/v1/orders/', {
      auth: merchant,
      json: body,
      headers: { 'content-type': 'application/json' },
    });
    expectError(response, 400, code);
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
          `has a key '${'k'.repeat(41)}' that must be at most 40 characters long`,
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

  describe('OpenAPI', () => {
    it('publishes a valid OpenAPI 3.1 document listing every route', async () => {
      const response = await harness().request('GET', '/v1/openapi.json');
      expect(response.statusCode).toBe(200);
      const document = response.json();
      expect(document.openapi).toBe('3.1.0');
      await SwaggerParser.validate(structuredClone(document));
      const documented = harness()
        .app.routeSummaries()
        .filter((route) => route.documented && route.url.startsWith('/v1/'));
      expect(documented.length).toBeGreaterThanOrEqual(4);
      for (const route of documented) {
        const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
        expect(
          document.paths[path]?.[route.method.toLowerCase()],
          `${route.method} ${route.url}`,
        ).toBeDefined();
      }
    });

    it('serves a browsable reference at /docs', async () => {
      const response = await harness().request('GET', '/docs/');
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/text\/html/);
      expect(response.body).toContain('swagger');
    });
  });
});
