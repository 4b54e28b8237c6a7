import { isDeepStrictEqual } from 'node:util';

/**
 * The OpenAPI document as a source for generators. Routes keep their schemas inline (that is what
 * validates and serialises requests); this pass, run once when the document is built, adds what a
 * reader and a code generator need: an operationId per operation, named component schemas for the
 * resources (every inline schema equal to a resource becomes a `$ref`), the S2S body split by
 * `method` and the next actions by `action`, response descriptions, and examples the server
 * accepts. The document is never looser than the server: where it differs it is stricter.
 */

type Json = unknown;
type JsonObject = Record<string, Json>;

const isObject = (value: Json): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `METHOD /path/{param}/` → operationId. A test checks that every documented operation has one. */
export const OPERATION_IDS: Record<string, string> = {
  'POST /v1/orders/': 'createOrder',
  'GET /v1/orders/': 'listOrders',
  'GET /v1/orders/{id}/': 'retrieveOrder',
  'GET /v1/orders/{id}/payments/': 'listOrderPayments',
  'GET /v1/payments/methods/': 'listPaymentMethods',
  'POST /v1/payments/create/s2s/': 'createS2SPayment',
  'GET /v1/payments/return-signing-secret/': 'retrieveReturnSigningSecret',
  'GET /v1/payments/{id}/': 'retrievePayment',
  'GET /v1/payments/': 'listPayments',
  'POST /v1/payments/{id}/refunds/': 'createRefund',
  'GET /v1/payments/{id}/refunds/': 'listPaymentRefunds',
  'GET /v1/refunds/{id}/': 'retrieveRefund',
  'GET /v1/refunds/': 'listRefunds',
  'POST /v1/checkout/sessions/': 'createCheckoutSession',
  'GET /v1/checkout/sessions/{id}/': 'retrieveCheckoutSession',
  'GET /checkout/{id}/': 'showCheckoutPage',
  'POST /checkout/{id}/': 'submitCheckoutPage',
  'POST /v1/connector-accounts/': 'createConnectorAccount',
  'GET /v1/connector-accounts/': 'listConnectorAccounts',
  'GET /v1/connector-accounts/{id}/': 'retrieveConnectorAccount',
  'DELETE /v1/connector-accounts/{id}/': 'deleteConnectorAccount',
  'GET /v1/keys/': 'listKeys',
  'POST /v1/keys/{key}/roll/': 'rollKey',
  'DELETE /v1/keys/{key}/': 'revokeKey',
  'GET /v1/api-portal/merchants/{mid}/keys/': 'listMerchantKeys',
  'POST /v1/api-portal/merchants/{mid}/keys/': 'createMerchantKey',
  'POST /v1/api-portal/merchants/{mid}/keys/{key}/roll/': 'rollMerchantKey',
  'DELETE /v1/api-portal/merchants/{mid}/keys/{key}/': 'revokeMerchantKey',
  'GET /v1/payments/{id}/authentication/': 'showAuthenticationPage',
  'POST /v1/payments/{id}/authentication/': 'submitAuthenticationPage',
  'GET /v1/payments/{id}/upi-status/': 'retrieveUpiPageStatus',
  'GET /v1/payments/{id}/upi-simulator/': 'showUpiSimulator',
  'POST /v1/payments/{id}/upi-simulator/': 'submitUpiSimulator',
  'GET /v1/payments/{id}/callback/': 'receiveProviderReturn',
  'POST /v1/payments/{id}/callback/': 'receiveProviderReturnPost',
  'POST /v1/connectors/{connector}/webhooks/{account}/': 'receiveProviderWebhook',
  'POST /v1/webhooks/': 'createWebhookEndpoint',
  'GET /v1/webhooks/': 'listWebhookEndpoints',
  'GET /v1/webhooks/{id}/': 'retrieveWebhookEndpoint',
  'PATCH /v1/webhooks/{id}/': 'updateWebhookEndpoint',
  'DELETE /v1/webhooks/{id}/': 'deleteWebhookEndpoint',
  'POST /v1/webhooks/{id}/rotate-secret/': 'rotateWebhookSecret',
  'GET /v1/events/': 'listEvents',
  'GET /v1/events/{id}/': 'retrieveEvent',
  'GET /v1/events/{id}/deliveries/': 'listEventDeliveries',
  'POST /v1/events/{id}/redeliver/': 'redeliverEvent',
  'GET /v1/api-portal/business-categories/': 'listBusinessCategories',
  'POST /v1/api-portal/merchants/': 'createMerchant',
  'GET /v1/api-portal/merchants/': 'listMerchants',
  'GET /v1/api-portal/merchants/{mid}/': 'retrieveMerchant',
  'POST /v1/api-portal/merchants/bank-details/{mid}/': 'setMerchantBankDetails',
  'PATCH /v1/api-portal/merchants/{mid}/methods/': 'updateMerchantMethods',
  'POST /v1/api-portal/merchants/kyc-document/{mid}/': 'uploadKycDocument',
  'GET /v1/api-portal/merchants/{mid}/kyc-documents/': 'listKycDocuments',
  'GET /v1/api-portal/merchants/{mid}/kyc-documents/{id}/file': 'downloadKycDocument',
  'POST /v1/api-portal/generate-vpa/{mid}/': 'generateVpa',
  'GET /v1/api-portal/merchants/{mid}/vpas/': 'listVpas',
};

/** Where each named resource appears first: operation, then a path into its 200 answer or body. */
const RESOURCES: [name: string, operation: string, where: 'response' | 'request', path: string[]][] = [
  ['Order', 'GET /v1/orders/{id}/', 'response', ['properties', 'data']],
  ['Payment', 'GET /v1/payments/{id}/', 'response', ['properties', 'data']],
  ['Refund', 'GET /v1/refunds/{id}/', 'response', ['properties', 'data']],
  ['CheckoutSession', 'GET /v1/checkout/sessions/{id}/', 'response', ['properties', 'data']],
  ['Event', 'GET /v1/events/{id}/', 'response', ['properties', 'data']],
  ['Delivery', 'GET /v1/events/{id}/deliveries/', 'response', ['properties', 'data', 'items']],
  ['WebhookEndpoint', 'GET /v1/webhooks/{id}/', 'response', ['properties', 'data']],
  ['ConnectorAccount', 'GET /v1/connector-accounts/{id}/', 'response', ['properties', 'data']],
  ['ApiKey', 'GET /v1/keys/', 'response', ['properties', 'data', 'items']],
  ['Merchant', 'GET /v1/api-portal/merchants/{mid}/', 'response', ['properties', 'data']],
  ['Methods', 'GET /v1/payments/methods/', 'response', []],
  ['CreatePaymentResponse', 'POST /v1/payments/create/s2s/', 'response', []],
  ['CreateOrderRequest', 'POST /v1/orders/', 'request', []],
  ['CreatePaymentRequest', 'POST /v1/payments/create/s2s/', 'request', []],
  ['CreateRefundRequest', 'POST /v1/payments/{id}/refunds/', 'request', []],
  ['CreateWebhookEndpointRequest', 'POST /v1/webhooks/', 'request', []],
  ['CreateMerchantRequest', 'POST /v1/api-portal/merchants/', 'request', []],
];

const STATUS_TEXT: Record<string, string> = {
  '200': 'OK',
  '302': 'Found: the browser is sent on',
  '400': 'The request is wrong: the error says which field and why',
  '401': 'Missing or wrong credentials',
  '403': 'This key may not do this',
  '404': 'No such object for this account and mode, or no such route',
  '408': 'The request did not arrive in time',
  '409':
    'A request with this Idempotency-Key is still in flight, or the object is in a state that refuses this',
  '413': 'The body is too large',
  '415': 'The body is neither JSON nor a form',
  '422': 'The Idempotency-Key was used with a different request',
  '429': 'Too many requests: wait the seconds Retry-After gives',
  '431': 'The headers are too large',
  '500': 'Kosh failed: retry with the same Idempotency-Key',
  '503': 'A database or provider cannot be reached: retry with the same Idempotency-Key',
};

/** Examples the server accepts (a test sends each one and checks the answer against the document). */
export const EXAMPLES = {
  CreateOrderRequest: {
    amount: 5000,
    currency: 'INR',
    receipt: 'order_rcpt_1042',
    metadata: { cart: 'c_77' },
  },
  NetbankingPaymentRequest: {
    amount: 5000,
    currency: 'INR',
    order_id: 'order_01m86za5dn3bq3ht8d8hgsw4jr',
    method: 'netbanking',
    bank: 'ICIC',
    name: 'Asha Rao',
    email: 'asha@example.com',
    contact: '+919876543210',
    return_url: 'https://shop.example.com/return',
    description: 'Two notebooks',
  },
  WalletPaymentRequest: {
    amount: 5000,
    currency: 'INR',
    order_id: 'order_01m86za5dn3bq3ht8d8hgsw4jr',
    method: 'wallet',
    wallet: 'AIRTELMONEY',
    name: 'Asha Rao',
    email: 'asha@example.com',
    contact: '+919876543210',
    return_url: 'https://shop.example.com/return',
  },
  UpiPaymentRequest: {
    amount: 5000,
    currency: 'INR',
    order_id: 'order_01m86za5dn3bq3ht8d8hgsw4jr',
    method: 'upi',
    upi: { flow: 'qr', expiry_minutes: 10 },
    name: 'Asha Rao',
    email: 'asha@example.com',
    contact: '+919876543210',
    return_url: 'https://shop.example.com/return',
  },
  CreateRefundRequest: { amount: 2000, metadata: { reason: 'One notebook returned' } },
  /** As the sandbox answers: UPI intent and QR, net banking and wallets; no cards, no collect. */
  Methods: {
    entity: 'methods',
    card_networks: { diners: false, amex: false, mastercard: false, rupay: false, visa: false },
    card_type: { debit: false, credit: false, prepaid: false },
    card_subtype: { business: false, consumer: false, premium: false },
    upi: { intent: true, collect: false, payer_account_type: { bank_account: true, credit_card: false } },
    netbanking: { HDFC: 'HDFC Bank', ICIC: 'ICICI Bank', SBIN: 'State Bank of India', UTIB: 'Axis Bank' },
    wallet: { airtelmoney: 'Airtel Payments Bank', payzapp: 'PayZapp', phonepe: 'PhonePe Wallet' },
  },
  CreateWebhookEndpointRequest: {
    url: 'http://localhost:4000/webhooks/kosh',
    enabled_events: ['payment.captured', 'payment.failed', 'order.paid'],
    description: 'Order fulfilment',
  },
};

function at(node: Json, path: string[]): Json {
  let value = node;
  for (const key of path) value = isObject(value) ? value[key] : undefined;
  return value;
}

function jsonSchemaOf(operation: JsonObject, where: 'response' | 'request'): JsonObject | undefined {
  const content =
    where === 'response'
      ? at(operation, ['responses', '200', 'content'])
      : at(operation, ['requestBody', 'content']);
  const schema = at(content, ['application/json', 'schema']);
  return isObject(schema) ? schema : undefined;
}

/** Replaces every subtree equal to a named schema (largest first) by a `$ref` to it. */
function replaceNamed(node: Json, named: [string, JsonObject][], skip?: string): Json {
  if (Array.isArray(node)) return node.map((item) => replaceNamed(item, named));
  if (!isObject(node)) return node;
  for (const [name, schema] of named) {
    if (name !== skip && isDeepStrictEqual(node, schema)) return { $ref: `#/components/schemas/${name}` };
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, replaceNamed(value, named)]));
}

/** The S2S body as three shapes told apart by `method`: a bank, a wallet, or UPI. */
function splitPaymentRequest(body: JsonObject): JsonObject {
  const properties = body.properties as JsonObject;
  const required = body.required as string[];
  const { bank, wallet, upi, method: _method, ...common } = properties;
  const variant = (method: string, fields: string[], schema: Json, description: string, example: Json) => ({
    type: 'object',
    description,
    required: [...required, ...fields],
    properties: { ...common, method: { type: 'string', const: method }, [fields[0] as string]: schema },
    additionalProperties: false,
    examples: [example],
  });
  return {
    NetbankingPaymentRequest: variant(
      'netbanking',
      ['bank', 'return_url'],
      bank,
      'Seed §4.2: a net-banking payment.',
      EXAMPLES.NetbankingPaymentRequest,
    ),
    WalletPaymentRequest: variant(
      'wallet',
      ['wallet', 'return_url'],
      wallet,
      'Seed §4.3: a wallet payment.',
      EXAMPLES.WalletPaymentRequest,
    ),
    UpiPaymentRequest: variant(
      'upi',
      ['upi'],
      upi,
      'A UPI payment: intent, QR or collect (docs/payments.md, "UPI"); return_url optional.',
      EXAMPLES.UpiPaymentRequest,
    ),
    CreatePaymentRequest: {
      oneOf: [
        { $ref: '#/components/schemas/NetbankingPaymentRequest' },
        { $ref: '#/components/schemas/WalletPaymentRequest' },
        { $ref: '#/components/schemas/UpiPaymentRequest' },
      ],
      discriminator: {
        propertyName: 'method',
        mapping: {
          netbanking: '#/components/schemas/NetbankingPaymentRequest',
          wallet: '#/components/schemas/WalletPaymentRequest',
          upi: '#/components/schemas/UpiPaymentRequest',
        },
      },
    },
  };
}

const EXPIRES_AT = {
  type: 'integer',
  description: 'Unix seconds: when the payment stops waiting (it then fails with upi_expired)',
};

/** `next[0]` of a UPI payment: the link, the link and its QR code, or the collect request's wait. */
const UPI_ACTIONS = {
  UpiIntentAction: {
    type: 'object',
    required: ['action', 'url', 'expires_at'],
    properties: {
      action: { type: 'string', const: 'upi_intent' },
      url: { type: 'string', description: 'The upi://pay link: an "Open UPI app" button on a phone' },
      expires_at: EXPIRES_AT,
    },
  },
  UpiQrAction: {
    type: 'object',
    required: ['action', 'url', 'qr_image', 'expires_at'],
    properties: {
      action: { type: 'string', const: 'upi_qr' },
      url: { type: 'string', description: 'The upi://pay link the QR code holds' },
      qr_image: { type: 'string', description: 'The QR code of `url`: a data:image/png;base64 URL' },
      expires_at: EXPIRES_AT,
    },
  },
  UpiCollectAction: {
    type: 'object',
    required: ['action', 'expires_at'],
    properties: { action: { type: 'string', const: 'upi_collect' }, expires_at: EXPIRES_AT },
  },
};

/** `next[]` items: an auto-submitting form to render, a URL to send the browser to, or UPI's. */
const PAYMENT_ACTIONS = {
  HtmlFormAction: {
    type: 'object',
    required: ['action', 'html_content'],
    properties: {
      action: { type: 'string', const: 'html_form' },
      html_content: {
        type: 'string',
        description: 'A complete HTML document that submits itself: render it as is',
      },
    },
  },
  RedirectAction: {
    type: 'object',
    required: ['action', 'url'],
    properties: {
      action: { type: 'string', const: 'redirect' },
      url: { type: 'string', description: 'Absolute URL to send the browser to' },
    },
  },
  ...UPI_ACTIONS,
  PaymentAction: {
    oneOf: [
      { $ref: '#/components/schemas/HtmlFormAction' },
      { $ref: '#/components/schemas/RedirectAction' },
      { $ref: '#/components/schemas/UpiIntentAction' },
      { $ref: '#/components/schemas/UpiQrAction' },
      { $ref: '#/components/schemas/UpiCollectAction' },
    ],
    discriminator: {
      propertyName: 'action',
      mapping: {
        html_form: '#/components/schemas/HtmlFormAction',
        redirect: '#/components/schemas/RedirectAction',
        upi_intent: '#/components/schemas/UpiIntentAction',
        upi_qr: '#/components/schemas/UpiQrAction',
        upi_collect: '#/components/schemas/UpiCollectAction',
      },
    },
  },
};

/** The pass over the document @fastify/swagger built (its `transformObject`). */
export function refineDocument(document: JsonObject): JsonObject {
  const paths = document.paths as Record<string, Record<string, JsonObject>>;
  const operations = Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(
      ([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as const,
    ),
  );
  const byKey = new Map<string, JsonObject>(operations);

  // Named resources, taken from where each first appears.
  const named: [string, JsonObject][] = [];
  for (const [name, key, where, path] of RESOURCES) {
    const operation = byKey.get(key);
    const schema = operation && at(jsonSchemaOf(operation, where), path);
    if (isObject(schema)) named.push([name, structuredClone(schema)]);
  }
  named.sort(([, a], [, b]) => JSON.stringify(b).length - JSON.stringify(a).length);
  const components: Record<string, Json> = {};
  for (const [name, schema] of named) components[name] = replaceNamed(schema, named, name);

  // The error envelope keeps its $id name.
  const existing = (document.components as JsonObject | undefined)?.schemas as JsonObject | undefined;
  const errorSchema = Object.values(existing ?? {}).find(
    (schema) => isObject(schema) && 'error' in (schema.properties as JsonObject),
  );
  const refined = JSON.parse(
    JSON.stringify(replaceNamed(document.paths, named)).replaceAll(
      '#/components/schemas/def-0',
      '#/components/schemas/Error',
    ),
  ) as JsonObject;

  // Requests and answers split by their discriminator.
  const paymentRequest = components.CreatePaymentRequest;
  if (isObject(paymentRequest)) Object.assign(components, splitPaymentRequest(paymentRequest));
  Object.assign(components, PAYMENT_ACTIONS);
  const paymentResponse = components.CreatePaymentResponse;
  if (isObject(paymentResponse)) {
    const next = at(paymentResponse, ['properties', 'next']);
    if (isObject(next)) next.items = { $ref: '#/components/schemas/PaymentAction' };
  }
  for (const [name, example] of Object.entries(EXAMPLES)) {
    const schema = components[name];
    if (isObject(schema)) schema.examples = [example];
  }

  // Examples where Swagger UI shows them: on the request bodies and the methods answer.
  const mediaExample = (content: Json, example: Json) => {
    for (const media of Object.values(isObject(content) ? content : {})) {
      if (isObject(media)) media.example = example;
    }
  };
  const bodies: [string, Json][] = [
    ['POST /v1/orders/', EXAMPLES.CreateOrderRequest],
    ['POST /v1/payments/create/s2s/', EXAMPLES.NetbankingPaymentRequest],
    ['POST /v1/payments/{id}/refunds/', EXAMPLES.CreateRefundRequest],
    ['POST /v1/webhooks/', EXAMPLES.CreateWebhookEndpointRequest],
  ];
  for (const [key, example] of bodies) {
    const [method, path] = key.split(' ') as [string, string];
    mediaExample(at(refined, [path, method.toLowerCase(), 'requestBody', 'content']), example);
  }
  mediaExample(
    at(refined, ['/v1/payments/methods/', 'get', 'responses', '200', 'content']),
    EXAMPLES.Methods,
  );

  // Operation ids, and a description of every answer.
  for (const [path, methods] of Object.entries(refined as Record<string, Record<string, JsonObject>>)) {
    for (const [method, operation] of Object.entries(methods)) {
      operation.operationId ??= OPERATION_IDS[`${method.toUpperCase()} ${path}`];
      for (const [status, response] of Object.entries(
        (operation.responses ?? {}) as Record<string, JsonObject>,
      )) {
        if (
          response.description === 'Default Response' ||
          response.description === 'Every error, whatever the status.'
        )
          response.description = STATUS_TEXT[status] ?? response.description;
      }
    }
  }

  return {
    ...document,
    paths: refined,
    components: {
      ...(document.components as JsonObject),
      schemas: { ...(errorSchema ? { Error: errorSchema } : {}), ...components },
    },
  };
}

/** The wordmark on /docs (Swagger UI shows its own otherwise). */
export const KOSH_LOGO = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="32" viewBox="0 0 120 32">' +
    '<text x="0" y="25" font-family="system-ui,sans-serif" font-size="26" font-weight="700" fill="#ffffff">Kosh</text></svg>',
);
