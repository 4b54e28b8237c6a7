import fs from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, expect, it } from 'vitest';
import { TYPES_FILE, typesFor } from '../../sdk/node/scripts/generate-types.js';
import { ERROR_CATALOGUE } from '../../src/domain/errors.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { choose, openPage } from '../helpers/payments.js';

// The OpenAPI document Kosh serves: valid, complete, named, and true to what the API answers.
describeEachDatabase('OpenAPI document', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant();
  });
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

  it('names every operation and every resource, with the error codes as an enum', async () => {
    const document = (await harness().request('GET', '/v1/openapi.json')).json();
    const ids = Object.values(document.paths).flatMap((methods) =>
      Object.values(methods as Record<string, { operationId?: string }>).map(
        (operation) => operation.operationId,
      ),
    );
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const schemas = document.components.schemas;
    for (const name of [
      'Order',
      'Payment',
      'PaymentAction',
      'Methods',
      'Refund',
      'Event',
      'WebhookEndpoint',
      'ConnectorAccount',
      'Merchant',
      'CreatePaymentRequest',
      'Error',
    ]) {
      expect(schemas[name], name).toBeDefined();
    }
    expect(schemas.Error.properties.error.properties.code.enum).toEqual(Object.keys(ERROR_CATALOGUE));
    const s2s = document.paths['/v1/payments/create/s2s/'].post;
    expect(s2s.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/CreatePaymentRequest',
    });
    expect(schemas.CreatePaymentRequest.discriminator.propertyName).toBe('method');
    expect(schemas.PaymentAction.discriminator.propertyName).toBe('action');
    expect(document.paths['/v1/orders/{id}/'].get.responses['200'].description).toBe('OK');
    expect(document.paths['/v1/orders/{id}/'].get.responses['429']).toBeDefined();
  });

  it('types the SDK from this very document (npm run sdk:types after a change)', async () => {
    const document = (await harness().request('GET', '/v1/openapi.json')).json();
    expect(await typesFor(document)).toBe(fs.readFileSync(TYPES_FILE, 'utf8'));
  });

  it('answers every example request as its documented response schema says', async () => {
    const document = (await harness().request('GET', '/v1/openapi.json')).json();
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema({ $id: 'kosh', components: document.components });
    const validatorOf = (schema: unknown) =>
      ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"kosh#/components/')));
    const { schemas } = document.components;
    const order = (
      await harness().request('POST', '/v1/orders/', {
        auth: merchant,
        json: { amount: 5000, currency: 'INR' },
      })
    ).json().data;
    const sent: string[] = [];
    const send = async (path: string, example: Record<string, unknown>) => {
      const operation = document.paths[path].post;
      const response = await harness().request('POST', path.replace('{id}', String(example.__id ?? '')), {
        auth: merchant,
        json: Object.fromEntries(Object.entries(example).filter(([key]) => key !== '__id')),
      });
      expect(response.statusCode, `${path}: ${response.body}`).toBe(200);
      const validate = validatorOf(operation.responses['200'].content['application/json'].schema);
      expect(validate(response.json()), JSON.stringify(validate.errors)).toBe(true);
      sent.push(path);
      return response.json();
    };
    await send('/v1/orders/', schemas.CreateOrderRequest.examples[0]);
    await send('/v1/payments/create/s2s/', {
      ...schemas.WalletPaymentRequest.examples[0],
      order_id: order.id,
    });
    const started = await send('/v1/payments/create/s2s/', {
      ...schemas.NetbankingPaymentRequest.examples[0],
      order_id: order.id,
    });
    const token = await openPage(harness(), started.payment_id);
    await choose(harness(), started.payment_id, token, 'success');
    await send('/v1/payments/{id}/refunds/', {
      ...schemas.CreateRefundRequest.examples[0],
      __id: started.payment_id,
    });
    await send('/v1/webhooks/', schemas.CreateWebhookEndpointRequest.examples[0]);
    expect(sent).toHaveLength(5);
    // Every fetch answer matches its schema too.
    for (const [path, id] of [
      ['/v1/orders/{id}/', order.id],
      ['/v1/payments/{id}/', started.payment_id],
    ] as const) {
      const response = await harness().request('GET', path.replace('{id}', id), { auth: merchant });
      const validate = validatorOf(
        document.paths[path].get.responses['200'].content['application/json'].schema,
      );
      expect(validate(response.json()), JSON.stringify(validate.errors)).toBe(true);
    }
    const methods = await harness().request('GET', '/v1/payments/methods/', { auth: merchant });
    expect(validatorOf({ $ref: '#/components/schemas/Methods' })(methods.json())).toBe(true);
    // The documented example says what the sandbox says: no cards, no UPI.
    const example =
      document.paths['/v1/payments/methods/'].get.responses['200'].content['application/json'].example;
    expect(validatorOf({ $ref: '#/components/schemas/Methods' })(example)).toBe(true);
    expect(example.upi).toEqual(methods.json().upi);
    expect(example.card_networks).toEqual(methods.json().card_networks);
    const s2sExample =
      document.paths['/v1/payments/create/s2s/'].post.requestBody.content['application/json'].example;
    expect(s2sExample).toEqual(schemas.NetbankingPaymentRequest.examples[0]);
  });

  it('serves a browsable reference at /docs', async () => {
    const response = await harness().request('GET', '/docs/');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/text\/html/);
    expect(response.body).toContain('swagger');
    expect(response.headers['content-security-policy']).toContain("connect-src 'self'");
    expect(response.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
    const document = (await harness().request('GET', '/v1/openapi.json')).json();
    // "Try it out" calls the address the page was opened at, whatever KOSH_PUBLIC_URL says.
    expect(document.servers[0].url).toBe('/');
  });
});
