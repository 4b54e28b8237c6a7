import { randomBytes } from 'node:crypto';
import type { BoundConnector, ConnectorDirectory } from '../../connectors/directory.js';
import { type Db, isCheckViolation } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { KoshError, notFound } from '../../domain/errors.js';
import type { IdGenerator } from '../../domain/ids.js';
import { type Page, pageRequest, timeRange, toPage } from '../../domain/pagination.js';
import type { Scope } from '../../domain/scope.js';
import { TtlCache } from '../../domain/ttl-cache.js';
import type { KeyRing } from '../../security/keyring.js';
import { type MethodsConfig, offerable, upiEnabled } from '../methods/methods.js';
import type { MethodsService } from '../methods/methods.service.js';
import type { OrderRow } from '../orders/orders.model.js';
import type { OrdersService } from '../orders/orders.service.js';
import { actionOf, type PaymentInitiation } from './payment-initiation.js';
import { buildAction, buildUpiActions } from './payments.actions.js';
import {
  bankDetailsOf,
  type ConnectorFacts,
  type CreatedPayment,
  type CreatePayment,
  type Payment,
  type PaymentListFilter,
  toConnectorPayment,
  toPayment,
} from './payments.model.js';
import type { NewPayment, PaymentRow, PaymentsRepo } from './payments.repo.js';
import { canonicalKey, checkPaymentFields, UPI_EXPIRY_MINUTES } from './payments.validation.js';

// What other modules check the same way a payment does (a checkout session's return URL and customer).
export { authenticationUrl, checkoutPageUrl, htmlFormStep } from './payments.actions.js';
export { toPayment } from './payments.model.js';
export { checkCustomer, checkReturnUrl } from './payments.validation.js';
export { UNANSWERED_FAILURES } from './sync-schedule.js';

/** Throws the error the order itself gives a payment: missing, already paid, another amount or currency. */
function refuseOrder(
  input: Pick<CreatePayment, 'order_id' | 'amount' | 'currency'>,
  order: Pick<OrderRow, 'status' | 'amount' | 'currency'> | undefined,
): void {
  if (!order) throw new KoshError('resource_not_found', `No order with id '${input.order_id}'.`, 'order_id');
  if (order.status === 'paid') {
    throw new KoshError('order_already_paid', `Order ${input.order_id} is already paid.`, 'order_id');
  }
  if (input.amount !== Number(order.amount)) {
    throw new KoshError(
      'amount_mismatch',
      `amount ${input.amount} does not equal the order's amount ${order.amount}.`,
      'amount',
    );
  }
  if (input.currency !== order.currency) {
    throw new KoshError(
      'currency_mismatch',
      `currency '${input.currency}' does not equal the order's currency '${order.currency}'.`,
      'currency',
    );
  }
}

/** A payment not yet written, as a connector that answers before the insert sees it. */
function factsOf(payment: NewPayment): ConnectorFacts {
  return {
    id: payment.id,
    mode: payment.mode,
    order_id: payment.orderId,
    amount: String(payment.amount),
    currency: payment.currency,
    method: payment.method,
    bank: payment.bank,
    wallet: payment.wallet,
    name: payment.name,
    email: payment.email,
    contact: payment.contact,
    description: payment.description,
    created_at: payment.createdAt,
    provider_reference: null,
    provider_status: null,
    provider_data: {},
    pending_at: null,
    upi_flow: payment.upi?.flow ?? null,
    upi_vpa: payment.upi?.vpa ?? null,
    expires_at: payment.upi?.expiresAt ?? null,
  };
}

/** What a payment is taken by: its bank or wallet key and label, or UPI; refused when not enabled. */
function instrumentOf(
  input: CreatePayment,
  enabled: MethodsConfig,
): { bank: string | null; wallet: string | null; label: string } | KoshError {
  if (input.method === 'upi') {
    const flow = input.upi?.flow ?? 'intent';
    if (upiEnabled(enabled, flow)) return { bank: null, wallet: null, label: 'UPI' };
    return new KoshError(
      'method_not_enabled',
      `UPI ${flow} is not enabled for this account; see 'upi' in GET /v1/payments/methods/.`,
      'upi.flow',
    );
  }
  const field = input.method === 'netbanking' ? 'bank' : 'wallet';
  const code = (input.method === 'netbanking' ? input.bank : input.wallet) ?? '';
  const offered = enabled[input.method];
  const key = canonicalKey(offered, code);
  if (key === undefined) {
    return new KoshError(
      'method_not_enabled',
      `${field} '${code}' is not enabled for this account; use a key of '${input.method}' from GET /v1/payments/methods/.`,
      field,
    );
  }
  const label = offered[key] ?? key;
  return input.method === 'netbanking'
    ? { bank: key, wallet: null, label }
    : { bank: null, wallet: key, label };
}

export interface CreatePaymentOptions {
  /**
   * The ids to create the payment with: a keyed request's seeded ids, so that a retry after a crash
   * finds the payment the dead attempt committed and carries on from it (docs/idempotency.md).
   */
  ids?: IdGenerator;
  /** The hosted checkout session the payment is started from (the checkout module's `startPayment`). */
  checkoutSessionId?: string;
}

/** A checkout link that has started its 20 payments starts no more (docs/checkout.md). */
export const tooManyCheckoutAttempts = () =>
  new KoshError(
    'rate_limit_exceeded',
    'This payment link has had too many attempts. Ask the merchant for a new one.',
  );

export function createPaymentsService(deps: {
  db: Db;
  repo: PaymentsRepo;
  ids: IdGenerator;
  clock: Clock;
  orders: OrdersService;
  methods: MethodsService;
  connectors: ConnectorDirectory;
  /** How a connector's answer to `initiate` is recorded and what it implies (the payment states). */
  initiation: PaymentInitiation;
  publicUrl: string;
  keyring: KeyRing;
}) {
  const { db, repo, ids, clock, orders, methods, connectors, initiation, publicUrl, keyring } = deps;
  const bankUsageCache = new TtlCache<Map<string, number>>(5 * 60_000, 10_000, () => clock.now().getTime());
  // A return-signing secret never changes once made (re-encryption under a new key changes only how
  // it is stored), so a process may keep what it read; the bound keeps memory flat.
  const returnSecrets = new TtlCache<string>(60 * 60_000, 10_000);

  return {
    /**
     * Seed §4.2/§4.3: checks everything, records the payment (the intent, committed before any
     * connector call), asks the connector to start it, records the answer, and answers how the
     * browser continues. The order is read, locked, checked and moved in the same single statement
     * that inserts the payment; the order's own errors are worked out from what that statement saw.
     */
    async create(
      scope: Scope,
      input: CreatePayment,
      options: CreatePaymentOptions = {},
    ): Promise<CreatedPayment> {
      const { accountId, mode } = scope;
      checkPaymentFields(input, mode);
      // The order's errors come before the method's and the connector's: when either of those is
      // wrong, the order is read first so that the caller hears about the order.
      const refuseWithOrderFirst = async (error: KoshError): Promise<never> => {
        refuseOrder(input, await orders.findForPayment(db, accountId, mode, input.order_id, false));
        throw error;
      };
      let bound: BoundConnector;
      try {
        bound = await connectors.forNewPayment({ accountId, mode });
      } catch (error) {
        if (error instanceof KoshError) return refuseWithOrderFirst(error);
        throw error;
      }
      const all = await methods.get(accountId, mode);
      const instrument = instrumentOf(input, mode === 'live' ? offerable(all, bound.connector) : all);
      if (instrument instanceof KoshError) return refuseWithOrderFirst(instrument);

      const id = (options.ids ?? ids).next('pay');
      const now = clock.now();
      const payment: NewPayment = {
        id,
        accountId,
        mode,
        orderId: input.order_id,
        amount: input.amount,
        currency: input.currency,
        method: input.method,
        bank: instrument.bank,
        wallet: instrument.wallet,
        instrumentName: instrument.label,
        email: input.email,
        contact: input.contact,
        name: input.name.trim(),
        description: input.description ?? null,
        metadata: input.metadata ?? {},
        returnUrl: input.return_url ?? null,
        connector: bound.connector.name,
        connectorAccountId: bound.connectorAccountId,
        createdAt: now,
        initiation: null,
        upi: input.upi
          ? {
              flow: input.upi.flow,
              vpa: input.upi.vpa ?? null,
              expiresAt: new Date(
                now.getTime() + (input.upi.expiry_minutes ?? UPI_EXPIRY_MINUTES.default) * 60_000,
              ),
            }
          : null,
        checkoutSessionId: options.checkoutSessionId ?? null,
      };
      // Asked about from the start, even should the call to its provider never come back.
      if (payment.upi) payment.firstSyncAt = initiation.firstSync(now, now, payment.upi.expiresAt);
      // A connector that never leaves the process answers before the insert, into the same statement.
      if (bound.connector.local) {
        const answer = await bound.connector.initiate(toConnectorPayment(factsOf(payment), publicUrl));
        if (answer.outcome === 'started')
          payment.initiation = initiation.fromResult(answer, now, now, payment.upi?.expiresAt ?? null);
      }
      const result = await orders
        .startPayment(
          db,
          {
            accountId,
            mode,
            orderId: payment.orderId,
            amount: payment.amount,
            currency: payment.currency,
            returnUrl: payment.returnUrl,
            bankDetails: bankDetailsOf({
              ...payment,
              instrument_name: payment.instrumentName,
              upi_flow: payment.upi?.flow ?? null,
            }),
            at: now,
          },
          repo.startInsert(payment),
        )
        .catch((error: unknown) => {
          // A checkout link's 20 payments are the database's rule (migrations/0023_checkout_attempts.sql).
          if (isCheckViolation(error, 'payments_checkout_attempts')) throw tooManyCheckoutAttempts();
          throw error;
        });
      if (!result?.started && !result?.existed) {
        refuseOrder(input, result);
        // The order may take payments but was not moved: only a concurrent change explains that.
        throw new KoshError('state_conflict', `Order ${input.order_id} changed; try again.`);
      }
      // The intent is committed (or, for a resumed keyed request, was committed by the attempt that
      // died): now the provider may be called, outside any transaction.
      const code = instrument.bank ?? instrument.wallet ?? '';
      const respond = (row: Pick<PaymentRow, 'provider_data' | 'provider_next' | 'status'>) => ({
        payment_id: id,
        next: payment.upi
          ? buildUpiActions(
              {
                id,
                flow: payment.upi.flow,
                link: row.provider_next?.kind === 'upi' ? row.provider_next.link : null,
                expiresAt: payment.upi.expiresAt,
                started: row.provider_next?.kind === 'upi' && row.status !== 'failed',
              },
              publicUrl,
            )
          : [buildAction(actionOf(row), { id, method: input.method, code }, publicUrl)],
      });
      if (result.started && payment.initiation) {
        const { data, next } = payment.initiation;
        return respond({ provider_data: data, provider_next: next, status: 'created' });
      }
      const row = await repo.find(db, accountId, mode, id);
      if (!row) throw new KoshError('state_conflict', `Payment ${id} was not recorded; try again.`);
      return respond(await initiation.start(row, bound.connector));
    },

    async get(scope: Scope, id: string): Promise<Payment> {
      const row = await repo.find(db, scope.accountId, scope.mode, id);
      if (!row) throw notFound('payment', id);
      return toPayment(row);
    },

    /**
     * Newest first, narrowed by the query's filters; `forOrder` (the order's own list) answers 404
     * for an order not found, where the `order_id` filter just finds nothing.
     */
    async list(scope: Scope, query: PaymentListFilter, forOrder?: string): Promise<Page<Payment>> {
      if (forOrder !== undefined) {
        const order = await orders.findForPayment(db, scope.accountId, scope.mode, forOrder, false);
        if (!order) throw notFound('order', forOrder);
      }
      const page = pageRequest('pay', query);
      const rows = await repo.list(db, scope.accountId, scope.mode, page, {
        orderId: forOrder ?? query.order_id,
        status: query.status,
        method: query.method,
        bank: query.bank,
        wallet: query.wallet,
        email: query.email,
        contact: query.contact,
        ...timeRange(query),
      });
      return toPage(rows, page.limit, toPayment);
    },

    /**
     * Today's and the last 30 days' captured volume and counts, the success rate's parts, and the
     * captured amount of each of the 30 days (UTC), oldest first: the dashboard's home page.
     */
    async summary(scope: Scope) {
      const now = clock.now();
      const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
      const since = new Date(today.getTime() - 29 * 86_400_000);
      const found = await repo.capturedByDay(db, scope.accountId, scope.mode, since);
      const byDay = new Map(found.days.map((row) => [row.day, row]));
      const days = Array.from({ length: 30 }, (_, i) => {
        const day = new Date(since.getTime() + i * 86_400_000).toISOString().slice(0, 10);
        const row = byDay.get(day);
        return { day, amount: Number(row?.amount ?? 0), count: Number(row?.count ?? 0) };
      });
      const last = days[days.length - 1] as (typeof days)[number];
      return {
        today: { count: last.count, amount: last.amount },
        last30: {
          count: days.reduce((sum, day) => sum + day.count, 0),
          amount: days.reduce((sum, day) => sum + day.amount, 0),
          failed: found.failed,
        },
        days,
        currency: found.currency ?? 'INR',
      };
    },

    /**
     * A hosted checkout session's attempts: how many payments it started, and the newest as the
     * customer's page tells it (how the last attempt ended).
     */
    async checkoutAttempts(
      sessionId: string,
    ): Promise<{ count: number; latest: (Payment & { instrument_name: string }) | null }> {
      const { count, latest } = await repo.checkoutAttempts(db, sessionId);
      return {
        count,
        latest: latest ? { ...toPayment(latest), instrument_name: latest.instrument_name } : null,
      };
    },

    /**
     * A session's payments whose money is owed back (authorised after the order was paid): what the
     * customer's page says was taken twice, and whether it is back yet.
     */
    async checkoutOwedBack(
      sessionId: string,
    ): Promise<{ id: string; amount: number; currency: string; refunded: boolean }[]> {
      const rows = await repo.checkoutOwedBack(db, sessionId);
      return rows.map((row) => ({
        id: row.id,
        amount: Number(row.amount),
        currency: row.currency,
        refunded: Number(row.amount_refunded) >= Number(row.amount),
      }));
    },

    /**
     * The account's banks by how many payments its customers paid with each in the last 90 days.
     * An order that changes over weeks: each process keeps it for five minutes.
     */
    async bankUsage(scope: Scope): Promise<Map<string, number>> {
      const key = `${scope.accountId}:${scope.mode}`;
      const cached = bankUsageCache.get(key);
      if (cached) return cached;
      const since = new Date(clock.now().getTime() - 90 * 86_400_000);
      const rows = await repo.capturedByBank(db, scope.accountId, scope.mode, since);
      const usage = new Map(rows.map((row) => [row.bank, Number(row.count)]));
      bankUsageCache.set(key, usage);
      return usage;
    },

    /** The key of the return POST's signature; made on first use and stable afterwards. */
    async returnSigningSecret(accountId: string, mode: Scope['mode']): Promise<string> {
      // Stored encrypted, bound to the account and mode; the first use makes it.
      const context = `return_signing_secret:${accountId}:${mode}`;
      const cached = returnSecrets.get(context);
      if (cached) return cached;
      const stored = await repo.returnSigningSecret(db, accountId, mode, () =>
        keyring.encrypt(`rss_${randomBytes(32).toString('base64url')}`, context),
      );
      const secret = keyring.reveal(stored, context);
      returnSecrets.set(context, secret);
      return secret;
    },
  };
}

export type PaymentsService = ReturnType<typeof createPaymentsService>;
