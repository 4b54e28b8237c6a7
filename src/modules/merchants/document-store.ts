import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db, Queryable } from '../../db/db.js';
import type { DocumentsRepo } from './documents.repo.js';

/**
 * Where the bytes of KYC documents live. On PostgreSQL, in the database (kyc_document_contents),
 * written in the transaction of the document's row: every host sharing the database reads them.
 * On PGlite, one host owns the database and its data folder: files in `<dataDir>/documents/`,
 * written before the row and removed if the row is not committed.
 */
export interface DocumentStore {
  readonly where: 'database' | 'folder';
  /** Before the document's transaction (never inside one): the folder writes the file now. */
  prepare(storageName: string, content: Buffer): Promise<void>;
  /** In the document's transaction, right after its row. */
  record(tx: Queryable, storageName: string, content: Buffer, at: Date): Promise<void>;
  /** The row was not committed: undoes `prepare`. */
  discard(storageName: string): Promise<void>;
  /** A stored document's bytes; undefined when this store does not have them. */
  read(on: Db, storageName: string): Promise<Buffer | undefined>;
}

export function sha256Of(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Storage names are made by Kosh (32 random hex characters), never taken from a client. */
function checkStorageName(storageName: string): void {
  if (!/^[0-9a-f]{32}$/.test(storageName)) throw new Error('not a storage name');
}

/**
 * Writes a file that must not exist yet; a file already there with the same bytes is the one an
 * earlier attempt of the same request wrote (a resumed upload), anything else is refused.
 */
async function writeOnce(file: string, content: Buffer): Promise<void> {
  try {
    await fs.writeFile(file, content, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const present = await fs.readFile(file);
    if (!present.equals(content)) throw error;
  }
}

async function readIfThere(file: string): Promise<Buffer | undefined> {
  try {
    return await fs.readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** `<dataDir>/documents/` (mode 0700, files 0600): a folder nothing serves. */
export function createFolderStore(directory: string) {
  const pathOf = (storageName: string) => {
    checkStorageName(storageName);
    return path.join(directory, storageName);
  };
  return {
    where: 'folder' as const,
    directory,
    pathOf,
    async prepare(storageName: string, content: Buffer) {
      await fs.mkdir(directory, { recursive: true, mode: 0o700 });
      await writeOnce(pathOf(storageName), content);
    },
    async record() {},
    async discard(storageName: string) {
      await fs.rm(pathOf(storageName), { force: true });
    },
    async read(on: Db, storageName: string) {
      on.assertNoTransaction('KYC file read');
      return readIfThere(pathOf(storageName));
    },
  };
}

export type FolderStore = ReturnType<typeof createFolderStore>;

/**
 * The database; a document stored before its bytes went there (an upgrade) is read from this host's
 * folder until `kosh documents migrate` has moved it.
 */
export function createDatabaseStore(repo: DocumentsRepo, folder: FolderStore): DocumentStore {
  return {
    where: 'database',
    async prepare() {},
    async record(tx, storageName, content, at) {
      await repo.insertContent(tx, storageName, content, at);
    },
    async discard() {},
    async read(on, storageName) {
      // Asked again after the folder: `kosh documents migrate` may have moved the file meanwhile.
      return (
        (await repo.content(on, storageName)) ??
        (await folder.read(on, storageName)) ??
        (await repo.content(on, storageName))
      );
    },
  };
}

export interface MoveReport {
  moved: number;
  already_stored: number;
  missing_file: number;
  hash_mismatch: number;
}

/**
 * `kosh documents migrate`: the files of documents whose bytes are not in the database yet go
 * there. Per document: read the file, check its SHA-256 against the row, insert the bytes (a
 * commit of its own), then delete the file. Killed at any point, a second run finishes the job: a
 * document already stored only has its left-over file removed. A file that is missing or does not
 * match its SHA-256 is counted and left as it is.
 */
export async function moveFilesIntoDatabase(deps: {
  db: Db;
  repo: DocumentsRepo;
  folder: FolderStore;
  now: () => Date;
}): Promise<MoveReport> {
  const { db, repo, folder } = deps;
  db.assertNoTransaction('KYC file migration');
  const report: MoveReport = { moved: 0, already_stored: 0, missing_file: 0, hash_mismatch: 0 };
  let after: string | null = null;
  for (;;) {
    const page = await repo.storedPage(db, after, 100);
    if (page.length === 0) return report;
    for (const document of page) {
      const file = folder.pathOf(document.storage_name);
      if (document.stored) {
        report.already_stored++;
        await fs.rm(file, { force: true });
        continue;
      }
      const content = await readIfThere(file);
      if (!content) {
        report.missing_file++;
      } else if (sha256Of(content) !== document.sha256) {
        report.hash_mismatch++;
      } else {
        // False when a concurrent run stored them meanwhile: the same verified bytes either way.
        const inserted = await repo.insertContentOnce(db, document.storage_name, content, deps.now());
        await fs.rm(file, { force: true });
        if (inserted) report.moved++;
        else report.already_stored++;
      }
    }
    after = page[page.length - 1]!.id;
  }
}
