import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPoolDb, createTransactionGuard } from '../../src/db/db.js';
import { loadMigrations, migrate, SchemaTooNewError } from '../../src/db/migrate.js';
import { migrateDatabase } from '../../src/db/open.js';
import { openPostgres } from '../../src/db/postgres.js';
import { KoshError } from '../../src/domain/errors.js';
import { roundTripLog } from '../helpers/counting-db.js';
import { createEmptyPostgresDatabase, DATABASE_KINDS, openTestDatabase } from '../helpers/databases.js';

const OPTIONS = { poolSize: 4, connectTimeoutMs: 2_000, transactionGuard: true, statementTimeoutMs: 10_000 };

describe('migrations on PostgreSQL', () => {
  it('are applied exactly once when several processes start at the same time', async () => {
    const database = await createEmptyPostgresDatabase();
    const pools = Array.from({ length: 4 }, () => openPostgres(database.url, OPTIONS));
    try {
      const results = await Promise.all(pools.map((db) => migrate(db)));
      const applied = results.flat();
      expect(applied).toEqual(loadMigrations().map((migration) => migration.name));
      const rows = await pools[0]!.query<{ version: number }>(
        'SELECT version FROM schema_migrations ORDER BY version',
      );
      expect(rows.map((row) => row.version)).toEqual(loadMigrations().map((migration) => migration.version));
      expect(await migrate(pools[0]!)).toEqual([]);
    } finally {
      await Promise.all(pools.map((db) => db.close()));
      await database.drop();
    }
  });

  it('are not held to the statement timeout: a slow migration, and the wait for another host applying them', async () => {
    const database = await createEmptyPostgresDatabase();
    const config = { databaseUrl: database.url, dbConnectTimeoutMs: 2_000, transactionGuard: true };
    // The service's own handle, with a statement timeout far below what the migrations take.
    const db = openPostgres(database.url, { ...OPTIONS, statementTimeoutMs: 100 });
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    const slow = [
      ...loadMigrations(),
      { version: 9_998, name: '9998_slow_index', sql: 'SELECT pg_sleep(0.4)' },
    ];
    try {
      await expect(db.query('SELECT pg_sleep(0.4)')).rejects.toMatchObject({ code: 'service_unavailable' });
      // Another host holds the migration lock for 0.5 s.
      await admin.query('BEGIN');
      await admin.query('SELECT pg_advisory_xact_lock(4242001)');
      const released = new Promise((resolve) => setTimeout(resolve, 500)).then(() => admin.query('COMMIT'));
      let waited = 0;
      const applied = await migrateDatabase(config, db, slow, { onWait: () => waited++ });
      await released;
      expect(waited).toBe(1);
      expect(applied).toEqual(slow.map((migration) => migration.name));
      // The service's handle keeps its timeout.
      await expect(db.query('SELECT pg_sleep(0.4)')).rejects.toMatchObject({ code: 'service_unavailable' });
      // A build that knows fewer migrations than the database has applied refuses it, by name.
      await expect(migrateDatabase(config, db)).rejects.toBeInstanceOf(SchemaTooNewError);
    } finally {
      await admin.end();
      await db.close();
      await database.drop();
    }
  });

  it("answers /readyz's ping on a connection of its own: not behind a busy pool, and again after the connection is cut", async () => {
    const database = await createEmptyPostgresDatabase();
    const db = openPostgres(database.url, { ...OPTIONS, poolSize: 1, connectTimeoutMs: 500 });
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      // The pool's one connection is busy for 1.5 s; a request waiting for it gives up after 0.5 s.
      const busy = db.transaction((tx) => tx.query('SELECT pg_sleep(1.5)'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      await expect(db.query('SELECT 1')).rejects.toMatchObject({ code: 'service_unavailable' });
      const started = performance.now();
      await db.ping();
      expect(performance.now() - started).toBeLessThan(450);
      await busy;
      // The ping's connection is cut (a restart, a failover): the next ping opens another.
      const [cut] = (
        await admin.query(
          "SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE application_name = 'kosh-ping' AND datname = current_database()",
        )
      ).rows;
      expect(cut).toEqual({ cut: true });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await db.ping();
    } finally {
      await admin.end();
      await db.close();
      await database.drop();
    }
  });

  it('survives a connection cut between two statements of a transaction', async () => {
    const db = await openTestDatabase('postgres');
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      const cut = db.transaction(async (tx) => {
        const [row] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await admin.query('SELECT pg_terminate_backend($1)', [row!.pid]);
        // The server's goodbye arrives while no statement is running: an 'error' event on the client.
        await new Promise((resolve) => setTimeout(resolve, 200));
        await tx.query('SELECT 1');
      });
      await expect(cut).rejects.toMatchObject({ code: 'service_unavailable' });
      expect(await db.query('SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
    } finally {
      await admin.end();
      await db.close();
    }
  });

  it('turns an unreachable database into service_unavailable instead of a crash', async () => {
    const db = openPostgres('postgres://postgres@127.0.0.1:1/nowhere', { ...OPTIONS, connectTimeoutMs: 500 });
    await expect(db.query('SELECT 1')).rejects.toBeInstanceOf(KoshError);
    await expect(db.transaction(async (tx) => tx.query('SELECT 1'))).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    await db.close();
  });
});

for (const kind of DATABASE_KINDS) {
  describe(`the query/transaction port [${kind}]`, () => {
    it('commits on return and rolls back on throw', async () => {
      const db = await openTestDatabase(kind);
      try {
        await db.query('CREATE TABLE t (x int)');
        await db.transaction(async (tx) => tx.query('INSERT INTO t VALUES (1)'));
        await expect(
          db.transaction(async (tx) => {
            await tx.query('INSERT INTO t VALUES (2)');
            throw new Error('boom');
          }),
        ).rejects.toThrow('boom');
        expect(await db.query('SELECT x FROM t')).toEqual([{ x: 1 }]);
      } finally {
        await db.close();
      }
    });

    it('sends BEGIN with the first statement, statements issued together in one round trip, and keeps them one transaction', async () => {
      const log = roundTripLog();
      const db = await openTestDatabase(kind, { poolSize: 1, onRoundTrip: log.observe });
      try {
        await db.query('CREATE TABLE batched (x int PRIMARY KEY, at timestamptz, doc jsonb)');
        const insert = {
          name: 'batched_insert',
          text: 'INSERT INTO batched VALUES ($1, $2, $3) RETURNING x, doc',
        };
        const count = { name: 'batched_count', text: 'SELECT count(*)::int AS n FROM batched' };
        log.wire.splice(0);
        // A prepared statement's first use on a connection goes alone; it is known parsed afterwards.
        await db.transaction(async (tx) =>
          tx.together(() =>
            Promise.all([tx.query(insert, [0, new Date(), { first: true }]), tx.query(count)]),
          ),
        );
        expect(log.wire).toEqual([['BEGIN'], ['batched_insert'], ['batched_count'], ['COMMIT']]);
        log.wire.splice(0);

        // Nothing sent: neither BEGIN nor COMMIT.
        expect(await db.transaction(async () => 'idle')).toBe('idle');
        expect(log.wire).toEqual([]);

        const at = new Date('2026-01-02T03:04:05.678Z');
        const [inserted, counted, plain] = await db.transaction((tx) =>
          tx.together(() =>
            Promise.all([
              tx.query(insert, [1, at, { nested: [1, 'two'] }]),
              tx.query(count),
              tx.query<{ at: Date }>('SELECT at FROM batched WHERE x = $1', [1]),
            ]),
          ),
        );
        expect(inserted).toEqual([{ x: 1, doc: { nested: [1, 'two'] } }]);
        expect(counted).toEqual([{ n: 2 }]);
        expect(plain).toEqual([{ at }]);
        expect(log.wire).toEqual([
          ['BEGIN', 'batched_insert', 'batched_count', 'SELECT at FROM batched WHERE x = $1'],
          ['COMMIT'],
        ]);

        // A failing statement fails its whole batch, and the transaction rolls back what ran before it.
        log.wire.splice(0);
        const failing = db.transaction((tx) =>
          tx.together(() => Promise.all([tx.query(insert, [2, at, {}]), tx.query(insert, [1, at, {}])])),
        );
        await expect(failing).rejects.toMatchObject({ code: '23505' });
        expect(log.wire[0]).toEqual(['BEGIN', 'batched_insert', 'batched_insert']);
        // A value node-postgres cannot send fails the batch before anything of it is sent.
        const circular: Record<string, unknown> = {};
        circular.self = circular;
        await expect(
          db.transaction((tx) =>
            tx.together(() =>
              Promise.all([tx.query(insert, [3, at, {}]), tx.query(insert, [4, at, circular])]),
            ),
          ),
        ).rejects.toThrow();
        // The one connection is sound after both, and neither batch left a row.
        expect(await db.query<{ x: number }>('SELECT x FROM batched ORDER BY x')).toEqual([
          { x: 0 },
          { x: 1 },
        ]);

        // A write for the commit goes with it; one that fails fails the transaction, and undoes it.
        log.wire.splice(0);
        await db.transaction(async (tx) => {
          await tx.query(insert, [5, at, {}]);
          await tx.atCommit(insert, [6, at, { at: 'commit' }]);
          // Statements of the transaction do not see it yet.
          expect(await tx.query(count)).toEqual([{ n: 3 }]);
        });
        expect(log.wire).toEqual([
          ['BEGIN', 'batched_insert'],
          ['batched_count'],
          ['batched_insert', 'COMMIT'],
        ]);
        await expect(
          db.transaction(async (tx) => {
            await tx.query(insert, [7, at, {}]);
            await tx.atCommit(insert, [1, at, {}]);
          }),
        ).rejects.toMatchObject({ code: '23505' });
        // Work that throws sends none of its writes for the commit.
        log.wire.splice(0);
        await expect(
          db.transaction(async (tx) => {
            await tx.atCommit(insert, [8, at, {}]);
            throw new Error('changed my mind');
          }),
        ).rejects.toThrow('changed my mind');
        expect(log.wire).toEqual([]);
        // In a savepoint, or outside a transaction, it is sent at once.
        await db.transaction((tx) => tx.transaction((inner) => inner.atCommit(insert, [9, at, {}])));
        await db.atCommit(insert, [10, at, {}]);
        expect(
          (await db.query<{ x: number }>('SELECT x FROM batched ORDER BY x')).map((row) => row.x),
        ).toEqual([0, 1, 5, 6, 9, 10]);

        // Outside a transaction, statements go one by one, as before.
        log.wire.splice(0);
        await db.together(() => Promise.all([db.query(count), db.query(count)]));
        expect(log.wire).toEqual([['batched_count'], ['batched_count']]);
      } finally {
        await db.close();
      }
    });
  });
}

describe('row shapes of prepared statements', () => {
  it('are described once per connection, parse the same rows every time, and are learnt again on a new connection', async () => {
    const test = await openTestDatabase('postgres');
    const pool = new pg.Pool({ connectionString: test.url, max: 1 });
    pool.on('error', () => {});
    const described: number[] = [];
    pool.on('connect', (client) => {
      const connection = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
      described.push(0);
      const at = described.length - 1;
      connection.on('rowDescription', () => described[at]!++);
    });
    const db = createPoolDb(pool, 'postgres', { guard: createTransactionGuard(true) });
    const admin = new pg.Client({ connectionString: test.url });
    await admin.connect();
    try {
      await db.query(
        'CREATE TABLE shaped (x int PRIMARY KEY, at timestamptz NOT NULL, doc jsonb, note text)',
      );
      const insert = { name: 'shaped_insert', text: 'INSERT INTO shaped VALUES ($1, $2, $3, $4)' };
      const read = { name: 'shaped_read', text: 'SELECT * FROM shaped WHERE x >= $1 ORDER BY x' };
      const at = new Date('2026-03-04T05:06:07.089Z');
      // CREATE TABLE was described on the pool's one connection: count from here on.
      described[0] = 0;
      const reads: unknown[][] = [];
      for (let x = 1; x <= 3; x++) {
        await db.query(insert, [x, at, { x }, x === 2 ? null : `n${x}`]);
        reads.push(await db.query(read, [x - 1]));
        // In a batch too, beside a statement without rows.
        reads.push(
          await db.transaction((tx) =>
            tx.together(() => Promise.all([tx.query(read, [x]), tx.query('SELECT 1 WHERE false')])),
          ),
        );
      }
      const row = (x: number) => ({ x, at, doc: { x }, note: x === 2 ? null : `n${x}` });
      expect(reads[0]).toEqual([row(1)]);
      expect(reads[4]).toEqual([row(1), row(2), row(3)].slice(1));
      expect(reads[5]).toEqual([[row(3)], []]);
      expect((reads[4]![0] as { at: Date }).at).toBeInstanceOf(Date);
      // One connection; the read was described on its first run only, the text statement every time.
      expect(described).toEqual([1 + 3]);
      // A statement that returns no rows is known too: a second run sends nothing to describe.
      const nothing = { name: 'shaped_none', text: 'SELECT x FROM shaped WHERE x < 0' };
      expect(await db.query(nothing)).toEqual([]);
      expect(await db.query(nothing)).toEqual([]);
      expect(described).toEqual([5]);

      // The connection is replaced (the pool drops the idle one the server ended; the text
      // statement asking for its pid is described on the old one): the new one describes the
      // prepared statement again.
      const [{ pid }] = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')) as [
        { pid: number },
      ];
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await db.query(read, [3])).toEqual([row(3)]);
      expect(await db.query(read, [2])).toEqual([row(2), row(3)]);
      expect(described).toEqual([5 + 1, 1]);
    } finally {
      await admin.end();
      await db.close();
      await test.close();
    }
  });
});

describe('a statement the database refuses', () => {
  it.each(DATABASE_KINDS)('outside a transaction leaves the database usable [%s]', async (kind) => {
    const db = await openTestDatabase(kind);
    try {
      await db.query('CREATE TABLE kosh_refusal (id int PRIMARY KEY)');
      await db.query('INSERT INTO kosh_refusal VALUES (1)');
      // A refused statement is the caller's (a constraint, a bad value), never the connection's.
      for (let attempt = 0; attempt < 3; attempt++) {
        // With parameters too (the extended protocol), as every query of the service sends them.
        await expect(db.query('INSERT INTO kosh_refusal VALUES (1)')).rejects.toMatchObject({
          code: '23505',
        });
        await expect(db.query('INSERT INTO kosh_refusal VALUES ($1)', [1])).rejects.toMatchObject({
          code: '23505',
        });
        await expect(db.query('SELECT $1::int', ['x'])).rejects.toMatchObject({ code: '22P02' });
      }
      expect(await db.query('SELECT count(*)::int AS n FROM kosh_refusal')).toEqual([{ n: 1 }]);
    } finally {
      await db.close();
    }
  });
});
