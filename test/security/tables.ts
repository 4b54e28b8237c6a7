import type { LightMyRequestResponse } from 'fastify';
import { createCheckoutRepo } from '../../src/modules/checkout/checkout.repo.js';
import { createPaymentsRepo } from '../../src/modules/payments/payments.repo.js';
import type { Harness, TestAccount } from '../helpers/harness.js';
import { BANK, proprietorBody, uploadDocument } from '../helpers/onboarding.js';
import { createOrder, paymentBody } from '../helpers/payments.js';
import { recordEvent } from '../helpers/webhook-events.js';
import { PUBLIC_ADDRESS } from './url-tables.js';

/**
 * Tables the security suite iterates. A new endpoint joins the suite by adding a row here:
 * payments, webhooks, events and documents add theirs as they land.
 */

/** What `create` made: its id, a string that appears only in it, and anything else actions need. */
export interface CreatedObject {
  id: string;
  marker: string;
  /** Related ids (the order of a payment) for the URLs of `actions`. */
  related?: Record<string, string>;
  /** Secrets the creation revealed (a webhook's whsec_), which the logs must never hold. */
  secrets?: string[];
}

/** A request on an object other than its fetch: a sub-resource, a change, a deletion. */
export interface ObjectAction {
  name: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url(object: CreatedObject): string;
  json?: unknown;
}

/** A tenant-owned object: how to create one as an account and where to fetch and list it. */
export interface TenantResource {
  name: string;
  /** Creates an object as `account`; returns its id and a string that appears only in it. */
  create(harness: Harness, account: TestAccount): Promise<CreatedObject>;
  fetchUrl(id: string): string;
  listUrl?: string;
  /** A well-formed id of this kind that belongs to nobody. */
  missingId: string;
  /** Every other request on one object: each must answer an outsider 404 and change nothing. */
  actions?: ObjectAction[];
}

/** The host the suites register live webhook endpoints on; `usePublicWebhookHost` makes it resolve. */
export const PUBLIC_WEBHOOK_HOST = 'hooks.merchant.example';

/**
 * Makes PUBLIC_WEBHOOK_HOST resolve to a public address (live endpoints need one) without any
 * network; every other name keeps the resolver it had.
 */
export function usePublicWebhookHost(harness: Harness): void {
  const resolver = harness.container.resolver;
  const original = resolver.lookup;
  if ((original as { kosh?: boolean }).kosh) return;
  resolver.lookup = Object.assign(
    async (hostname: string) =>
      hostname === PUBLIC_WEBHOOK_HOST ? [{ address: PUBLIC_ADDRESS, family: 4 }] : original(hostname),
    { kosh: true },
  );
}

const modeOf = (account: TestAccount) => account.credentials.mode;

/**
 * Live payments need a bank connector, which this Kosh does not have yet: the row a live connector
 * would make is written through the payments repo's insert and the orders service's start, so isolation of live payments is still proven.
 */
async function livePayment(harness: Harness, account: TestAccount, orderId: string, marker: string) {
  const id = harness.container.ids.next('pay');
  const payment = createPaymentsRepo().startInsert({
    id,
    accountId: account.id,
    mode: 'live',
    orderId,
    amount: 5000,
    currency: 'INR',
    method: 'netbanking',
    bank: 'ICIC',
    wallet: null,
    instrumentName: 'ICICI Bank',
    email: 'asha@example.com',
    contact: '+919876543210',
    name: 'Asha Rao',
    description: marker,
    metadata: { note: marker },
    returnUrl: 'https://merchant.example/return',
    connector: 'live-bank',
    connectorAccountId: 'ca_live_bank',
    createdAt: harness.clock.now(),
    initiation: null,
    upi: null,
  });
  const started = await harness.container.services.orders.startPayment(
    harness.container.db,
    {
      accountId: account.id,
      mode: 'live',
      orderId,
      amount: 5000,
      currency: 'INR',
      returnUrl: 'https://merchant.example/return',
      bankDetails: { method: 'netbanking', bank: 'ICIC', bank_name: 'ICICI Bank' },
      at: harness.clock.now(),
    },
    payment,
  );
  if (!started?.started) throw new Error(`The live payment on ${orderId} was not recorded.`);
  return { id, marker, related: { order: orderId } };
}

let serial = 0;

export const TENANT_RESOURCES: TenantResource[] = [
  {
    name: 'order',
    async create(harness, account) {
      const marker = `secret-receipt-${++serial}`;
      const reply = await harness.request('POST', '/v1/orders/', {
        auth: account,
        json: { amount: 4321, currency: 'INR', receipt: marker, metadata: { note: marker } },
      });
      if (reply.statusCode !== 200) throw new Error(`order create failed: ${reply.body}`);
      return { id: reply.json().data.id, marker };
    },
    fetchUrl: (id) => `/v1/orders/${id}/`,
    listUrl: '/v1/orders/',
    missingId: 'order_00000000000000000000000000',
  },
  {
    name: 'payment',
    async create(harness, account) {
      const marker = `secret-payment-${++serial}`;
      const orderId = await createOrder(harness, account);
      if (modeOf(account) === 'live') return { ...(await livePayment(harness, account, orderId, marker)) };
      const reply = await harness.request('POST', '/v1/payments/create/s2s/', {
        auth: account,
        json: paymentBody(orderId, { description: marker, metadata: { note: marker } }),
      });
      if (reply.statusCode !== 200) throw new Error(`payment create failed: ${reply.body}`);
      return { id: reply.json().payment_id, marker, related: { order: orderId } };
    },
    fetchUrl: (id) => `/v1/payments/${id}/`,
    listUrl: '/v1/payments/',
    missingId: 'pay_00000000000000000000000000',
    actions: [
      {
        name: "the order's payments",
        method: 'GET',
        url: (object) => `/v1/orders/${object.related?.order ?? object.id}/payments/`,
      },
    ],
  },
  {
    name: 'webhook endpoint',
    async create(harness, account) {
      const marker = `secret-endpoint-${++serial}`;
      usePublicWebhookHost(harness);
      const url =
        modeOf(account) === 'live' ? `https://${PUBLIC_WEBHOOK_HOST}/kosh` : 'http://127.0.0.1:9/kosh';
      const reply = await harness.request('POST', '/v1/webhooks/', {
        auth: account,
        json: { url: `${url}?tag=${marker}`, description: marker },
      });
      if (reply.statusCode !== 200) throw new Error(`webhook create failed: ${reply.body}`);
      const { id, secret } = reply.json().data;
      return { id, marker, secrets: [secret] };
    },
    fetchUrl: (id) => `/v1/webhooks/${id}/`,
    listUrl: '/v1/webhooks/',
    missingId: 'whk_00000000000000000000000000',
    actions: [
      {
        name: 'PATCH',
        method: 'PATCH',
        url: (object) => `/v1/webhooks/${object.id}/`,
        json: { description: 'taken over', url: 'https://attacker.example/steal', enabled: false },
      },
      { name: 'DELETE', method: 'DELETE', url: (object) => `/v1/webhooks/${object.id}/` },
      { name: 'rotate-secret', method: 'POST', url: (object) => `/v1/webhooks/${object.id}/rotate-secret/` },
    ],
  },
  {
    name: 'event',
    async create(harness, account) {
      const marker = `secret-event-${++serial}`;
      const event = await recordEvent(harness, account, {
        mode: modeOf(account),
        data: { payment: { id: 'pay_marker', description: marker } },
      });
      return { id: event.id, marker };
    },
    fetchUrl: (id) => `/v1/events/${id}/`,
    listUrl: '/v1/events/',
    missingId: 'evt_00000000000000000000000000',
    actions: [
      { name: 'deliveries', method: 'GET', url: (object) => `/v1/events/${object.id}/deliveries/` },
      { name: 'redeliver', method: 'POST', url: (object) => `/v1/events/${object.id}/redeliver/`, json: {} },
    ],
  },
  {
    name: 'checkout session',
    async create(harness, account) {
      // The order id appears only in this session's answer.
      const orderId = await createOrder(harness, account);
      const body = { order_id: orderId, return_url: 'https://merchant.example/return' };
      if (modeOf(account) === 'live') {
        // No live connector here, so no live method to offer: the row is written as the API would.
        const now = harness.clock.now();
        const row = await createCheckoutRepo().insert(harness.container.db, {
          id: harness.container.ids.next('cs'),
          accountId: account.id,
          mode: 'live',
          orderId,
          returnUrl: body.return_url,
          customer: null,
          methods: ['upi'],
          expiresAt: new Date(now.getTime() + 30 * 60_000),
          createdAt: now,
        });
        return { id: row.id, marker: orderId };
      }
      const reply = await harness.request('POST', '/v1/checkout/sessions/', { auth: account, json: body });
      if (reply.statusCode !== 200) throw new Error(`checkout session create failed: ${reply.body}`);
      return { id: reply.json().data.id, marker: orderId };
    },
    fetchUrl: (id) => `/v1/checkout/sessions/${id}/`,
    missingId: 'cs_00000000000000000000000000',
  },
];

/** A string field a caller can set: where it goes in the request and where it comes back. */
export interface StringField {
  name: string;
  maxLength: number;
  /** Hostile values this field refuses with a 400 instead of storing (tested separately). */
  excludes?: string[];
  /** Values the field's documented format can hold at all (an email cannot hold a space). */
  accepts?(value: string): boolean;
  /** The request body with `value` in this field; `context` is what the route's `setup` made. */
  body(value: string, context: string): Record<string, unknown>;
  /** The field's value in the created object (`data` of the response), to compare with `sent`. */
  read(data: Record<string, unknown>, sent: string): unknown;
}

export interface StringFieldRoute {
  route: string;
  /** Which kind of key calls the route (merchant unless said). */
  auth?: 'merchant' | 'partner';
  /** Makes what each request needs first (the order of a payment); passed to `body` and `url`. */
  setup?(harness: Harness, account: TestAccount): Promise<string>;
  /** The URL to POST to, when it depends on `setup` (otherwise `route`). */
  url?(context: string): string;
  /** The created object's `data` from the response, when the reply is not `{ data }`. */
  created?(body: Record<string, unknown>): Record<string, unknown>;
  /** False when the create reply does not echo the fields: only the fetched object is compared. */
  echoes?: boolean;
  /** URL to fetch the created object again, from its response data. */
  fetchUrl(data: Record<string, unknown>): string;
  fields: StringField[];
}

const ORDER_BASE = { amount: 5000, currency: 'INR' };
const PORTAL = '/v1/api-portal';
const CRLF = 'line\r\nInjected-Header: yes';
const LOCAL_HOOK = 'http://127.0.0.1:9/hook';

function merchantField(
  name: string,
  maxLength: number,
  change: (value: string) => Record<string, unknown>,
): StringField {
  const path = name.split(' ');
  return {
    name,
    maxLength,
    body: (value) => proprietorBody(change(value)),
    read: (data) =>
      path.length === 2
        ? (data.address as Record<string, unknown>)[path[1] as string]
        : data[path[0] as string],
  };
}

export const STRING_FIELD_ROUTES: StringFieldRoute[] = [
  {
    route: '/v1/orders/',
    fetchUrl: (data) => `/v1/orders/${data.id}/`,
    fields: [
      {
        name: 'receipt',
        maxLength: 40,
        body: (value) => ({ ...ORDER_BASE, receipt: value }),
        read: (data) => data.receipt,
      },
      {
        name: 'metadata value',
        maxLength: 500,
        body: (value) => ({ ...ORDER_BASE, metadata: { note: value } }),
        read: (data) => (data.metadata as Record<string, unknown>).note,
      },
      {
        name: 'metadata key',
        maxLength: 40,
        body: (value) => ({ ...ORDER_BASE, metadata: { [value]: 'v' } }),
        // `__proto__` as a key is refused outright (see the refusal cases), never stored.
        excludes: ['__proto__'],
        read: (data) => Object.keys(data.metadata as Record<string, unknown>)[0],
      },
    ],
  },
  {
    route: '/v1/payments/create/s2s/',
    setup: (harness, account) => createOrder(harness, account),
    created: (body) => ({ id: body.payment_id }),
    echoes: false,
    fetchUrl: (data) => `/v1/payments/${data.id}/`,
    fields: [
      {
        name: 'name',
        maxLength: 100,
        // Control characters (CR, LF) are refused in a customer name: it is printed on pages.
        excludes: [CRLF],
        body: (value, order) => paymentBody(order, { name: value }),
        read: (data) => data.name,
      },
      {
        name: 'email local part',
        maxLength: 60,
        // The format: no whitespace and no @ in the local part; every other character is data.
        accepts: (value) => !/[\s@]/.test(value),
        body: (value, order) => paymentBody(order, { email: `${value}@example.com` }),
        read: (data) => String(data.email).replace(/@example\.com$/, ''),
      },
      {
        name: 'description',
        maxLength: 255,
        excludes: [CRLF],
        body: (value, order) => paymentBody(order, { description: value }),
        read: (data) => data.description,
      },
      {
        name: 'metadata value',
        maxLength: 500,
        body: (value, order) => paymentBody(order, { metadata: { note: value } }),
        read: (data) => (data.metadata as Record<string, unknown>).note,
      },
      {
        name: 'metadata key',
        maxLength: 40,
        excludes: ['__proto__'],
        body: (value, order) => paymentBody(order, { metadata: { [value]: 'v' } }),
        read: (data) => Object.keys(data.metadata as Record<string, unknown>)[0],
      },
    ],
  },
  {
    route: '/v1/webhooks/',
    fetchUrl: (data) => `/v1/webhooks/${data.id}/`,
    fields: [
      {
        name: 'description',
        maxLength: 500,
        body: (value) => ({ url: LOCAL_HOOK, description: value }),
        read: (data) => data.description,
      },
      {
        name: 'url query',
        maxLength: 500,
        body: (value) => ({ url: `${LOCAL_HOOK}?q=${value}` }),
        // A URL is stored in its WHATWG-normalised form (the form Kosh connects to), never rewritten
        // otherwise: the value reads back when the stored URL is exactly that form.
        read: (data, sent) => (data.url === new URL(`${LOCAL_HOOK}?q=${sent}`).href ? sent : data.url),
      },
    ],
  },
  {
    route: '/v1/api-portal/merchants/',
    auth: 'partner',
    fetchUrl: (data) => `/v1/api-portal/merchants/${data.id}/`,
    fields: [
      merchantField('legal_name', 200, (value) => ({ legal_name: value })),
      merchantField('display_name', 100, (value) => ({ display_name: value })),
      ...(['line1', 'line2', 'city', 'state'] as const).map((line) =>
        merchantField(`address ${line}`, line === 'city' || line === 'state' ? 50 : 100, (value) => ({
          address: { ...(proprietorBody().address as Record<string, string>), [line]: value },
        })),
      ),
    ],
  },
  {
    route: '/v1/api-portal/merchants/bank-details/<mid>/',
    auth: 'partner',
    async setup(harness, account) {
      const reply = await harness.request('POST', '/v1/api-portal/merchants/', {
        auth: account,
        json: proprietorBody(),
      });
      if (reply.statusCode !== 200) throw new Error(`merchant create failed: ${reply.body}`);
      return reply.json().data.id;
    },
    url: (mid) => `/v1/api-portal/merchants/bank-details/${mid}/`,
    fetchUrl: (data) => `/v1/api-portal/merchants/${data.id}/`,
    fields: [
      {
        name: 'beneficiary_name',
        maxLength: 120,
        // Whitespace runs are folded to one space (the name is compared with the bank's records).
        excludes: [CRLF],
        body: (value) => ({ ...BANK, beneficiary_name: value }),
        read: (data) => (data.bank_account as Record<string, unknown>).beneficiary_name,
      },
    ],
  },
];

/** Values that break naive SQL, HTML, shell, path and format handling; each must be stored as text. */
export const HOSTILE_STRINGS: string[] = [
  "' OR '1'='1",
  "'; DROP TABLE orders; --",
  '"; DELETE FROM accounts WHERE ""="',
  "1' UNION SELECT secret_hash FROM api_keys --",
  '$1 $2 ::text',
  '\\x00\\\\',
  '"><script>alert(1)</script>',
  "<img src=x onerror='alert(1)'>",
  'javascript:alert(document.cookie)',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, on purpose.
  '{{7*7}} ${7*7} <%= 7*7 %>',
  '../../../../etc/passwd',
  '%s%n%x %00 %27',
  '$(rm -rf /) `id`',
  '__proto__',
  'constructor',
  'Ω≈ç√∫ 日本語 🙂 עברית',
  '\u202eevil\u202c',
  'line\r\nInjected-Header: yes',
];

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** Short keys so that 10,000 of them fit under the body limit and reach the validator. */
const manyKeys = (count: number) =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i.toString(36)}`, 0]));

/** Hostile bodies for a JSON/form write route: each must be a 4xx, quickly, and change nothing. */
export const HOSTILE_BODIES: [string, number, string, { json?: unknown; form?: string; raw?: string }][] = [
  ['an oversized JSON body', 413, 'body_too_large', { raw: `{"receipt":"${'x'.repeat(200 * 1024)}"}` }],
  ['an oversized form body', 413, 'body_too_large', { form: `receipt=${'x'.repeat(200 * 1024)}` }],
  [
    'JSON nested 20,000 levels',
    400,
    'invalid_field',
    { raw: `{"amount":${nested(20_000)},"currency":"INR"}` },
  ],
  [
    'JSON nested 20,000 levels in metadata',
    400,
    'invalid_field',
    { raw: `{"amount":5000,"currency":"INR","metadata":${nested(20_000)}}` },
  ],
  [
    'objects nested 5,000 levels',
    400,
    'unknown_field',
    { raw: `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}` },
  ],
  [
    'a 10,000-key object',
    400,
    'unknown_field',
    { json: { amount: 5000, currency: 'INR', ...manyKeys(10_000) } },
  ],
  [
    'a 10,000-key metadata',
    400,
    'invalid_field',
    { json: { amount: 5000, currency: 'INR', metadata: manyKeys(10_000) } },
  ],
  [
    'a form with 10,000 fields',
    400,
    'invalid_body',
    { form: Array.from({ length: 10_000 }, (_, i) => `k${i.toString(36)}=0`).join('&') },
  ],
  [
    'a 90,000-character receipt',
    400,
    'invalid_field',
    { json: { amount: 5000, currency: 'INR', receipt: 'r'.repeat(90_000) } },
  ],
  [
    'a 90,000-character metadata value',
    400,
    'invalid_field',
    { json: { amount: 5000, currency: 'INR', metadata: { note: 'n'.repeat(90_000) } } },
  ],
  [
    'a 30,000-character metadata key',
    400,
    'invalid_field',
    { json: { amount: 5000, currency: 'INR', metadata: { ['k'.repeat(30_000)]: 1 } } },
  ],
  [
    'a 50,000-digit amount',
    400,
    'invalid_field',
    { raw: `{"amount":${'9'.repeat(50_000)},"currency":"INR"}` },
  ],
  ['an array of 20,000 items', 400, 'invalid_body', { raw: `[${Array(20_000).fill('1').join(',')}]` }],
];

/** Every api-portal request on one merchant: another partner must get 404 and change nothing. */
export const PORTAL_MERCHANT_ACTIONS: [
  string,
  (harness: Harness, partner: TestAccount, mid: string) => Promise<LightMyRequestResponse>,
][] = [
  ['GET merchant', (h, auth, mid) => h.request('GET', `${PORTAL}/merchants/${mid}/`, { auth })],
  [
    'POST bank-details',
    (h, auth, mid) => h.request('POST', `${PORTAL}/merchants/bank-details/${mid}/`, { auth, json: BANK }),
  ],
  ['POST kyc-document', (h, auth, mid) => uploadDocument(h, auth, mid, 'pan')],
  [
    'GET kyc-documents',
    (h, auth, mid) => h.request('GET', `${PORTAL}/merchants/${mid}/kyc-documents/`, { auth }),
  ],
  [
    'POST generate-vpa',
    (h, auth, mid) => h.request('POST', `${PORTAL}/generate-vpa/${mid}/`, { auth, json: {} }),
  ],
  ['GET vpas', (h, auth, mid) => h.request('GET', `${PORTAL}/merchants/${mid}/vpas/`, { auth })],
  [
    'POST keys',
    (h, auth, mid) => h.request('POST', `${PORTAL}/merchants/${mid}/keys/`, { auth, json: { mode: 'test' } }),
  ],
  [
    'PATCH methods',
    (h, auth, mid) =>
      h.request('PATCH', `${PORTAL}/merchants/${mid}/methods/`, {
        auth,
        json: { netbanking: { HDFC: false } },
      }),
  ],
];
