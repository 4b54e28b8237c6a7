import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';
import { KoshError } from '../domain/errors.js';

/**
 * A statement PostgreSQL parses and plans once per connection and then only executes. For the hot
 * path only: the name must be unique across Kosh and always carry the same text.
 */
export interface PreparedStatement {
  name: string;
  text: string;
}

/** The one query interface every repository uses: plain SQL with positional parameters. */
export interface Queryable {
  query<Row = Record<string, unknown>>(
    text: string | PreparedStatement,
    params?: readonly unknown[],
  ): Promise<Row[]>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Runs `work` in one transaction (READ COMMITTED); commits on return, rolls back on throw.
   * Inside a transaction (the ambient one of the current async context, see `inTransaction`),
   * `db.query` joins it and a nested `db.transaction` becomes a SAVEPOINT of it, so code written
   * against `db` composes with a caller's transaction (the Idempotency-Key wrapper relies on this).
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** True when the current async context runs inside a transaction of this database. */
  inTransaction(): boolean;
  /** Checks that the database answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** SQLSTATE of a PostgreSQL error, if it is one. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (sqlState(error) !== '23505') return false;
  return constraint === undefined || (error as { constraint?: string }).constraint === constraint;
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

/** One implementation over a `pg.Pool` serves both back ends: PGlite provides a node-postgres connection. */
export function createPoolDb(
  pool: pg.Pool,
  kind: Db['kind'],
  closeExtra: () => Promise<void> = async () => {},
): Db {
  const query = async <Row>(
    client: pg.Pool | pg.PoolClient,
    text: string | PreparedStatement,
    params?: readonly unknown[],
  ) => {
    try {
      const values = params as unknown[] | undefined;
      const result =
        typeof text === 'string'
          ? await client.query(text, values)
          : await client.query({ name: text.name, text: text.text, values });
      return result.rows as Row[];
    } catch (error) {
      throw classify(error);
    }
  };

  // The transaction of the current async context: the client holding it and how deep the
  // SAVEPOINTs nest. Keyed per Db so two databases in one process never share a client.
  const ambient = new AsyncLocalStorage<{ client: pg.PoolClient; depth: number }>();

  async function nested<T>(
    scope: { client: pg.PoolClient; depth: number },
    work: (tx: Queryable) => Promise<T>,
  ): Promise<T> {
    const savepoint = `kosh_sp_${scope.depth + 1}`;
    const inner = { client: scope.client, depth: scope.depth + 1 };
    await query(scope.client, `SAVEPOINT ${savepoint}`);
    try {
      const result = await ambient.run(inner, () =>
        work({ query: (text, params) => query(scope.client, text, params) }),
      );
      await query(scope.client, `RELEASE SAVEPOINT ${savepoint}`);
      return result;
    } catch (error) {
      // A failed statement aborts the transaction until the savepoint is rolled back; undo just this part.
      await query(scope.client, `ROLLBACK TO SAVEPOINT ${savepoint}`).catch(() => {});
      throw error;
    }
  }

  return {
    kind,
    query: (text, params) => query(ambient.getStore()?.client ?? pool, text, params),
    inTransaction: () => ambient.getStore() !== undefined,
    async transaction(work) {
      const scope = ambient.getStore();
      if (scope) return nested(scope, work);
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw classify(error);
      }
      let broken = false;
      // A connection lost while it is checked out (the server restarts between two statements of
      // this transaction) is reported as an 'error' event on the client; without a listener that
      // event would end the process. The next statement fails anyway, and the client is discarded.
      const lost = () => {
        broken = true;
      };
      client.on('error', lost);
      try {
        await query(client, 'BEGIN');
        const result = await ambient.run({ client, depth: 0 }, () =>
          work({ query: (text, params) => query(client, text, params) }),
        );
        await query(client, 'COMMIT');
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        throw error;
      } finally {
        client.off('error', lost);
        client.release(broken);
      }
    },
    async ping() {
      await query(pool, 'SELECT 1');
    },
    async close() {
      await pool.end();
      await closeExtra();
    },
  };
}
