import path from 'node:path';
import { loadConfig } from '../config.js';
import { migrateDatabase, openDatabase } from '../db/open.js';
import { createFolderStore, moveFilesIntoDatabase } from '../modules/merchants/document-store.js';
import { createRepos } from '../repos.js';
import { overrides, type Parsed } from './options.js';

/**
 * `kosh documents migrate`: on PostgreSQL, moves the KYC files of this host's data folder into the
 * database (document-store.ts). Run on every host that received uploads before the upgrade; safe to
 * run again, and to kill. On PGlite the data folder is where documents are kept: nothing to do.
 */
export async function migrateDocuments(values: Parsed['values']): Promise<void> {
  const config = loadConfig(
    { ...process.env, KOSH_LOG_LEVEL: process.env.KOSH_LOG_LEVEL ?? 'warn' },
    overrides(values),
  );
  const folder = createFolderStore(path.join(config.dataDir, 'documents'));
  if (!config.databaseUrl) {
    const message = `Nothing to migrate: on the embedded database (PGlite) KYC documents are kept as files in ${folder.directory}, and stay there.`;
    process.stdout.write(
      values.json ? `${JSON.stringify({ store: 'folder', directory: folder.directory })}\n` : `${message}\n`,
    );
    return;
  }
  const db = await openDatabase(config);
  try {
    await migrateDatabase(config, db);
    const report = await moveFilesIntoDatabase({
      db,
      repo: createRepos().documents,
      folder,
      now: () => new Date(),
    });
    if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else {
      for (const [key, value] of Object.entries(report)) {
        process.stdout.write(`${key.padEnd(16)} ${value}\n`);
      }
    }
    const problems = report.missing_file + report.hash_mismatch;
    // The report is printed either way; problems make the command fail (exit status 1).
    if (problems > 0) {
      process.exitCode = 1;
      process.stderr.write(
        `kosh: ${problems} document(s) not moved from ${folder.directory}: ${report.missing_file} without a file here ` +
          `(another host may have it: run this command there), ${report.hash_mismatch} whose file does not match ` +
          'its SHA-256 (left in place for review).\n',
      );
    }
  } finally {
    await db.close();
  }
}
