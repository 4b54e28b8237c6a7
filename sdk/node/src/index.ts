import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { type RequestOptions, Transport, type TransportOptions } from './http.js';
import type { components, operations } from './openapi.js';

export { KoshConnectionError, KoshError } from './http.js';
export type { components, operations, paths } from './openapi.js';

type Schemas = components['schemas'];
export type Order = Schemas['Order'];
export type Payment = Schemas['Payment'];
export type Refund = Schemas['Refund'];
export type Event = Schemas['Event'];
export type Methods = Schemas['Methods'];
export type PaymentAction = Schemas['PaymentAction'];
export type CreateOrderRequest = Schemas['CreateOrderRequest'];
export type CreatePaymentRequest = Schemas['CreatePaymentRequest'];
export type CreatePaymentResponse = Schemas['CreatePaymentResponse'];
export type CreateRefundRequest = Schemas['CreateRefundRequest'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type CreateWebhookEndpointRequest = Schemas['CreateWebhookEndpointRequest'];
export type Delivery = Schemas['Delivery'];
export type CheckoutSession = Schemas['CheckoutSession'];
export type CreateCheckoutSessionRequest =
  operations['createCheckoutSession']['requestBody']['content']['application/json'];

type Query<O extends keyof operations> = operations[O] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;
export type OrderListQuery = Query<'listOrders'>;
export type PaymentListQuery = Query<'listPayments'>;
export type RefundListQuery = Query<'listRefunds'>;

export interface KoshOptions extends TransportOptions {}

/** Options of one call: an Idempotency-Key of your own (a POST gets a generated one otherwise). */
export interface CallOptions {
  idempotencyKey?: string;
}

interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/**
 * A list call: `await` it for one page, or iterate it with `for await` to walk every object of the
 * list, page after page (the cursor is followed for you).
 */
export class List<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>) {}

  // biome-ignore lint/suspicious/noThenProperty: a list call is awaited for its first page on purpose.
  then<A = Page<T>, B = never>(
    onFulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.fetchPage(undefined).then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let cursor: string | undefined;
    do {
      const page = await this.fetchPage(cursor);
      yield* page.data;
      cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined;
    } while (cursor);
  }
}

type Queryable = Record<string, string | number | boolean | undefined>;

/** The seed's answers wrap the object: `{ data, message }`. */
interface Wrapped<T> {
  data: T;
}

const id = (value: string) => encodeURIComponent(value);

/**
 * The Kosh API from a merchant's backend. It holds the secret key: never use it in a browser.
 *
 * ```ts
 * const kosh = new Kosh({ apiKey, secretKey, baseUrl: 'https://pay.example.com' });
 * const order = await kosh.orders.create({ amount: 5000, currency: 'INR' });
 * ```
 */
export class Kosh {
  private readonly transport: Transport;

  constructor(options: KoshOptions) {
    this.transport = new Transport(options);
  }

  private get<T>(path: string, query?: Queryable): Promise<T> {
    return this.transport.request<T>('GET', path, { query });
  }

  private post<T>(path: string, body: unknown, options: CallOptions = {}): Promise<T> {
    const request: RequestOptions = { body };
    if (options.idempotencyKey) request.idempotencyKey = options.idempotencyKey;
    return this.transport.request<T>('POST', path, request);
  }

  private list<T>(path: string, query: Queryable = {}): List<T> {
    return new List<T>((cursor) => this.get<Page<T>>(path, cursor ? { ...query, cursor } : query));
  }

  readonly orders = {
    create: async (body: CreateOrderRequest, options?: CallOptions): Promise<Order> =>
      (await this.post<Wrapped<Order>>('/v1/orders/', body, options)).data,
    retrieve: async (orderId: string): Promise<Order> =>
      (await this.get<Wrapped<Order>>(`/v1/orders/${id(orderId)}/`)).data,
    list: (query: OrderListQuery = {}): List<Order> => this.list<Order>('/v1/orders/', query),
    /** The payments of one order, newest first. */
    payments: (orderId: string, query: Queryable = {}): List<Payment> =>
      this.list<Payment>(`/v1/orders/${id(orderId)}/payments/`, query),
  };

  readonly payments = {
    /**
     * Starts a net-banking, wallet or UPI payment; `next[0]` says how to send the browser on (for
     * UPI, the upi:// link, its QR code or the collect request, and `next[1]` Kosh's UPI page).
     */
    createS2S: (body: CreatePaymentRequest, options?: CallOptions): Promise<CreatePaymentResponse> =>
      this.post<CreatePaymentResponse>('/v1/payments/create/s2s/', body, options),
    retrieve: async (paymentId: string): Promise<Payment> =>
      (await this.get<Wrapped<Payment>>(`/v1/payments/${id(paymentId)}/`)).data,
    list: (query: PaymentListQuery = {}): List<Payment> => this.list<Payment>('/v1/payments/', query),
    /** The banks, wallets and UPI flows enabled for this account: offer only these. */
    methods: (): Promise<Methods> => this.get<Methods>('/v1/payments/methods/'),
  };

  readonly refunds = {
    /** Refunds a captured payment, in full unless `amount` says less. */
    create: async (
      paymentId: string,
      body: CreateRefundRequest = {},
      options?: CallOptions,
    ): Promise<Refund> =>
      (await this.post<Wrapped<Refund>>(`/v1/payments/${id(paymentId)}/refunds/`, body, options)).data,
    retrieve: async (refundId: string): Promise<Refund> =>
      (await this.get<Wrapped<Refund>>(`/v1/refunds/${id(refundId)}/`)).data,
    list: (query: RefundListQuery = {}): List<Refund> => this.list<Refund>('/v1/refunds/', query),
  };

  readonly checkout = {
    sessions: {
      /**
       * Opens a hosted checkout session for an unpaid order: send the customer to its `url`. Its end
       * is the payment's (the signed return POST to `return_url`, the webhooks); fetch to see it.
       */
      create: async (body: CreateCheckoutSessionRequest, options?: CallOptions): Promise<CheckoutSession> =>
        (await this.post<Wrapped<CheckoutSession>>('/v1/checkout/sessions/', body, options)).data,
      retrieve: async (sessionId: string): Promise<CheckoutSession> =>
        (await this.get<Wrapped<CheckoutSession>>(`/v1/checkout/sessions/${id(sessionId)}/`)).data,
    },
  };

  readonly events = {
    retrieve: async (eventId: string): Promise<Event> =>
      (await this.get<Wrapped<Event>>(`/v1/events/${id(eventId)}/`)).data,
    list: (query: Queryable = {}): List<Event> => this.list<Event>('/v1/events/', query),
    /**
     * Sends the event again now, with a fresh retry schedule and the same `webhook-id`: to one
     * endpoint (`{ endpoint_id }`), or to every enabled endpoint that takes its type. Answers the
     * event's deliveries (the newest 100).
     */
    redeliver: async (eventId: string, body: { endpoint_id?: string } = {}, options?: CallOptions) =>
      (await this.post<Page<Delivery>>(`/v1/events/${id(eventId)}/redeliver/`, body, options)).data,
  };

  readonly webhookEndpoints = {
    /** Registers an endpoint; the answer carries its `whsec_` signing secret, shown only here. */
    create: async (body: CreateWebhookEndpointRequest, options?: CallOptions): Promise<WebhookEndpoint> =>
      (await this.post<Wrapped<WebhookEndpoint>>('/v1/webhooks/', body, options)).data,
    retrieve: async (endpointId: string): Promise<WebhookEndpoint> =>
      (await this.get<Wrapped<WebhookEndpoint>>(`/v1/webhooks/${id(endpointId)}/`)).data,
    list: (query: Queryable = {}): List<WebhookEndpoint> =>
      this.list<WebhookEndpoint>('/v1/webhooks/', query),
    /**
     * A new signing secret, shown only here; the previous one keeps verifying for 24 hours, so a
     * receiver can switch without losing a webhook.
     */
    rotateSecret: async (endpointId: string, options?: CallOptions): Promise<WebhookEndpoint> =>
      (
        await this.post<Wrapped<WebhookEndpoint>>(
          `/v1/webhooks/${id(endpointId)}/rotate-secret/`,
          {},
          options,
        )
      ).data,
  };

  readonly webhooks = {
    /**
     * Checks a webhook's signature (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
     * `webhook-signature`) over the raw body, exactly as received, and returns the event. Throws
     * when the signature does not match or the timestamp is more than five minutes off.
     */
    verify: (
      rawBody: string | Buffer,
      headers: Record<string, string | string[] | undefined>,
      secret: string,
    ) => {
      const flat: Record<string, string> = {};
      for (const [name, value] of Object.entries(headers)) {
        if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      }
      const body = typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8');
      return new Webhook(secret).verify(body, flat) as Event;
    },
  };

  readonly returns = {
    /**
     * Checks the browser's return POST (`payment_id`, `order_id`, `status`, `signature`) with the
     * account's return signing secret (`returns.signingSecret()`). A valid signature proves the
     * values came from Kosh, not that the payment is paid: fetch the payment before fulfilling.
     */
    verify: (fields: Record<string, unknown>, secret: string): boolean => {
      const { payment_id, order_id, status, signature } = fields;
      if (![payment_id, order_id, status, signature].every((value) => typeof value === 'string'))
        return false;
      if (!/^[0-9a-f]{64}$/i.test(signature as string)) return false;
      const expected = createHmac('sha256', secret).update(`${payment_id}|${order_id}|${status}`).digest();
      return timingSafeEqual(Buffer.from(signature as string, 'hex'), expected);
    },
    /** The account's return signing secret of this key's mode (`rss_…`): keep it with your secrets. */
    signingSecret: async (): Promise<string> =>
      (await this.get<Wrapped<{ secret: string }>>('/v1/payments/return-signing-secret/')).data.secret,
  };
}
