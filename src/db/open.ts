import type { Config } from '../config.js';
import type { Db } from './db.js';
import { loadMigrations, type MigrateOptions, migrate } from './migrate.js';
import { openPglite } from './pglite.js';
import { checkReachable, openPostgres } from './postgres.js';

/**
 * The database the configuration names: PostgreSQL at DATABASE_URL (checked reachable, or closed
 * again and the error thrown), otherwise the embedded PGlite in the data folder.
 */
export async function openDatabase(config: Config): Promise<Db> {
  if (config.databaseUrl) {
    const db = openPostgres(config.databaseUrl, {
      poolSize: config.dbPoolSize,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      statementTimeoutMs: config.dbStatementTimeoutMs,
      transactionGuard: config.transactionGuard,
    });
    await checkReachable(db, config.databaseUrl).catch(async (error: unknown) => {
      await db.close();
      throw error;
    });
    return db;
  }
  return openPglite({
    dataDir: config.dataDir,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    transactionGuard: config.transactionGuard,
  });
}

/**
 * Applies the pending migrations to `db`. On PostgreSQL they run on a connection of their own
 * without `KOSH_DB_STATEMENT_TIMEOUT_MS`: building an index over a large table, or waiting while
 * another host applies the same migrations (their advisory lock), may take longer than any
 * request should, and a timeout there would stop the host from starting.
 */
export async function migrateDatabase(
  config: Pick<Config, 'databaseUrl' | 'dbConnectTimeoutMs' | 'transactionGuard'>,
  db: Db,
  migrations = loadMigrations(),
  options: MigrateOptions = {},
): Promise<string[]> {
  if (!config.databaseUrl || db.kind !== 'postgres') return migrate(db, migrations, options);
  const unhurried = openPostgres(config.databaseUrl, {
    poolSize: 1,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    statementTimeoutMs: 0,
    transactionGuard: config.transactionGuard,
  });
  try {
    return await migrate(unhurried, migrations, options);
  } finally {
    await unhurried.close();
  }
}
