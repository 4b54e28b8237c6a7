import type { Config } from '../config.js';
import type { Db } from './db.js';
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
