import type { Db, Queryable, StatementPart } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { unixSeconds } from '../../domain/clock.js';
import { notFound } from '../../domain/errors.js';
import type { IdGenerator } from '../../domain/ids.js';
import { type AmountLimits, checkAmount } from '../../domain/money.js';
import { type Page, pageRequest, timeRange, toPage } from '../../domain/pagination.js';
import type { Scope } from '../../domain/scope.js';
import { ORDER_PAYMENT_STARTED, type OrderStatus } from './order.transitions.js';
import type { CreateOrder, Order, OrderListFilter } from './orders.model.js';
import type { OrderRow, OrdersRepo, PaymentStart, StartResult } from './orders.repo.js';

/** The order as the API shows it (seed §2.1); `amount_pending` is derived, never stored. */
export function toOrder(row: OrderRow): Order {
  const amount = Number(row.amount);
  const amountPaid = Number(row.amount_paid);
  return {
    id: row.id,
    entity: 'order',
    amount,
    currency: row.currency,
    status: row.status,
    receipt: row.receipt,
    metadata: row.metadata,
    created_at: unixSeconds(row.created_at),
    return_url: row.return_url,
    amount_paid: amountPaid,
    bank_details: row.bank_details,
    return_method: row.return_method,
    amount_pending: amount - amountPaid,
  };
}

export function createOrdersService(deps: {
  db: Db;
  repo: OrdersRepo;
  ids: IdGenerator;
  clock: Clock;
  amountLimits: AmountLimits;
}) {
  const { db, repo, ids, clock, amountLimits } = deps;

  return {
    async create(scope: Scope, input: CreateOrder, on: Db = db): Promise<Order> {
      checkAmount(input.amount, input.currency, amountLimits);
      const row = await repo.insert(on, {
        id: ids.next('order'),
        accountId: scope.accountId,
        mode: scope.mode,
        amount: input.amount,
        currency: input.currency,
        receipt: input.receipt ?? null,
        metadata: input.metadata ?? {},
        createdAt: clock.now(),
      });
      return toOrder(row);
    },

    async get(scope: Scope, id: string): Promise<Order> {
      const row = await repo.find(db, scope.accountId, scope.mode, id);
      if (!row) throw notFound('order', id);
      return toOrder(row);
    },

    /**
     * The order row inside a payment's transaction; `lock` takes a row lock so that payments on one
     * order change it one after another.
     */
    async findForPayment(
      tx: Queryable,
      accountId: string,
      mode: Scope['mode'],
      id: string,
      lock: boolean,
    ): Promise<OrderRow | undefined> {
      return repo.find(tx, accountId, mode, id, lock);
    },

    /**
     * Starts a payment on the order in one statement: the payments module's insert (`payment`) runs
     * only if the order may take a payment (the order transition table's `payment_started`), and the
     * order moves with it. Undefined when the order does not exist for this account and mode.
     */
    async startPayment(
      tx: Queryable,
      start: Omit<PaymentStart, 'from' | 'to'>,
      payment: StatementPart<'insert' | 'exists'>,
    ): Promise<StartResult | undefined> {
      return repo.startPayment(tx, { ...start, ...ORDER_PAYMENT_STARTED }, payment);
    },

    /**
     * A payment moved the order (the payments transition table decides `to`); compare-and-set on
     * the status `order` has.
     */
    async changeStatus(
      tx: Queryable,
      order: Pick<OrderRow, 'id' | 'account_id' | 'mode' | 'status'>,
      change: { to: OrderStatus; amountPaid: number; returnUrl: string | null; bankDetails: object },
    ): Promise<OrderRow | undefined> {
      return repo.changeStatus(tx, {
        accountId: order.account_id,
        mode: order.mode,
        id: order.id,
        from: order.status,
        to: change.to,
        amountPaid: change.amountPaid,
        returnUrl: change.returnUrl,
        bankDetails: change.bankDetails,
        updatedAt: clock.now(),
      });
    },

    async list(scope: Scope, query: OrderListFilter): Promise<Page<Order>> {
      const page = pageRequest('order', query);
      const rows = await repo.list(db, scope.accountId, scope.mode, page, {
        status: query.status,
        receipt: query.receipt,
        ...timeRange(query),
      });
      return toPage(rows, page.limit, toOrder);
    },
  };
}

export type OrdersService = ReturnType<typeof createOrdersService>;
