import type { Harness, TestAccount } from '../helpers/harness.js';
import { BANK, proprietorBody } from '../helpers/onboarding.js';
import { createOrder, paymentBody } from '../helpers/payments.js';

/**
 * The string fields of every write route, which the injection suite fills with hostile values. A
 * new route joins the suite by adding a row here.
 */

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
const CRLF = 'line\r\nInjected-Header: yes';
/** A direction override: names people are shown refuse it with CRLF (tested in onboarding). */
const OVERRIDE = '\u202eevil\u202c';
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
    excludes: [CRLF, OVERRIDE],
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
        excludes: [CRLF, OVERRIDE],
        body: (value) => ({ ...BANK, beneficiary_name: value }),
        read: (data) => (data.bank_account as Record<string, unknown>).beneficiary_name,
      },
    ],
  },
];
