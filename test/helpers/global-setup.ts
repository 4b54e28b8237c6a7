import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/db/migrate.js';
import { openPglite } from '../../src/db/pglite.js';
import { openPostgres } from '../../src/db/postgres.js';
import buildService from '../faults/support/build.js';

/**
 * Once per run: a migrated PostgreSQL template database (each test file clones it) and a migrated
 * PGlite snapshot (each test file loads it). PostgreSQL is required: without it the run fails.
 */
export const ADMIN_URL = process.env.KOSH_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresAdminUrl: string;
    postgresTemplate: string;
    pgliteSnapshot: string;
  }
}

export default async function setup(project: TestProject) {
  // Tests that start `kosh` processes run the compiled service: a plain `node` start, not a
  // TypeScript loader in every process.
  buildService();
  const template = `kosh_tpl_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5_000 });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL is required for the test suite and was not reachable at ${ADMIN_URL} (set KOSH_TEST_DATABASE_URL): ${(error as Error).message}`,
    );
  }
  await admin.query(`CREATE DATABASE ${template}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${template}`;
  const templateDb = openPostgres(url.toString(), {
    poolSize: 1,
    connectTimeoutMs: 5_000,
    transactionGuard: true,
    statementTimeoutMs: 30_000,
  });
  await migrate(templateDb);
  await templateDb.close();

  const lite = await openPglite({ dataDir: undefined, connectTimeoutMs: 5_000, transactionGuard: true });
  await migrate(lite);
  const snapshot = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-test-')), 'pglite.tar');
  fs.writeFileSync(snapshot, Buffer.from(await (await lite.pglite.dumpDataDir('none')).arrayBuffer()));
  await lite.close();

  project.provide('postgresAdminUrl', ADMIN_URL);
  project.provide('postgresTemplate', template);
  project.provide('pgliteSnapshot', snapshot);

  return async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await admin.end();
    fs.rmSync(path.dirname(snapshot), { recursive: true, force: true });
  };
}
