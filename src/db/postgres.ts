import pg from 'pg';
import {
  type ChannelHandlers,
  createPoolDb,
  createTransactionGuard,
  type Db,
  type RoundTripObserver,
} from './db.js';

// Timestamps and JSON as usual; int8 stays a string and is converted where it is read.
export interface PostgresOptions {
  poolSize: number;
  connectTimeoutMs: number;
  /** PostgreSQL's statement_timeout, and the client's wait for an answer a second longer; 0: none. */
  statementTimeoutMs: number;
  /** Refuse calls that leave the process inside a transaction (db.ts, `createTransactionGuard`). */
  transactionGuard: boolean;
  /** Told of every round trip (tests count what a request sends). */
  onRoundTrip?: RoundTripObserver;
}

export function openPostgres(connectionString: string, options: PostgresOptions): Db {
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs,
    // 0: no limit (migrations, src/db/open.ts); PostgreSQL reads a statement_timeout of 0 so too.
    statement_timeout: options.statementTimeoutMs,
    query_timeout: options.statementTimeoutMs > 0 ? options.statementTimeoutMs + 1_000 : undefined,
    idleTimeoutMillis: 30_000,
    application_name: 'kosh',
  });
  // An idle client losing its connection (server restart) must not crash the process;
  // the pool drops it and the next query opens a fresh one.
  pool.on('error', () => {});
  const db = createPoolDb(pool, 'postgres', {
    guard: createTransactionGuard(options.transactionGuard),
    onRoundTrip: options.onRoundTrip,
  });
  return Object.assign(db, {
    listen: (channel: string, handlers: ChannelHandlers) =>
      listen(connectionString, options, channel, handlers),
  });
}

/** The database a start was given cannot be used; said in one sentence, as a bad setting is. */
export class DatabaseStartError extends Error {}

/**
 * A cluster worker's exit status when it could not start because the database could not be used
 * (EX_TEMPFAIL): during an outage the primary keeps starting workers, with its growing delay,
 * instead of counting them as start-up failures and giving up.
 */
export const EXIT_DATABASE_UNAVAILABLE = 75;

/**
 * Asks the database once, at start, so that a wrong DATABASE_URL (no server there, no such
 * database, a refused login) is said in one sentence naming it, without its password.
 */
export async function checkReachable(db: Db, connectionString: string): Promise<void> {
  try {
    await db.query('SELECT 1');
  } catch (error) {
    const reason = String((error as { cause?: unknown }).cause ?? (error as Error).message ?? error);
    throw new DatabaseStartError(
      `cannot use the PostgreSQL database of DATABASE_URL (${whereIs(connectionString)}): ${reason}.`,
    );
  }
}

/** host:port/database of a connection string, never its user's password. */
function whereIs(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `${url.hostname || 'localhost'}:${url.port || '5432'}${url.pathname || '/'}`;
  } catch {
    return 'as given';
  }
}

/** How long to wait before opening a lost listening connection again. */
const RELISTEN_MS = 1_000;

/**
 * A connection of its own that `LISTEN`s on `channel` for as long as the process runs: a lost one
 * is reopened (after `RELISTEN_MS`) and `reconnected` is called, since notifications sent while it
 * was down are gone. Resolves once the first `LISTEN` is in place.
 */
async function listen(
  connectionString: string,
  options: PostgresOptions,
  channel: string,
  handlers: ChannelHandlers,
): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const open = async (): Promise<void> => {
    const next = new pg.Client({
      connectionString,
      connectionTimeoutMillis: options.connectTimeoutMs,
      application_name: 'kosh-listen',
    });
    next.on('notification', (message) => {
      if (message.channel === channel) handlers.message(message.payload ?? '');
    });
    next.on('error', () => {
      // The end event follows; reopening happens there.
    });
    next.on('end', () => {
      if (closed || client !== next) return;
      client = undefined;
      retry = setTimeout(reopen, RELISTEN_MS);
    });
    await next.connect();
    await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    client = next;
  };
  const reopen = () => {
    if (closed) return;
    open().then(handlers.reconnected, () => {
      if (!closed) retry = setTimeout(reopen, RELISTEN_MS);
    });
  };
  await open();
  return async () => {
    closed = true;
    clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}
