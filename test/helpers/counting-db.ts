import type { Db, PreparedStatement } from '../../src/db/db.js';

/** One round trip to the database as the port saw it: a prepared statement's name, or the SQL text. */
export interface RoundTrip {
  prepared: string | undefined;
  text: string;
}

export interface QueryLog {
  /** Every round trip since the last `reset`, transactions' statements included. */
  readonly trips: RoundTrip[];
  reset(): void;
}

/**
 * Wraps a database port so that a test can count the round trips a request makes: the caches and
 * prepared statements on the hot path are only proven by what does NOT reach the database.
 */
export function countingDb<T extends Db>(db: T): T & { queries: QueryLog } {
  const trips: RoundTrip[] = [];
  const record = (text: string | PreparedStatement) => {
    trips.push(
      typeof text === 'string' ? { prepared: undefined, text } : { prepared: text.name, text: text.text },
    );
  };
  const wrap = (handle: Db): Db => ({
    kind: handle.kind,
    inTransaction: () => handle.inTransaction(),
    assertNoTransaction: (call) => handle.assertNoTransaction(call),
    query(text, params) {
      record(text);
      return handle.query(text, params);
    },
    transaction(work) {
      record('BEGIN');
      return handle.transaction((tx) => work(wrap(tx)));
    },
    ping: () => handle.ping(),
    close: () => handle.close(),
  });
  const wrapped = wrap(db);
  return Object.assign(Object.create(db) as T, wrapped, {
    queries: { trips, reset: () => trips.splice(0) },
  });
}
