import pg from 'pg';
import { createPoolDb, createTransactionGuard, type Db } from './db.js';

// Timestamps and JSON as usual; int8 stays a string and is converted where it is read.
export interface PostgresOptions {
  poolSize: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  /** Refuse calls that leave the process inside a transaction (db.ts, `createTransactionGuard`). */
  transactionGuard: boolean;
}

export function openPostgres(connectionString: string, options: PostgresOptions): Db {
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs,
    statement_timeout: options.statementTimeoutMs,
    query_timeout: options.statementTimeoutMs + 1_000,
    idleTimeoutMillis: 30_000,
    application_name: 'kosh',
  });
  // An idle client losing its connection (server restart) must not crash the process;
  // the pool drops it and the next query opens a fresh one.
  pool.on('error', () => {});
  return createPoolDb(pool, 'postgres', { guard: createTransactionGuard(options.transactionGuard) });
}
