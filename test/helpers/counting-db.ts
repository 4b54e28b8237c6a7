import type { Db, PreparedStatement, RoundTripObserver } from '../../src/db/db.js';

/** One round trip to the database as the port saw it: a prepared statement's name, or the SQL text. */
export interface RoundTrip {
  prepared: string | undefined;
  text: string;
}

export interface QueryLog {
  /** Every statement since the last `reset`, transactions' statements included. */
  readonly trips: RoundTrip[];
  /**
   * Every round trip the database port made since the last `reset`, as it sent it: the statements
   * it carried (a prepared statement's name, or the SQL text). BEGIN travels with a transaction's
   * first statement, and statements sent `together` share one.
   */
  readonly wire: string[][];
  reset(): void;
}

/** Collects the port's own report of its round trips (`onRoundTrip` of `openTestDatabase`). */
export function roundTripLog(): { wire: string[][]; observe: RoundTripObserver } {
  const wire: string[][] = [];
  return { wire, observe: (statements) => wire.push([...statements]) };
}

/**
 * Wraps a database port so that a test can count the round trips a request makes: the caches and
 * prepared statements on the hot path are only proven by what does NOT reach the database.
 */
export function countingDb<T extends Db>(db: T, wire: string[][] = []): T & { queries: QueryLog } {
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
    together: (issue) => handle.together(issue),
    atCommit(text, params) {
      record(text);
      return handle.atCommit(text, params);
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
    queries: {
      trips,
      wire,
      reset: () => {
        trips.splice(0);
        wire.splice(0);
      },
    },
  });
}
