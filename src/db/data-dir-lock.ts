import fs from 'node:fs';
import path from 'node:path';

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

/** The data folder cannot be made, or written. */
export class DataDirUnusableError extends Error {
  constructor(dataDir: string, reason: string) {
    super(`cannot use the data folder ${dataDir} (KOSH_DATA_DIR, or --data-dir): ${reason}.`);
    this.name = 'DataDirUnusableError';
  }
}

const UNUSABLE: Record<string, string> = {
  ENOTDIR: 'a part of its path is a file, not a folder',
  EEXIST: 'it is a file, not a folder',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space is left on the device',
};

/**
 * Refuses, in one sentence, a data folder that could not be made or written, without making it:
 * the folder itself when it exists, else the nearest folder above it that does.
 */
export function checkDataDirWritable(dataDir: string): void {
  const target = path.resolve(dataDir);
  let dir = target;
  for (;;) {
    let stats: fs.Stats;
    try {
      stats = fs.statSync(dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const parent = path.dirname(dir);
      if (code === 'ENOENT' && parent !== dir) {
        dir = parent;
        continue;
      }
      throw new DataDirUnusableError(dataDir, UNUSABLE[code ?? ''] ?? (error as Error).message);
    }
    if (!stats.isDirectory()) {
      throw new DataDirUnusableError(dataDir, dir === target ? UNUSABLE.EEXIST! : UNUSABLE.ENOTDIR!);
    }
    try {
      fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new DataDirUnusableError(dataDir, UNUSABLE[code ?? ''] ?? (error as Error).message);
    }
    return;
  }
}

/** Makes the data folder (mode 0700) if it is missing, and takes its lock (`acquireLock`). */
export function openDataDir(dataDir: string): () => void {
  try {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    return acquireLock(dataDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (error instanceof DataDirLockedError || code === undefined) throw error;
    throw new DataDirUnusableError(dataDir, UNUSABLE[code] ?? (error as Error).message);
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
export function acquireLock(dataDir: string): () => void {
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
