import type { Queryable } from '../../db/db.js';
import type { Mode } from '../../domain/scope.js';
import type { MethodsConfig } from './methods.js';

/** The `account_methods` table: one methods configuration per account and mode. */
export function createMethodsRepo() {
  return {
    /** Both modes' rows of a new account, left as they are when they exist. */
    async insertInitial(
      tx: Queryable,
      accountId: string,
      test: MethodsConfig,
      live: MethodsConfig,
    ): Promise<void> {
      await tx.query(
        `INSERT INTO account_methods (account_id, mode, methods) VALUES ($1, 'test', $2), ($1, 'live', $3)
         ON CONFLICT DO NOTHING`,
        [accountId, test, live],
      );
    },

    /** `lock` takes the row lock, for a read-modify-write in the caller's transaction. */
    async find(
      db: Queryable,
      accountId: string,
      mode: Mode,
      lock = false,
    ): Promise<MethodsConfig | undefined> {
      const [row] = await db.query<{ methods: MethodsConfig }>(
        `SELECT methods FROM account_methods WHERE account_id = $1 AND mode = $2${lock ? ' FOR UPDATE' : ''}`,
        [accountId, mode],
      );
      return row?.methods;
    },

    async upsert(tx: Queryable, accountId: string, mode: Mode, methods: MethodsConfig): Promise<void> {
      await tx.query(
        `INSERT INTO account_methods (account_id, mode, methods, updated_at) VALUES ($1, $2, $3, now())
         ON CONFLICT (account_id, mode) DO UPDATE SET methods = EXCLUDED.methods, updated_at = now()`,
        [accountId, mode, methods],
      );
    },
  };
}

export type MethodsRepo = ReturnType<typeof createMethodsRepo>;
