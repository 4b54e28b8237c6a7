/**
 * The bare minimum the service is measured against: Fastify parsing and validating the same
 * create-order body (the same TypeBox schema) and doing one INSERT with `pg`, a SELECT by primary
 * key, a page of ten rows, and a JSON reply built once and cached (for the methods endpoint); and a
 * bare five-step charge (`/chain/…`, see `registerChain`). No authentication, no logging, no ids
 * worth the name. Same process count as the service (node:cluster), same database, same pool size.
 *
 * Usage: node --import tsx bench/baseline-server.ts   (env: BASELINE_PORT, BASELINE_WORKERS,
 * DATABASE_URL, or BASELINE_PGLITE_DIR for the embedded database; POOL_SIZE)
 */
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import Fastify, { type FastifyInstance } from 'fastify';
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

const CHAIN_TABLES = [
  `CREATE TABLE IF NOT EXISTS bench_chain_orders (
    id text PRIMARY KEY, amount bigint NOT NULL, currency text NOT NULL, receipt text,
    metadata jsonb NOT NULL DEFAULT '{}'::jsonb, status text NOT NULL DEFAULT 'created',
    created_at timestamptz NOT NULL DEFAULT now())`,
  `CREATE TABLE IF NOT EXISTS bench_chain_payments (
    id text PRIMARY KEY, order_id text NOT NULL REFERENCES bench_chain_orders (id), amount bigint NOT NULL,
    currency text NOT NULL, method text NOT NULL, bank text, email text NOT NULL, contact text NOT NULL,
    name text NOT NULL, return_url text NOT NULL, status text NOT NULL DEFAULT 'created', token text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(), captured_at timestamptz)`,
  `CREATE TABLE IF NOT EXISTS bench_chain_events (
    id bigserial PRIMARY KEY, payment_id text NOT NULL, type text NOT NULL, payload jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now())`,
];

async function openPool(): Promise<pg.Pool> {
  if (process.env.BASELINE_PGLITE_DIR) {
    const lite = await PGlite.create({ dataDir: process.env.BASELINE_PGLITE_DIR });
    return new pg.Pool({ ...createPgConfig(lite), max: 1 });
  }
  return new pg.Pool({ connectionString: process.env.DATABASE_URL, max: poolSize });
}

async function prepareTable(pool: pg.Pool): Promise<void> {
  await pool.query(TABLE);
  for (const table of CHAIN_TABLES) await pool.query(table);
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
  registerChain(app, pool, () => `${Date.now().toString(36)}${prefix}${(counter++).toString(36)}`);

  await app.listen({ port, host: '127.0.0.1' });
  const stop = async () => {
    await app.close();
    await pool.end();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

/**
 * The whole charge with the minimum SQL a correct gateway needs, over the service's five requests:
 * insert the order; insert the payment and mark the order attempted (one transaction); read the
 * payment for the page; capture it (payment and order by compare-and-set, one event row, one
 * transaction); read the payment.
 */
function registerChain(app: FastifyInstance, pool: pg.Pool, nextId: () => string): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  app.post('/chain/orders', { schema: { body: CreateOrderBody } }, async (request) => {
    const body = request.body as { amount: number; currency: string; receipt?: string; metadata?: object };
    const { rows } = await pool.query(
      'INSERT INTO bench_chain_orders (id, amount, currency, receipt, metadata) VALUES ($1, $2, $3, $4, $5) RETURNING *',
      [`o_${nextId()}`, body.amount, body.currency, body.receipt ?? null, body.metadata ?? {}],
    );
    return { data: rows[0] };
  });
  app.post('/chain/payments', async (request, reply) => {
    const body = request.body as Record<string, string>;
    const id = `p_${nextId()}`;
    const token = randomBytes(16).toString('base64url');
    const started = await inTransaction(pool, async (client) => {
      const { rows } = await client.query(
        "UPDATE bench_chain_orders SET status = 'attempted' WHERE id = $1 AND status <> 'paid' RETURNING id",
        [body.order_id],
      );
      if (!rows[0]) return false;
      await client.query(
        `INSERT INTO bench_chain_payments (id, order_id, amount, currency, method, bank, email, contact, name, return_url, token)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [
          id,
          body.order_id,
          body.amount,
          body.currency,
          body.method,
          body.bank ?? null,
          body.email,
          body.contact,
          body.name,
          body.return_url,
          token,
        ],
      );
      return true;
    });
    if (!started) return reply.code(409).send({ error: 'order paid or missing' });
    return { payment_id: id, next: [{ action: 'redirect', url: `/chain/payments/${id}/authentication` }] };
  });
  app.get('/chain/payments/:id/authentication', async (request, reply) => {
    const { rows } = await pool.query(
      'SELECT id, amount, status, token FROM bench_chain_payments WHERE id = $1',
      [(request.params as { id: string }).id],
    );
    const payment = rows[0];
    if (!payment) return reply.code(404).send({ error: 'not found' });
    return reply
      .type('text/html; charset=utf-8')
      .send(
        `<!DOCTYPE html><form method="POST"><input type="hidden" name="token" value="${payment.token}"><button name="choice" value="success">Pay ${payment.amount}</button></form>`,
      );
  });
  app.post('/chain/payments/:id/authentication', async (request, reply) => {
    const { id } = request.params as { id: string };
    const { token } = request.body as Record<string, string>;
    const captured = await inTransaction(pool, async (client) => {
      const { rows } = await client.query(
        "UPDATE bench_chain_payments SET status = 'captured', captured_at = now() WHERE id = $1 AND status = 'created' AND token = $2 RETURNING order_id, amount",
        [id, token],
      );
      const payment = rows[0];
      if (!payment) return false;
      await client.query("UPDATE bench_chain_orders SET status = 'paid' WHERE id = $1 AND status <> 'paid'", [
        payment.order_id,
      ]);
      await client.query('INSERT INTO bench_chain_events (payment_id, type, payload) VALUES ($1, $2, $3)', [
        id,
        'payment.captured',
        { payment_id: id, order_id: payment.order_id, amount: payment.amount },
      ]);
      return true;
    });
    if (!captured) return reply.code(409).send({ error: 'not capturable' });
    return reply.type('text/html; charset=utf-8').send('<!DOCTYPE html><p>Returning to the merchant…</p>');
  });
  app.get('/chain/payments/:id', async (request, reply) => {
    const { rows } = await pool.query('SELECT * FROM bench_chain_payments WHERE id = $1', [
      (request.params as { id: string }).id,
    ]);
    if (!rows[0]) return reply.code(404).send({ error: 'not found' });
    return { data: rows[0] };
  });
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
