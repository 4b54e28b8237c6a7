import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.js';

/** Arbitrary constant: the advisory lock that serialises migrations across processes. */
const MIGRATION_LOCK_ID = 4_242_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** `migrations/` lives at the package root, beside `src/` and `dist/`. */
export function migrationsDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'migrations');
    if (fs.existsSync(candidate) && fs.existsSync(path.join(dir, 'package.json'))) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error('The migrations folder was not found beside package.json.');
}

export function loadMigrations(dir = migrationsDir()): Migration[] {
  const migrations = fs
    .readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number.parseInt(file.slice(0, 4), 10),
      name: file.replace(/\.sql$/, ''),
      sql: fs.readFileSync(path.join(dir, file), 'utf8'),
    }));
  migrations.forEach((migration, index) => {
    const previous = migrations[index - 1];
    if (previous && previous.version === migration.version) {
      throw new Error(
        `Two migrations share the number ${migration.version}: ${previous.name} and ${migration.name}.`,
      );
    }
  });
  return migrations;
}

/** The database is at a migration this Kosh does not know: an older build started on a newer schema. */
export class SchemaTooNewError extends Error {}

export interface MigrateOptions {
  /** Called once when another process holds the migration lock and this one waits for it. */
  onWait?: () => void;
}

/**
 * Applies the migrations not yet applied, forward only, in one transaction holding an advisory
 * lock: two processes starting at once apply each migration exactly once.
 */
export async function migrate(
  db: Db,
  migrations = loadMigrations(),
  options: MigrateOptions = {},
): Promise<string[]> {
  return db.transaction(async (tx) => {
    const [free] = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [
      MIGRATION_LOCK_ID,
    ]);
    if (!free?.locked) {
      options.onWait?.();
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
    }
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const rows = await tx.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((row) => row.version));
    const newest = Math.max(0, ...applied);
    // Compare with the highest known number, not the count: numbers are reserved per feature and
    // may have gaps.
    const known = Math.max(0, ...migrations.map((migration) => migration.version));
    if (newest > known) {
      throw new SchemaTooNewError(
        `The database is at migration ${newest}, newer than this Kosh (${known}). Upgrade Kosh.`,
      );
    }
    const done: string[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await tx.query(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      done.push(migration.name);
    }
    return done;
  });
}
