import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import { createPoolDb, createTransactionGuard, type Db } from './db.js';

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `The data folder ${dataDir} is in use by another Kosh process (pid ${pid}). ` +
        'The embedded database serves one process at a time; stop that process, or use DATABASE_URL=postgres://… to run several.',
    );
    this.name = 'DataDirLockedError';
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite takes no lock on its folder and two processes on one folder lose committed rows, so Kosh
 * holds `kosh.lock` (created exclusively, holding our pid) for as long as the database is open.
 * A lock left by a process that no longer runs is taken over.
 */
function acquireLock(dataDir: string): () => void {
  const lockPath = path.join(dataDir, 'kosh.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(lockPath, 'wx', 0o600);
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      return () => {
        try {
          if (fs.readFileSync(lockPath, 'utf8') === String(process.pid)) fs.unlinkSync(lockPath);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(fs.readFileSync(lockPath, 'utf8'), 10);
      if (Number.isInteger(holder) && holder !== process.pid && processAlive(holder)) {
        throw new DataDirLockedError(dataDir, holder);
      }
      fs.rmSync(lockPath, { force: true });
    }
  }
  throw new Error(`Could not take the lock ${lockPath}.`);
}

export interface PgliteOptions {
  /** A folder to persist in, or undefined for an in-memory database (tests). */
  dataDir: string | undefined;
  /** A tarball from `dumpDataDir` to start from (tests start from a migrated snapshot). */
  loadDataDir?: Blob;
  connectTimeoutMs: number;
  /** Refuse calls that leave the process inside a transaction (db.ts, `createTransactionGuard`). */
  transactionGuard: boolean;
}

export async function openPglite(options: PgliteOptions): Promise<Db & { pglite: PGlite }> {
  let release = () => {};
  if (options.dataDir) {
    fs.mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    release = acquireLock(options.dataDir);
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
    closeExtra: async () => {
      await pglite.close();
      release();
    },
  });
  return Object.assign(db, { pglite });
}
