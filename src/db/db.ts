import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';
import { KoshError } from '../domain/errors.js';
import { type BatchStatement, isParsed, runBatch } from './batch.js';

/**
 * A statement PostgreSQL parses and plans once per connection and then only executes. For the hot
 * path only: the name must be unique across Kosh and always carry the same text.
 */
export interface PreparedStatement {
  name: string;
  text: string;
}

/**
 * One module's part of a statement another module runs (one round trip across two tables, each
 * written only by its own module): named texts with parameters numbered from $1, which the running
 * module renumbers after its own. `name` is stable for the same texts, so the whole is prepared.
 */
export interface StatementPart<Texts extends string> {
  name: string;
  texts: Record<Texts, string>;
  params: unknown[];
}

/**
 * Told of every round trip a database handle makes, with the statements it carried (a prepared
 * statement's name, or the SQL text): how tests prove what the hot path sends.
 */
export type RoundTripObserver = (statements: readonly string[]) => void;

/** The one query interface every repository uses: plain SQL with positional parameters. */
export interface Queryable {
  query<Row = Record<string, unknown>>(
    text: string | PreparedStatement,
    params?: readonly unknown[],
  ): Promise<Row[]>;
  /**
   * Sends the statements `issue` starts on this handle before it first awaits (for example the
   * queries of a `Promise.all`) to the database together: one write and one round trip in a
   * transaction, with the transaction's deferred BEGIN in front when it is its first. They still
   * run one after another, in the order issued, and a failing one fails them all (the transaction
   * is aborted anyway). Outside a transaction each statement goes on its own, as always.
   */
  together<T>(issue: () => Promise<T>): Promise<T>;
  /**
   * A write whose rows the caller does not need (an event): in a transaction it is sent with the
   * COMMIT, in the same round trip, and the promise resolves at once; if it fails, the transaction
   * fails and nothing of it is kept. Statements of the transaction do not see it. In a nested
   * transaction (a savepoint), or outside a transaction, it is sent now.
   */
  atCommit(text: string | PreparedStatement, params?: readonly unknown[]): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Runs `work` in one transaction (READ COMMITTED); commits on return, rolls back on throw. `work`
   * gets a `Db` bound to the transaction: its `query` runs inside it and its `transaction` is a
   * SAVEPOINT of it, so code written against a `Db` composes with a caller's transaction when it is
   * handed that `Db` (the Idempotency-Key wrapper wires the request's services to it). There is
   * no ambient transaction: a query sent through another handle runs on another connection.
   * BEGIN travels with the transaction's first statement (one round trip, not two), and a
   * transaction that sent nothing sends neither BEGIN nor COMMIT.
   */
  transaction<T>(work: (tx: Db) => Promise<T>): Promise<T>;
  /** True for a handle bound to a transaction. */
  inTransaction(): boolean;
  /**
   * Throws when the calling unit of work runs inside a transaction of this database. Everything
   * that leaves the process (a provider, a webhook receiver, DNS, the file system) calls it first:
   * such a call must never hold a connection and locks while it waits. Off when the guard is off.
   */
  assertNoTransaction(call: string): void;
  /** Checks that the database answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * PostgreSQL only (other processes share it): receives the `NOTIFY`s of a channel on a connection
   * of its own, kept open and reopened after a loss (`reconnected` then says notifications may have
   * been missed). Absent on PGlite: one process owns that database, so nothing is missed.
   */
  listen?(channel: string, handlers: ChannelHandlers): Promise<() => Promise<void>>;
}

export interface ChannelHandlers {
  message(payload: string): void;
  reconnected(): void;
}

/** A call that leaves the process was made inside a transaction: a bug in Kosh, never the caller's fault. */
export class CallInTransactionError extends Error {
  constructor(call: string) {
    super(
      `${call} must not run inside a database transaction: record the intent, commit, call, record the result.`,
    );
    this.name = 'CallInTransactionError';
  }
}

/**
 * Knows, for the current unit of work, whether a transaction is open: the transaction's work runs
 * inside an AsyncLocalStorage scope, which follows it across every await. Tracking contexts costs
 * every promise in the process something (Node 20's promise hooks), so the storage is switched off
 * whenever no transaction is open, and the request paths that open none pay nothing.
 * `enabled: false` (an operator's choice, KOSH_TRANSACTION_GUARD) skips the scope and the checks.
 */
export function createTransactionGuard(enabled: boolean) {
  const scope = new AsyncLocalStorage<true>();
  let open = 0;
  return {
    enabled,
    async within<T>(work: () => Promise<T>): Promise<T> {
      if (!enabled) return work();
      open++;
      try {
        return await scope.run(true, work);
      } finally {
        open--;
        if (open === 0) scope.disable();
      }
    },
    check(call: string): void {
      if (enabled && scope.getStore()) throw new CallInTransactionError(call);
    },
  };
}
export type TransactionGuard = ReturnType<typeof createTransactionGuard>;

/** SQLSTATE of a PostgreSQL error, if it is one. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** An error the SQL itself caused (a constraint, a bad value, a timeout): the connection is still sound. */
function isSqlError(error: unknown): boolean {
  const state = sqlState(error);
  return (
    state !== undefined && !state.startsWith('08') && !state.startsWith('57P') && !state.startsWith('53')
  );
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (sqlState(error) !== '23505') return false;
  return constraint === undefined || (error as { constraint?: string }).constraint === constraint;
}

/** A row the database refused for breaking the named rule (a CHECK constraint or a rule trigger). */
export function isCheckViolation(error: unknown, constraint: string): boolean {
  return sqlState(error) === '23514' && (error as { constraint?: string }).constraint === constraint;
}

/**
 * A database that cannot be reached is the service's problem, not the caller's: it becomes a 503
 * with a stable code. Errors from SQL itself pass through untouched.
 */
function classify(error: unknown): unknown {
  if (error instanceof KoshError) return error;
  const state = sqlState(error);
  if (state === undefined || state.startsWith('08') || state.startsWith('53') || state.startsWith('57')) {
    const message = error instanceof Error ? error.message : String(error);
    const unavailable = new KoshError('service_unavailable', 'The database is unavailable; retry shortly.');
    unavailable.cause = message;
    return unavailable;
  }
  return error;
}

/**
 * A connection checked out of the pool. A connection lost while it is checked out (the server
 * restarts or ends the session between two statements) is reported as an 'error' event on the
 * client, which would end the process without a listener: it is listened for, the next statement
 * fails anyway, and `giveBack` then discards the connection instead of returning it.
 */
async function checkout(pool: pg.Pool): Promise<{ client: pg.PoolClient; giveBack(discard: boolean): void }> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw classify(error);
  }
  let lost = false;
  const onError = () => {
    lost = true;
  };
  client.on('error', onError);
  return {
    client,
    giveBack(discard) {
      client.off('error', onError);
      client.release(discard || lost);
    },
  };
}

/**
 * Statements issued on a transaction's handle before it has sent anything wait to go with BEGIN;
 * inside `together` they wait for the rest of their batch.
 */
interface TransactionState {
  begun: boolean;
  /** `atCommit` writes, sent with the COMMIT. */
  deferred: BatchStatement[];
  collecting: Array<{ statement: BatchStatement; settle(error: unknown, rows?: unknown[]): void }> | null;
}

/** One implementation over a `pg.Pool` serves both back ends: PGlite provides a node-postgres connection. */
export function createPoolDb(
  pool: pg.Pool,
  kind: Db['kind'],
  options: { guard: TransactionGuard; closeExtra?: () => Promise<void>; onRoundTrip?: RoundTripObserver },
): Db {
  const { guard } = options;
  const observe = options.onRoundTrip ?? (() => {});
  const assertNoTransaction = (call: string) => guard.check(call);
  const run = async <Row>(
    client: pg.PoolClient,
    text: string | PreparedStatement,
    params?: readonly unknown[],
  ) => {
    const values = params as unknown[] | undefined;
    observe([typeof text === 'string' ? text : text.name]);
    if (typeof text === 'string') return (await client.query(text, values)).rows as Row[];
    const [rows] = await runBatch(client, [{ name: text.name, text: text.text, values }]);
    return rows as Row[];
  };
  const query = async <Row>(
    client: pg.PoolClient,
    text: string | PreparedStatement,
    params?: readonly unknown[],
  ) => {
    try {
      return await run<Row>(client, text, params);
    } catch (error) {
      throw classify(error);
    }
  };
  /**
   * A statement on its own connection from the pool. Not `pool.query`: it discards the connection
   * after any error, and an error of the SQL itself (a constraint, a bad value) leaves the
   * connection sound. PGlite has one connection and cannot open another: discarding it would leave
   * the service without a database.
   */
  const queryPool = async <Row>(text: string | PreparedStatement, params?: readonly unknown[]) => {
    const connection = await checkout(pool);
    let failure: unknown;
    try {
      return await run<Row>(connection.client, text, params);
    } catch (error) {
      failure = error;
      throw classify(error);
    } finally {
      connection.giveBack(failure !== undefined && !isSqlError(failure));
    }
  };

  const asBatchStatement = (text: string | PreparedStatement, params?: readonly unknown[]): BatchStatement =>
    typeof text === 'string'
      ? { text, values: params }
      : { name: text.name, text: text.text, values: params };

  /**
   * Sends `statements` (and BEGIN first when `begin`) in one round trip when every prepared one is
   * parsed on this connection already; otherwise one by one (a statement's first use on a connection).
   */
  const sendTogether = async (
    client: pg.PoolClient,
    statements: BatchStatement[],
    begin: boolean,
  ): Promise<unknown[][]> => {
    const known = statements.every(
      (statement) => statement.name === undefined || isParsed(client, statement.name, statement.text),
    );
    try {
      if (known) {
        const batch = begin ? [{ text: 'BEGIN' }, ...statements] : statements;
        observe(batch.map((statement) => statement.name ?? statement.text));
        const rows = await runBatch(client, batch);
        return begin ? rows.slice(1) : rows;
      }
      if (begin) await run(client, 'BEGIN');
      const rows: unknown[][] = [];
      for (const { name, text, values } of statements) {
        rows.push(await run(client, name === undefined ? text : { name, text }, values));
      }
      return rows;
    } catch (error) {
      throw classify(error);
    }
  };

  /** Sends statements of a transaction together, with its BEGIN in front if it has sent nothing yet. */
  const sendInTransaction = (
    client: pg.PoolClient,
    state: TransactionState,
    statements: BatchStatement[],
  ) => {
    const begin = !state.begun;
    state.begun = true;
    return sendTogether(client, statements, begin);
  };

  function boundTo(client: pg.PoolClient, depth: number, state: TransactionState): Db {
    const handle: Db = {
      kind,
      query<Row>(text: string | PreparedStatement, params?: readonly unknown[]): Promise<Row[]> {
        const collecting = state.collecting;
        if (collecting) {
          return new Promise<Row[]>((resolve, reject) => {
            collecting.push({
              statement: asBatchStatement(text, params),
              settle: (error, rows) => (error === undefined ? resolve(rows as Row[]) : reject(error)),
            });
          });
        }
        if (!state.begun) {
          return sendInTransaction(client, state, [asBatchStatement(text, params)]).then(
            ([rows]) => rows as Row[],
          );
        }
        return query<Row>(client, text, params);
      },
      async together(issue) {
        if (state.collecting) return issue();
        const collected: NonNullable<TransactionState['collecting']> = [];
        state.collecting = collected;
        let result: ReturnType<typeof issue>;
        try {
          result = issue();
        } finally {
          state.collecting = null;
        }
        if (collected.length > 0) {
          try {
            const rows = await sendInTransaction(
              client,
              state,
              collected.map((each) => each.statement),
            );
            for (const [index, each] of collected.entries()) each.settle(undefined, rows[index]);
          } catch (error) {
            for (const each of collected) each.settle(error);
          }
        }
        return result;
      },
      async atCommit(text, params) {
        if (depth > 0) {
          await handle.query(text, params);
          return;
        }
        state.deferred.push(asBatchStatement(text, params));
      },
      inTransaction: () => true,
      assertNoTransaction,
      async transaction(work) {
        const savepoint = `kosh_sp_${depth + 1}`;
        await handle.query(`SAVEPOINT ${savepoint}`);
        try {
          const result = await work(boundTo(client, depth + 1, state));
          await query(client, `RELEASE SAVEPOINT ${savepoint}`);
          return result;
        } catch (error) {
          // A failed statement aborts the transaction until the savepoint is rolled back; undo just this part.
          await query(client, `ROLLBACK TO SAVEPOINT ${savepoint}`).catch(() => {});
          throw error;
        }
      },
      ping: async () => {
        await handle.query('SELECT 1');
      },
      close: async () => {
        throw new Error('A transaction handle cannot close the database.');
      },
    };
    return handle;
  }

  return {
    kind,
    query: (text, params) => queryPool(text, params),
    together: (issue) => issue(),
    async atCommit(text, params) {
      await queryPool(text, params);
    },
    inTransaction: () => false,
    assertNoTransaction,
    async transaction(work) {
      const connection = await checkout(pool);
      const { client } = connection;
      let broken = false;
      const state: TransactionState = { begun: false, deferred: [], collecting: null };
      try {
        const result = await guard.within(() => work(boundTo(client, 0, state)));
        if (state.deferred.length > 0) {
          await sendInTransaction(client, state, [...state.deferred, { text: 'COMMIT' }]);
        } else if (state.begun) {
          await query(client, 'COMMIT');
        }
        return result;
      } catch (error) {
        try {
          if (state.begun) await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        throw error;
      } finally {
        connection.giveBack(broken);
      }
    },
    async ping() {
      await queryPool('SELECT 1');
    },
    async close() {
      await pool.end();
      await options.closeExtra?.();
    },
  };
}
