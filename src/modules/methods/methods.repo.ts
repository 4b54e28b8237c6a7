import type { Queryable } from '../../db/db.js';
import type { Mode } from '../../domain/scope.js';
import type { MethodsConfig } from './methods.js';

/**
 * The `account_methods` table: one methods configuration per account and mode. A live row holds
 * NULL while the merchant's partner has never chosen its live methods (migration 0014).
 */
export function createMethodsRepo() {
  return {
    /** Both modes' rows of a new account, left as they are when they exist (`live` null: not chosen). */
    async insertInitial(
      tx: Queryable,
      accountId: string,
      test: MethodsConfig,
      live: MethodsConfig | null,
    ): Promise<void> {
      await tx.query(
        `INSERT INTO account_methods (account_id, mode, methods) VALUES ($1, 'test', $2), ($1, 'live', $3)
         ON CONFLICT DO NOTHING`,
        [accountId, test, live],
      );
    },

    /**
     * The row's configuration: undefined without a row (not a merchant), null when never chosen.
     * `lock` takes the row lock, for a read-modify-write in the caller's transaction.
     */
    async find(
      db: Queryable,
      accountId: string,
      mode: Mode,
      lock = false,
    ): Promise<MethodsConfig | null | undefined> {
      const [row] = await db.query<{ methods: MethodsConfig | null }>(
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
