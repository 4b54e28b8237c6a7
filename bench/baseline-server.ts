/**
 * The bare minimum the service is measured against: Fastify parsing and validating the same
 * create-order body (the same TypeBox schema) and doing one INSERT with `pg`, a SELECT by primary
 * key, a page of ten rows, and a JSON reply built once and cached (for the methods endpoint). No
 * authentication, no logging, no ids worth the name. Same process count as the service (node:cluster),
 * same database, same pool size.
 *
 * Usage: node --import tsx bench/baseline-server.ts   (env: BASELINE_PORT, BASELINE_WORKERS,
 * DATABASE_URL, or BASELINE_PGLITE_DIR for the embedded database; POOL_SIZE)
 */
import cluster from 'node:cluster';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import Fastify from 'fastify';
import pg from 'pg';
import { catalogueMethods } from '../src/modules/methods/methods.js';
import { CreateOrderBody } from '../src/modules/orders/orders.schemas.js';

const port = Number(process.env.BASELINE_PORT ?? 3900);
const workers = Number(process.env.BASELINE_WORKERS ?? 1);
const poolSize = Number(process.env.POOL_SIZE ?? 10);
export const BASELINE_SEED_ROWS = 1_000;

const TABLE = `CREATE TABLE IF NOT EXISTS bench_baseline (
  id text PRIMARY KEY,
  amount bigint NOT NULL,
  currency text NOT NULL,
  receipt text,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
)`;

async function openPool(): Promise<pg.Pool> {
  if (process.env.BASELINE_PGLITE_DIR) {
    const lite = await PGlite.create({ dataDir: process.env.BASELINE_PGLITE_DIR });
    return new pg.Pool({ ...createPgConfig(lite), max: 1 });
  }
  return new pg.Pool({ connectionString: process.env.DATABASE_URL, max: poolSize });
}

async function prepareTable(pool: pg.Pool): Promise<void> {
  await pool.query(TABLE);
  await pool.query(
    `INSERT INTO bench_baseline (id, amount, currency)
     SELECT 'b_' || lpad(g::text, 6, '0'), 5000, 'INR' FROM generate_series(1, $1) g
     ON CONFLICT DO NOTHING`,
    [BASELINE_SEED_ROWS],
  );
}

async function serve(pool: pg.Pool): Promise<void> {
  const app = Fastify({ logger: false });
  let counter = 0;
  const prefix = `${process.pid.toString(36)}_`;
  const methods = JSON.stringify({ entity: 'methods', ...catalogueMethods() });

  app.post('/orders', { schema: { body: CreateOrderBody } }, async (request) => {
    const body = request.body as { amount: number; currency: string; receipt?: string; metadata?: object };
    // Time-ordered ids, as the service's, so that both insert into the B-tree at its right edge.
    const id = `o_${Date.now().toString(36)}${prefix}${(counter++).toString(36)}`;
    const { rows } = await pool.query(
      'INSERT INTO bench_baseline (id, amount, currency, receipt, metadata) VALUES ($1, $2, $3, $4, $5) RETURNING *',
      [id, body.amount, body.currency, body.receipt ?? null, body.metadata ?? {}],
    );
    return { data: rows[0] };
  });
  app.get('/orders/:id', async (request, reply) => {
    const { rows } = await pool.query('SELECT * FROM bench_baseline WHERE id = $1', [
      (request.params as { id: string }).id,
    ]);
    if (!rows[0]) return reply.code(404).send({ error: 'not found' });
    return { data: rows[0] };
  });
  app.get('/orders', async () => {
    const { rows } = await pool.query('SELECT * FROM bench_baseline ORDER BY id DESC LIMIT 11');
    return { data: rows.slice(0, 10), has_more: rows.length > 10 };
  });
  app.get('/methods', async (_request, reply) => reply.type('application/json; charset=utf-8').send(methods));

  await app.listen({ port, host: '127.0.0.1' });
  const stop = async () => {
    await app.close();
    await pool.end();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

if (workers > 1 && cluster.isPrimary) {
  const setup = await openPool();
  await prepareTable(setup);
  await setup.end();
  let listening = 0;
  for (let i = 0; i < workers; i++) {
    cluster.fork().once('listening', () => {
      if (++listening === workers) process.stdout.write('baseline ready\n');
    });
  }
  const forward = () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', forward);
  process.on('SIGINT', forward);
} else {
  const pool = await openPool();
  if (!cluster.isWorker) await prepareTable(pool);
  await serve(pool);
  if (!cluster.isWorker) process.stdout.write('baseline ready\n');
}
