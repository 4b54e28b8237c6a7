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
  const pinger = createPinger(connectionString, options.connectTimeoutMs);
  const db = createPoolDb(pool, 'postgres', {
    guard: createTransactionGuard(options.transactionGuard),
    onRoundTrip: options.onRoundTrip,
    closeExtra: pinger.close,
  });
  return Object.assign(db, {
    ping: pinger.ping,
    listen: (channel: string, handlers: ChannelHandlers) =>
      listen(connectionString, options, channel, handlers),
  });
}

/**
 * `/readyz`'s question, "can this host reach PostgreSQL?", asked on a connection of its own: through
 * the pool it would wait behind the requests, and a busy host (or every host, while one table is
 * locked) would be taken out of the balancer though the database answers. The connection is opened
 * on the first ping and again after any failure; pings that overlap share one answer.
 */
function createPinger(connectionString: string, timeoutMs: number) {
  let client: pg.Client | undefined;
  let asking: Promise<void> | undefined;
  const drop = async () => {
    const lost = client;
    client = undefined;
    await lost?.end().catch(() => {});
  };
  const ask = async () => {
    try {
      if (!client) {
        const fresh = new pg.Client({
          connectionString,
          connectionTimeoutMillis: timeoutMs,
          query_timeout: timeoutMs,
          application_name: 'kosh-ping',
        });
        // A connection lost between pings (a restart, a terminated backend): the next ping opens another.
        fresh.on('error', () => {});
        fresh.on('end', () => {
          if (client === fresh) client = undefined;
        });
        client = fresh;
        await fresh.connect();
      }
      await client.query('SELECT 1');
    } catch (error) {
      await drop();
      throw error;
    }
  };
  return {
    ping(): Promise<void> {
      asking ??= ask().finally(() => {
        asking = undefined;
      });
      return asking;
    },
    close: drop,
  };
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
