import type { PreparedStatement, Queryable, StatementPart } from '../../db/db.js';
import type { PageRequest } from '../../domain/pagination.js';
import type { Mode } from '../../domain/scope.js';
import type { OrderStatus } from './order.transitions.js';
import type { OrderRow } from './orders.model.js';

export type { OrderRow, OrderStatus };

const COLUMNS =
  'id, account_id, mode, amount, currency, status, receipt, metadata, return_url, return_method, amount_paid, bank_details, created_at';

// The hot statements are prepared (parsed and planned once per connection). The list has one
// statement with a cursor and one without, so that a generic plan is an index range scan either way.
const INSERT: PreparedStatement = {
  name: 'orders_insert',
  text: `INSERT INTO orders (id, account_id, mode, amount, currency, status, receipt, metadata, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, 'created', $6, $7, $8, $8) RETURNING ${COLUMNS}`,
};
const FIND: PreparedStatement = {
  name: 'orders_find',
  text: `SELECT ${COLUMNS} FROM orders WHERE id = $1 AND account_id = $2 AND mode = $3`,
};
const FIND_FOR_UPDATE: PreparedStatement = {
  name: 'orders_find_for_update',
  text: `${FIND.text} FOR UPDATE`,
};
const CHANGE_STATUS: PreparedStatement = {
  name: 'orders_change_status',
  text: `UPDATE orders SET status = $4, amount_paid = $5, return_url = coalesce($6, return_url), bank_details = $7, updated_at = $8
          WHERE id = $1 AND account_id = $2 AND mode = $3 AND status = $9
          RETURNING ${COLUMNS}`,
};
const LIST_FIRST: PreparedStatement = {
  name: 'orders_list_first',
  text: `SELECT ${COLUMNS} FROM orders WHERE account_id = $1 AND mode = $2 ORDER BY id DESC LIMIT $3`,
};
const LIST_AFTER: PreparedStatement = {
  name: 'orders_list_after',
  text: `SELECT ${COLUMNS} FROM orders WHERE account_id = $1 AND mode = $2 AND id < $4 ORDER BY id DESC LIMIT $3`,
};

/** What the order looked like when a payment tried to start on it; `started` says whether it did. */
export interface StartResult {
  status: OrderStatus;
  amount: string;
  currency: string;
  started: boolean;
  /** A payment with this id existed already (a resumed Idempotency-Key request): nothing was written. */
  existed: boolean;
}

/** The order's part of starting a payment: which order, the states that accept it, and its move. */
export interface PaymentStart {
  accountId: string;
  mode: Mode;
  orderId: string;
  amount: number;
  currency: string;
  from: readonly OrderStatus[];
  to: OrderStatus;
  returnUrl: string | null;
  bankDetails: object;
  at: Date;
}

/** Parameters of the order's part of the start statement; the payment's part is numbered after them. */
const START_PARAMS = 10;

/**
 * Starting a payment in ONE statement (one round trip, its own transaction): lock the order, let the
 * payment's insert (the payments module's part, reading `gate`) through only if the order may take
 * it (status among `$4`, same amount and currency), and move the order to `$7` with the payment's
 * return URL and bank details. The order row is locked before anything is written, so a capture
 * on the same order cannot interleave. When nothing was inserted the row still says why (not
 * found, paid, another amount or currency, or a payment of this id exists already). The update
 * names the order by `$1`, not by a join on the inserted row: the planner cannot see through a join
 * on a data-modifying CTE and would scan every order of the account.
 */
function startStatement(payment: StatementPart<'insert' | 'exists'>): PreparedStatement {
  const shift = (text: string) => text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + START_PARAMS}`);
  return {
    name: `orders_start_${payment.name}`,
    text: `WITH target AS (
           SELECT status, amount, currency FROM orders
            WHERE id = $1 AND account_id = $2 AND mode = $3
            FOR UPDATE
         ), gate AS (
           SELECT 1 FROM target
            WHERE target.status = ANY ($4::text[]) AND target.amount = $5::bigint AND target.currency = $6::text
         ), payment AS (
           ${shift(payment.texts.insert)}
         ), moved AS (
           UPDATE orders SET status = $7, return_url = coalesce($8, orders.return_url), bank_details = $9, updated_at = $10
            WHERE EXISTS (SELECT 1 FROM payment)
              AND orders.id = $1 AND orders.account_id = $2 AND orders.mode = $3
              AND orders.status = ANY ($4::text[])
           RETURNING orders.id
         )
         SELECT status, amount, currency, EXISTS (SELECT 1 FROM moved) AS started,
                EXISTS (${shift(payment.texts.exists)}) AS existed
           FROM target`,
  };
}

/** The composed statements, by the payment part's name: composed once per process. */
const startStatements = new Map<string, PreparedStatement>();

/** What an orders list can be narrowed to. */
export interface OrderFilter {
  status?: string | undefined;
  receipt?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

export function createOrdersRepo() {
  return {
    async insert(
      db: Queryable,
      order: {
        id: string;
        accountId: string;
        mode: Mode;
        amount: number;
        currency: string;
        receipt: string | null;
        metadata: object;
        createdAt: Date;
      },
    ): Promise<OrderRow> {
      const [row] = await db.query<OrderRow>(INSERT, [
        order.id,
        order.accountId,
        order.mode,
        order.amount,
        order.currency,
        order.receipt,
        order.metadata,
        order.createdAt,
      ]);
      return row!;
    },

    /**
     * Starts a payment on the order: the payments module's insert and the order's move in one
     * statement; undefined when the order does not exist for this account and mode.
     */
    async startPayment(
      db: Queryable,
      start: PaymentStart,
      payment: StatementPart<'insert' | 'exists'>,
    ): Promise<StartResult | undefined> {
      let statement = startStatements.get(payment.name);
      if (!statement) {
        statement = startStatement(payment);
        startStatements.set(payment.name, statement);
      }
      const [row] = await db.query<StartResult>(statement, [
        start.orderId,
        start.accountId,
        start.mode,
        start.from,
        start.amount,
        start.currency,
        start.to,
        start.returnUrl,
        start.bankDetails,
        start.at,
        ...payment.params,
      ]);
      return row;
    },

    /** Tenant-scoped: another account's or another mode's order is simply not found. */
    async find(
      db: Queryable,
      accountId: string,
      mode: Mode,
      id: string,
      forUpdate = false,
    ): Promise<OrderRow | undefined> {
      const [row] = await db.query<OrderRow>(forUpdate ? FIND_FOR_UPDATE : FIND, [id, accountId, mode]);
      return row;
    },

    /** Compare-and-set on the status; undefined when the order was not in `from` (or is not this tenant's). */
    async changeStatus(
      tx: Queryable,
      change: {
        accountId: string;
        mode: Mode;
        id: string;
        from: OrderStatus;
        to: OrderStatus;
        amountPaid: number;
        returnUrl: string | null;
        bankDetails: object;
        updatedAt: Date;
      },
    ): Promise<OrderRow | undefined> {
      const [row] = await tx.query<OrderRow>(CHANGE_STATUS, [
        change.id,
        change.accountId,
        change.mode,
        change.to,
        change.amountPaid,
        change.returnUrl,
        change.bankDetails,
        change.updatedAt,
        change.from,
      ]);
      return row;
    },

    async list(
      db: Queryable,
      accountId: string,
      mode: Mode,
      page: PageRequest,
      filter: OrderFilter = {},
    ): Promise<OrderRow[]> {
      if (Object.values(filter).every((value) => value === undefined)) {
        // The common case, a plain page: prepared statements (planned once per connection).
        return page.cursor === undefined
          ? db.query<OrderRow>(LIST_FIRST, [accountId, mode, page.limit + 1])
          : db.query<OrderRow>(LIST_AFTER, [accountId, mode, page.limit + 1, page.cursor]);
      }
      return db.query<OrderRow>(
        `SELECT ${COLUMNS} FROM orders
          WHERE account_id = $1 AND mode = $2 AND ($4::text IS NULL OR id < $4)
            AND ($5::text IS NULL OR status = $5) AND ($6::text IS NULL OR receipt = $6)
            AND ($7::timestamptz IS NULL OR created_at >= $7) AND ($8::timestamptz IS NULL OR created_at < $8)
          ORDER BY id DESC LIMIT $3`,
        [
          accountId,
          mode,
          page.limit + 1,
          page.cursor ?? null,
          filter.status ?? null,
          filter.receipt ?? null,
          filter.from ?? null,
          filter.to ?? null,
        ],
      );
    },
  };
}

export type OrdersRepo = ReturnType<typeof createOrdersRepo>;
