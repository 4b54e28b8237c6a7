import type { LightMyRequestResponse } from 'fastify';
import { createCheckoutRepo } from '../../src/modules/checkout/checkout.repo.js';
import { createPaymentsRepo } from '../../src/modules/payments/payments.repo.js';
import type { Harness, TestAccount } from '../helpers/harness.js';
import { BANK, uploadDocument } from '../helpers/onboarding.js';
import { createOrder, paymentBody } from '../helpers/payments.js';
import { recordEvent } from '../helpers/webhook-events.js';
import { PUBLIC_ADDRESS } from './url-tables.js';

/**
 * Tenant-owned objects and the requests on them that the isolation suite iterates. A new endpoint
 * joins the suite by adding a row here: payments, webhooks, events and documents add theirs as they land.
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

const PORTAL = '/v1/api-portal';

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
