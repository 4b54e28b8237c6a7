import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import type { Db, RoundTripObserver } from '../../src/db/db.js';
import { openPglite } from '../../src/db/pglite.js';
import { openPostgres } from '../../src/db/postgres.js';

export const DATABASE_KINDS = ['pglite', 'postgres'] as const;
export type DatabaseKind = (typeof DATABASE_KINDS)[number];

/** A fresh, migrated database of its own for one test file; closing it drops it. */
export async function openTestDatabase(
  kind: DatabaseKind,
  options: { poolSize?: number; pgliteDir?: string; onRoundTrip?: RoundTripObserver } = {},
): Promise<Db & { url?: string }> {
  if (kind === 'pglite') {
    const snapshot = new Blob([fs.readFileSync(inject('pgliteSnapshot'))]);
    return openPglite({
      // In memory, unless a test needs the folder (a scan of what is stored on disk).
      dataDir: options.pgliteDir,
      loadDataDir: snapshot,
      connectTimeoutMs: 5_000,
      transactionGuard: true,
      onRoundTrip: options.onRoundTrip,
    });
  }
  const adminUrl = inject('postgresAdminUrl');
  const name = `kosh_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('postgresTemplate')}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = openPostgres(url.toString(), {
    poolSize: options.poolSize ?? 8,
    // Generous: with Chromium and two other test files on two cores, a new connection can wait
    // seconds for the CPU; a test's database being slow to connect is not what any test checks.
    connectTimeoutMs: 20_000,
    transactionGuard: true,
    statementTimeoutMs: 30_000,
    onRoundTrip: options.onRoundTrip,
  });
  const close = db.close;
  return Object.assign(db, {
    url: url.toString(),
    async close() {
      await close();
      const dropper = new pg.Client({ connectionString: adminUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    },
  });
}

/** An empty PostgreSQL database (no migrations) for tests of start-up itself; `drop` removes it. */
export async function createEmptyPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = inject('postgresAdminUrl');
  const name = `kosh_empty_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const dropper = new pg.Client({ connectionString: adminUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    },
  };
}
