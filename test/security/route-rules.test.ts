import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotencyApplies } from '../../src/http/idempotency.js';
import { type RegisteredRoute, registeredRoutes } from '../../src/http/route-registry.js';
import { createHarness, type Harness, type TestAccount } from '../helpers/harness.js';

/**
 * Rules every route must follow, checked by walking the routes the app registered, so a route
 * added later is checked without anyone remembering to add it here.
 */

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
}

/** Paths of every object schema (one that lists `properties`) that would let unknown fields through. */
function openObjects(schema: JsonSchema | undefined, path = 'body'): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const found: string[] = [];
  if (schema.properties && schema.additionalProperties !== false) found.push(path);
  for (const [name, child] of Object.entries(schema.properties ?? {}))
    found.push(...openObjects(child, `${path}.${name}`));
  if (schema.items) found.push(...openObjects(schema.items, `${path}[]`));
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])])
    found.push(...openObjects(branch, path));
  return found;
}

const WRITES = new Set(['POST', 'PATCH', 'PUT']);

function isMultipart(route: RegisteredRoute): boolean {
  const consumes = (route.schema as { consumes?: string[] } | undefined)?.consumes ?? [];
  return consumes.length > 0 && consumes.every((type) => type.startsWith('multipart/'));
}

describe('rules for every registered route', () => {
  let harness: Harness;
  let routes: readonly RegisteredRoute[];
  beforeAll(async () => {
    harness = await createHarness('pglite');
    routes = registeredRoutes(harness.app);
  });
  afterAll(async () => {
    await harness.close();
  });

  it('finds the routes (the walk itself works)', () => {
    expect(routes.some((route) => route.method === 'POST' && route.url === '/v1/orders/')).toBe(true);
    expect(routes.some((route) => route.method === 'GET' && route.url === '/v1/orders/')).toBe(true);
  });

  it('gives every authenticated POST/PATCH/PUT route a body schema (multipart uploads excepted)', () => {
    const missing = routes
      .filter((route) => WRITES.has(route.method) && route.config.auth && route.config.auth !== 'none')
      .filter((route) => !isMultipart(route) && !route.schema?.body)
      .map((route) => `${route.method} ${route.url}`);
    expect(missing).toEqual([]);
  });

  it('refuses unknown fields: every body and query schema object has additionalProperties false', () => {
    const open: string[] = [];
    for (const route of routes) {
      const schema = route.schema as { body?: JsonSchema; querystring?: JsonSchema } | undefined;
      // A multipart upload's body schema only documents it; its handler refuses unknown parts
      // (test/integration/onboarding-documents.test.ts, 'an unknown part').
      // A provider's return (config.providerFields) carries whatever that provider sends; its
      // connector reads and verifies it (test/integration/payments-live.test.ts, forged returns).
      if (WRITES.has(route.method) && schema?.body && !isMultipart(route) && !route.config.providerFields) {
        expect(schema.body.additionalProperties, `${route.method} ${route.url} body`).toBe(false);
        open.push(...openObjects(schema.body).map((path) => `${route.method} ${route.url} ${path}`));
      }
      // The customer-facing authentication page (no API key) tolerates extra query parameters a
      // browser or a merchant's analytics may add; every API route refuses them.
      const api = route.config.auth !== undefined && route.config.auth !== 'none';
      if (schema?.querystring && api)
        open.push(
          ...openObjects(schema.querystring, 'query').map((path) => `${route.method} ${route.url} ${path}`),
        );
    }
    expect(open).toEqual([]);
  });

  it('covers every POST route with Idempotency-Key unless it opts out explicitly', () => {
    const uncovered = routes
      .filter((route) => route.method === 'POST' && route.config.idempotency !== false)
      .filter((route) => !idempotencyApplies({ method: route.method as 'POST', config: route.config }));
    expect(uncovered).toEqual([]);
  });

  it('answers an unknown body field with 400 unknown_field naming it on every authenticated write route', async () => {
    const keys: Record<string, TestAccount> = {
      merchant: await harness.merchant('Route walker'),
      partner: await harness.partner('Route walker'),
    };
    keys.any = keys.merchant!;
    const checked: string[] = [];
    for (const route of routes) {
      if (!WRITES.has(route.method) || !route.schema?.body || isMultipart(route)) continue;
      const account = keys[String(route.config.auth)];
      if (!account) continue;
      const url = route.url.replace(/:[A-Za-z_]+/g, 'x');
      const reply = await harness.request(route.method as 'POST', url, {
        auth: account,
        json: { kosh_unknown_field: 1 },
      });
      expect(reply.statusCode, `${route.method} ${route.url}`).toBe(400);
      const error = reply.json().error;
      // A path parameter that 'x' does not satisfy is reported first; otherwise the unknown field is.
      if (error.field !== null && !route.url.includes(`:${error.field}`)) {
        expect(error, `${route.method} ${route.url}`).toMatchObject({
          code: 'unknown_field',
          field: 'kosh_unknown_field',
        });
      }
      checked.push(`${route.method} ${route.url}`);
    }
    expect(checked).toContain('POST /v1/orders/');
  });

  it('refuses every authenticated route without credentials (401) and with the other kind of key (403)', async () => {
    const keys: Record<string, TestAccount> = {
      merchant: await harness.merchant('Kind walker'),
      partner: await harness.partner('Kind walker'),
    };
    const wrongKind: Record<string, [TestAccount, string]> = {
      merchant: [keys.partner!, 'merchant_key_required'],
      partner: [keys.merchant!, 'partner_key_required'],
    };
    const checked: string[] = [];
    for (const route of routes) {
      const kind = String(route.config.auth);
      if (kind === 'none' || kind === 'undefined' || route.method === 'HEAD') continue;
      const url = route.url.replace(/:[A-Za-z_]+/g, 'x');
      const anonymous = await harness.request(route.method as 'GET', url);
      expect(anonymous.statusCode, `${route.method} ${route.url} without credentials`).toBe(401);
      // Routes open to both kinds of key ('any') have no wrong kind.
      const wrong = wrongKind[kind];
      if (!wrong) continue;
      const crossed = await harness.request(route.method as 'GET', url, { auth: wrong[0] });
      expect(
        crossed.statusCode,
        `${route.method} ${route.url} with a ${kind === 'merchant' ? 'partner' : 'merchant'} key`,
      ).toBe(403);
      expect(crossed.json().error.code).toBe(wrong[1]);
      checked.push(`${route.method} ${route.url}`);
    }
    expect(checked).toEqual(expect.arrayContaining(['POST /v1/orders/', 'GET /v1/orders/:id/']));
  });
});
