import type { Db, Queryable } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { unixSeconds } from '../../domain/clock.js';
import { KoshError, notFound } from '../../domain/errors.js';
import { type IdGenerator, looksLikeId } from '../../domain/ids.js';
import type { Scope } from '../../domain/scope.js';
import type { EventsService } from '../events/events.service.js';
import type { MethodsConfig } from '../methods/methods.js';
import type { MethodsService } from '../methods/methods.service.js';
import type { OrdersService } from '../orders/orders.service.js';
import type { CreatedPayment, CreatePayment } from '../payments/payments.model.js';
import {
  checkCustomer,
  checkoutPageUrl,
  checkReturnUrl,
  type PaymentsService,
} from '../payments/payments.service.js';
import {
  CHECKOUT_EXPIRY_MINUTES,
  CHECKOUT_METHODS,
  type CheckoutCustomer,
  type CheckoutMethod,
  type CheckoutSession,
  type CreateCheckoutSession,
  type PaymentChoice,
} from './checkout.model.js';
import type { CheckoutRepo, CheckoutSessionRow, Due } from './checkout.repo.js';

/** The session as the API and the event payloads show it. */
export function toCheckoutSession(row: CheckoutSessionRow, publicUrl: string): CheckoutSession {
  return {
    id: row.id,
    entity: 'checkout_session',
    order_id: row.order_id,
    url: checkoutPageUrl(publicUrl, row.id),
    status: row.status,
    payment_id: row.payment_id,
    expires_at: unixSeconds(row.expires_at),
    created_at: unixSeconds(row.created_at),
  };
}

/** The methods the account can offer now, in the page's order: UPI when a flow is on, banks, wallets. */
export function enabledMethods(offered: MethodsConfig): CheckoutMethod[] {
  const on: Record<CheckoutMethod, boolean> = {
    upi: offered.upi.intent || offered.upi.collect,
    netbanking: Object.keys(offered.netbanking).length > 0,
    wallet: Object.keys(offered.wallet).length > 0,
  };
  return CHECKOUT_METHODS.filter((method) => on[method]);
}

function orderNotFound(id: string): KoshError {
  return new KoshError('resource_not_found', `No order with id '${id}'.`, 'order_id');
}

function orderPaid(id: string): KoshError {
  return new KoshError('order_already_paid', `Order ${id} is already paid.`, 'order_id');
}

function closed(row: CheckoutSessionRow): KoshError {
  return new KoshError(
    'checkout_session_closed',
    row.status === 'completed'
      ? `Checkout session ${row.id} is completed: its order is paid.`
      : `Checkout session ${row.id} has expired; the merchant can create a new one.`,
  );
}

export interface CreateCheckoutSessionOptions {
  /** A keyed request's seeded ids: a retry after a crash finds the session the dead attempt wrote. */
  ids?: IdGenerator;
}

export function createCheckoutService(deps: {
  db: Db;
  repo: CheckoutRepo;
  ids: IdGenerator;
  clock: Clock;
  orders: OrdersService;
  methods: MethodsService;
  payments: PaymentsService;
  events: EventsService;
  publicUrl: string;
}) {
  const { db, repo, ids, clock, orders, methods, payments, events, publicUrl } = deps;

  /** Records each moved session's event in the transaction that moved it (exactly once: the compare-and-set decides). */
  async function recordMoves(tx: Queryable, moved: CheckoutSessionRow[]): Promise<void> {
    for (const row of moved) {
      await events.record(tx, {
        accountId: row.account_id,
        mode: row.mode,
        type: row.status === 'completed' ? 'checkout_session.completed' : 'checkout_session.expired',
        data: { checkout_session: toCheckoutSession(row, publicUrl) },
      });
    }
  }

  /**
   * One batch of the sweep, in one transaction: open sessions whose order is paid complete, then
   * open sessions past their deadline expire. Returns how many moved.
   */
  async function sweep(due: Due): Promise<CheckoutSessionRow[]> {
    const now = clock.now();
    return db.transaction(async (tx) => {
      const completed = await repo.completePaid(tx, due, now);
      const expired = await repo.expireDue(tx, due, now);
      const moved = [...completed, ...expired];
      await recordMoves(tx, moved);
      return moved;
    });
  }

  /** An open session whose order is paid or whose deadline passed, moved on now (a fetch, a page). */
  async function settle(row: CheckoutSessionRow): Promise<CheckoutSessionRow> {
    if (row.status === 'expired') {
      // A payment of the session that timed out may still be authorised late (docs/payments.md):
      // its capture completes the session, which never stays expired over an order it paid.
      const [completed] = await db.transaction(async (tx) => {
        const moved = await repo.completeLate(tx, row.id, clock.now());
        await recordMoves(tx, moved);
        return moved;
      });
      return completed ?? row;
    }
    if (row.status !== 'open') return row;
    const order = await orders.findForPayment(db, row.account_id, row.mode, row.order_id, false);
    if (order?.status !== 'paid' && row.expires_at.getTime() > clock.now().getTime()) return row;
    const [moved] = await sweep({ id: row.id });
    return moved ?? row;
  }

  /** By its id alone (the customer's page holds no key), moved on first when its time has come. */
  async function findSession(sessionId: string): Promise<CheckoutSessionRow> {
    const found = looksLikeId('cs', sessionId) ? await repo.findById(db, sessionId) : undefined;
    if (!found) throw notFound('checkout_session', sessionId);
    return settle(found);
  }

  return {
    async create(
      scope: Scope,
      input: CreateCheckoutSession,
      options: CreateCheckoutSessionOptions = {},
    ): Promise<CheckoutSession> {
      const { accountId, mode } = scope;
      const minutes = input.expires_in_minutes ?? CHECKOUT_EXPIRY_MINUTES.default;
      if (
        !Number.isInteger(minutes) ||
        minutes < CHECKOUT_EXPIRY_MINUTES.min ||
        minutes > CHECKOUT_EXPIRY_MINUTES.max
      ) {
        throw new KoshError(
          'invalid_field',
          `expires_in_minutes must be a whole number of minutes from ${CHECKOUT_EXPIRY_MINUTES.min} to ${CHECKOUT_EXPIRY_MINUTES.max}.`,
          'expires_in_minutes',
        );
      }
      checkReturnUrl(input.return_url, mode);
      if (input.customer) checkCustomer(input.customer, 'customer.');
      const order = await orders.findForPayment(db, accountId, mode, input.order_id, false);
      if (!order) throw orderNotFound(input.order_id);
      if (order.status === 'paid') throw orderPaid(input.order_id);
      const enabled = enabledMethods(await methods.offered(accountId, mode));
      const lacking = (input.methods ?? []).filter((method) => !enabled.includes(method));
      if (lacking.length > 0) {
        throw new KoshError(
          'method_not_enabled',
          `${lacking.join(', ')} ${lacking.length === 1 ? 'is' : 'are'} not enabled for this account in ${mode} mode; see GET /v1/payments/methods/.`,
          'methods',
        );
      }
      const chosen = input.methods ?? enabled;
      if (chosen.length === 0) {
        throw new KoshError(
          'method_not_enabled',
          `No payment method is enabled for this account in ${mode} mode; see GET /v1/payments/methods/.`,
          'methods',
        );
      }
      const now = clock.now();
      const customer: CheckoutCustomer | null = input.customer
        ? { name: input.customer.name.trim(), email: input.customer.email, contact: input.customer.contact }
        : null;
      const row = await repo.insert(db, {
        id: (options.ids ?? ids).next('cs'),
        accountId,
        mode,
        orderId: input.order_id,
        returnUrl: input.return_url,
        customer,
        // In the page's order, whatever order they were asked in.
        methods: CHECKOUT_METHODS.filter((method) => chosen.includes(method)),
        expiresAt: new Date(now.getTime() + minutes * 60_000),
        createdAt: now,
      });
      return toCheckoutSession(row, publicUrl);
    },

    /** Tenant-scoped; a session found open whose order is paid (or whose time is up) is moved on first. */
    async get(scope: Scope, id: string): Promise<CheckoutSession> {
      const row = looksLikeId('cs', id) ? await repo.find(db, scope.accountId, scope.mode, id) : undefined;
      if (!row) throw notFound('checkout_session', id);
      return toCheckoutSession(await settle(row), publicUrl);
    },

    session: findSession,

    /**
     * A payment of the session captured (called in the capture's transaction, by the payments
     * module through the container): the session completes with it at once, with its event after
     * the payment's, whether it was open or had expired while the payment was at the bank.
     */
    async paymentCaptured(tx: Queryable, sessionId: string, paymentId: string): Promise<void> {
      await recordMoves(tx, await repo.completeWith(tx, sessionId, paymentId, clock.now()));
    },

    /**
     * Starts a payment for the session's order with the customer's choice, through the same core as
     * an S2S payment (the session's return URL, the session recorded on the payment). Refused unless
     * the session is open, before its deadline, and allows the method. A failed or abandoned attempt
     * leaves the session open: the customer may start another until it expires.
     */
    async startPayment(sessionId: string, choice: PaymentChoice): Promise<CreatedPayment> {
      const session = await findSession(sessionId);
      if (session.status !== 'open') throw closed(session);
      if (session.expires_at.getTime() <= clock.now().getTime())
        throw closed({ ...session, status: 'expired' });
      if (!session.methods.includes(choice.method)) {
        throw new KoshError(
          'method_not_enabled',
          `This checkout session offers ${session.methods.join(', ')}, not ${choice.method}.`,
          'method',
        );
      }
      const order = await orders.findForPayment(
        db,
        session.account_id,
        session.mode,
        session.order_id,
        false,
      );
      if (!order) throw orderNotFound(session.order_id);
      const customer = session.customer ?? customerOf(choice);
      const input: CreatePayment = {
        amount: Number(order.amount),
        currency: order.currency,
        ...customer,
        order_id: session.order_id,
        return_url: session.return_url,
        ...(choice.method === 'upi'
          ? { method: 'upi', upi: choice.upi }
          : choice.method === 'netbanking'
            ? { method: 'netbanking', bank: choice.bank }
            : { method: 'wallet', wallet: choice.wallet }),
      };
      return payments.create({ accountId: session.account_id, mode: session.mode }, input, {
        checkoutSessionId: session.id,
      });
    },

    /** The job's batch (see `createCheckoutSweepJob`). */
    async sweepDue(batchSize: number): Promise<number> {
      return (await sweep({ limit: batchSize })).length;
    },
  };
}

/** The customer's own details, asked on the page when the merchant gave none. */
function customerOf(choice: PaymentChoice): CheckoutCustomer {
  for (const field of ['name', 'email', 'contact'] as const) {
    if (choice[field] === undefined) {
      throw new KoshError(
        'missing_field',
        `The field '${field}' is required: the merchant gave no customer.`,
        field,
      );
    }
  }
  return { name: choice.name as string, email: choice.email as string, contact: choice.contact as string };
}

export type CheckoutService = ReturnType<typeof createCheckoutService>;
