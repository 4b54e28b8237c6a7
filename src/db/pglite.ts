import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import { openDataDir } from './data-dir-lock.js';
import { createPoolDb, createTransactionGuard, type Db, type RoundTripObserver } from './db.js';

export { DataDirLockedError, DataDirUnusableError } from './data-dir-lock.js';

export interface PgliteOptions {
  /** A folder to persist in, or undefined for an in-memory database (tests). */
  dataDir: string | undefined;
  /** A tarball from `dumpDataDir` to start from (tests start from a migrated snapshot). */
  loadDataDir?: Blob;
  connectTimeoutMs: number;
  /** Refuse calls that leave the process inside a transaction (db.ts, `createTransactionGuard`). */
  transactionGuard: boolean;
  /** Told of every round trip (tests count what a request sends). */
  onRoundTrip?: RoundTripObserver;
}

export async function openPglite(options: PgliteOptions): Promise<Db & { pglite: PGlite }> {
  let release = () => {};
  if (options.dataDir) {
    release = openDataDir(options.dataDir);
  }
  let pglite: PGlite;
  try {
    pglite = await PGlite.create({
      dataDir: options.dataDir ? path.join(options.dataDir, 'pgdata') : undefined,
      loadDataDir: options.loadDataDir,
    });
  } catch (error) {
    release();
    throw error;
  }
  // PGlite is one session: a pool of one, and a connect timeout so that a query issued on the
  // outer handle while a transaction holds the session raises instead of waiting forever.
  const pool = new pg.Pool({
    ...createPgConfig(pglite),
    max: 1,
    connectionTimeoutMillis: options.connectTimeoutMs,
  });
  const db = createPoolDb(pool, 'pglite', {
    guard: createTransactionGuard(options.transactionGuard),
    onRoundTrip: options.onRoundTrip,
    closeExtra: async () => {
      await pglite.close();
      release();
    },
  });
  return Object.assign(db, { pglite });
}
