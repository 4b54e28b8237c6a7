/**
 * The load scenarios, as data. A scenario is a sequence of HTTP steps each connection repeats
 * (usually one step), the fixtures it needs created before it runs, and the baseline its
 * throughput is compared with. Adding a scenario is adding an entry here.
 */

export type BaselineName = 'insert' | 'select' | 'page' | 'cached' | 'chain';

// biome-ignore lint/suspicious/noExplicitAny: each scenario reads the fields it knows from a response body.
export type JsonBody = any;

/** Per-connection values a step can set from a response and a later step can read. */
export type Vars = Record<string, string>;

export interface Step {
  method: 'GET' | 'POST';
  path: string | ((fixtures: Fixtures, vars: Vars) => string);
  body?: Record<string, unknown> | ((fixtures: Fixtures, vars: Vars) => unknown);
  /** How the body is sent: JSON (default) or an HTML form post (`application/x-www-form-urlencoded`). */
  encoding?: 'json' | 'form';
  /** Reads what later steps need (e.g. an id) from a successful response. */
  capture?: (body: JsonBody, vars: Vars) => void;
}

export interface Scenario {
  name: string;
  baseline: BaselineName;
  /** Fixtures created through the API before the scenario runs (see FIXTURES). */
  uses?: FixtureName[];
  steps: Step[];
}

export type FixtureName = 'orders' | 'payments' | 'checkoutSessions';
export type Fixtures = Partial<Record<FixtureName, string[]>>;

/** Uniform pick: every request reads a different row, as real traffic does. */
export function pick(list: string[] | undefined): string {
  if (!list?.length) throw new Error('A scenario used a fixture it did not declare in `uses`.');
  return list[Math.floor(Math.random() * list.length)]!;
}

export const ORDER_BODY = {
  amount: 5000,
  currency: 'INR',
  receipt: 'bench-receipt',
  metadata: { cart: '42' },
};

/** How fixtures are made: `count` objects created through the public API by `create`. */
export interface FixtureSpec {
  count: number;
  /** Creates one fixture and returns its id; `fixtures` holds the ones made before it. */
  create: (api: ApiCall, fixtures: Fixtures) => Promise<string>;
}

export type ApiCall = (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<JsonBody>;

/**
 * An S2S payment body (seed §4.2) for an order of ORDER_BODY's amount. An order that is not paid
 * takes any number of payments (each attempt moves it to `attempted`), so the S2S scenarios can
 * spread their payments over the order fixtures instead of creating an order per payment.
 */
export function paymentBody(
  orderId: string,
  instrument: 'netbanking' | 'wallet' | 'upi_qr',
): Record<string, unknown> {
  return {
    amount: ORDER_BODY.amount,
    currency: ORDER_BODY.currency,
    contact: '+919876543210',
    name: 'Asha Rao',
    email: 'asha@example.com',
    order_id: orderId,
    return_url: 'https://merchant.example/return',
    description: 'Two notebooks',
    ...(instrument === 'netbanking'
      ? { method: 'netbanking', bank: 'ICIC' }
      : instrument === 'wallet'
        ? { method: 'wallet', wallet: 'AIRTELMONEY' }
        : { method: 'upi', upi: { flow: 'qr' } }),
  };
}

/** The single-use token of the sandbox authentication page (the hidden `token` input). */
export function pageToken(html: unknown): string | undefined {
  return typeof html === 'string' ? /name="token" value="([^"]+)"/.exec(html)?.[1] : undefined;
}

export const FIXTURES: Record<FixtureName, FixtureSpec> = {
  orders: {
    count: 1_000,
    create: async (api) => (await api('POST', '/v1/orders/', ORDER_BODY)).data.id,
  },
  payments: {
    count: 1_000,
    create: async (api) => {
      const order = (await api('POST', '/v1/orders/', ORDER_BODY)).data.id;
      return (await api('POST', '/v1/payments/create/s2s/', paymentBody(order, 'netbanking'))).payment_id;
    },
  },
  checkoutSessions: {
    count: 1_000,
    create: async (api) => {
      const order = (await api('POST', '/v1/orders/', ORDER_BODY)).data.id;
      const body = { order_id: order, return_url: 'https://merchant.example/return' };
      return (await api('POST', '/v1/checkout/sessions/', body)).data.id;
    },
  },
};

/**
 * The five requests of a charge (create the order, start the payment, open the page, choose
 * success, fetch the payment) at the given addresses: Kosh's, or the bare chain's
 * (bench/baseline-server.ts, `registerChain`), so both walk the same steps.
 */
export function chargeSteps(at: {
  orders: string;
  payments: string;
  page: (payment: string | undefined) => string;
  payment: (payment: string | undefined) => string;
}): Step[] {
  return [
    {
      method: 'POST',
      path: at.orders,
      body: ORDER_BODY,
      capture: (body, vars) => {
        vars.order = body.data.id;
      },
    },
    {
      method: 'POST',
      path: at.payments,
      body: (_fixtures, vars) => paymentBody(vars.order ?? 'order_missing', 'netbanking'),
      capture: (body, vars) => {
        vars.payment = body.payment_id;
      },
    },
    {
      method: 'GET',
      path: (_fixtures, vars) => at.page(vars.payment),
      capture: (html, vars) => {
        vars.token = pageToken(html) ?? '';
      },
    },
    {
      method: 'POST',
      path: (_fixtures, vars) => at.page(vars.payment),
      encoding: 'form',
      body: (_fixtures, vars) => ({ token: vars.token ?? '', choice: 'success' }),
    },
    { method: 'GET', path: (_fixtures, vars) => at.payment(vars.payment) },
  ];
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'create order',
    baseline: 'insert',
    steps: [{ method: 'POST', path: '/v1/orders/', body: ORDER_BODY }],
  },
  {
    name: 'fetch order',
    baseline: 'select',
    uses: ['orders'],
    steps: [{ method: 'GET', path: (fixtures) => `/v1/orders/${pick(fixtures.orders)}/` }],
  },
  {
    name: 'list orders',
    baseline: 'page',
    uses: ['orders'],
    steps: [{ method: 'GET', path: '/v1/orders/?limit=10' }],
  },
  {
    name: 'methods',
    baseline: 'cached',
    steps: [{ method: 'GET', path: '/v1/payments/methods/' }],
  },
  {
    // A chain: each connection creates an order and reads it back (read-your-write). The whole
    // charge (order → S2S → authentication page → Success → fetch) is the same shape, longer.
    name: 'create then fetch order',
    baseline: 'insert',
    steps: [
      {
        method: 'POST',
        path: '/v1/orders/',
        body: ORDER_BODY,
        capture: (body, vars) => {
          vars.order = body.data.id;
        },
      },
      { method: 'GET', path: (_fixtures, vars) => `/v1/orders/${vars.order}/` },
    ],
  },
  {
    name: 'S2S payment (net banking)',
    baseline: 'insert',
    uses: ['orders'],
    steps: [
      {
        method: 'POST',
        path: '/v1/payments/create/s2s/',
        body: (fixtures) => paymentBody(pick(fixtures.orders), 'netbanking'),
      },
    ],
  },
  {
    name: 'S2S payment (wallet)',
    baseline: 'insert',
    uses: ['orders'],
    steps: [
      {
        method: 'POST',
        path: '/v1/payments/create/s2s/',
        body: (fixtures) => paymentBody(pick(fixtures.orders), 'wallet'),
      },
    ],
  },
  {
    // The QR code of the upi://pay link is rendered (a PNG) on every start.
    name: 'S2S payment (UPI QR)',
    baseline: 'insert',
    uses: ['orders'],
    steps: [
      {
        method: 'POST',
        path: '/v1/payments/create/s2s/',
        body: (fixtures) => paymentBody(pick(fixtures.orders), 'upi_qr'),
      },
    ],
  },
  {
    name: 'fetch payment',
    baseline: 'select',
    uses: ['payments'],
    steps: [{ method: 'GET', path: (fixtures) => `/v1/payments/${pick(fixtures.payments)}/` }],
  },
  {
    // The customer's hosted checkout page (docs/checkout.md): the session, its order, the account,
    // its methods, its attempts and its customers' banks, rendered to about 10 KB of HTML.
    name: 'checkout page',
    baseline: 'select',
    uses: ['checkoutSessions'],
    steps: [{ method: 'GET', path: (fixtures) => `/checkout/${pick(fixtures.checkoutSessions)}/` }],
  },
  {
    // Five requests per charge; req/s counts requests, charges/s is a fifth of it. Against the bare
    // five-step chain over the same requests (bench/baseline-server.ts, `registerChain`).
    name: 'whole charge (5 requests)',
    baseline: 'chain',
    steps: chargeSteps({
      orders: '/v1/orders/',
      payments: '/v1/payments/create/s2s/',
      page: (payment) => `/v1/payments/${payment}/authentication/`,
      payment: (payment) => `/v1/payments/${payment}/`,
    }),
  },
];

/** Scenarios re-run after bulk-loading `--scale` orders; `deep` is a cursor in the middle of the history. */
export function scaleScenarios(loadedIds: { sample: () => string; deepCursor: string }): Scenario[] {
  return [
    {
      name: 'create order (scaled)',
      baseline: 'insert',
      steps: [{ method: 'POST', path: '/v1/orders/', body: ORDER_BODY }],
    },
    {
      name: 'fetch order (scaled)',
      baseline: 'select',
      steps: [{ method: 'GET', path: () => `/v1/orders/${loadedIds.sample()}/` }],
    },
    {
      name: 'list orders (scaled)',
      baseline: 'page',
      steps: [{ method: 'GET', path: '/v1/orders/?limit=10' }],
    },
    {
      name: 'list orders deep page (scaled)',
      baseline: 'page',
      steps: [{ method: 'GET', path: `/v1/orders/?limit=10&cursor=${loadedIds.deepCursor}` }],
    },
  ];
}
