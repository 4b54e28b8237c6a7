import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/open.js';

const BATCH = 500_000;

/** A loaded order id: `order_00` + 24 digits (26 characters after `order_`, like a real id) sorts before every real id (older), and is a valid id. */
const loadedId = (n: number) => `order_00${String(n).padStart(24, '0')}`;

/**
 * Bulk-loads `count` orders with generate_series while the service is stopped (PGlite's folder is
 * one process's): even-numbered ones belong to the bench merchant, odd ones to another account, so
 * every query also has to filter by tenant. Returns a sampler over the merchant's loaded ids and a
 * cursor in the middle of its history (a deep page).
 */
export async function loadOrders(options: {
  env: NodeJS.ProcessEnv;
  merchantId: string;
  count: number;
  log: (message: string) => void;
}): Promise<{ sample: () => string; deepCursor: string }> {
  const config = loadConfig({ ...options.env, KOSH_DB_STATEMENT_TIMEOUT_MS: '600000' });
  const db = await openDatabase(config);
  try {
    const [other] = await db.query<{ id: string }>(
      `INSERT INTO accounts (id, kind, name, status) VALUES ('mid_00000000000000000000000bench', 'merchant', 'Bench Neighbour', 'created')
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name RETURNING id`,
    );
    for (let from = 1; from <= options.count; from += BATCH) {
      const to = Math.min(options.count, from + BATCH - 1);
      await db.query(
        `INSERT INTO orders (id, account_id, mode, amount, currency, status, created_at, updated_at)
         SELECT 'order_00' || lpad(g::text, 24, '0'),
                CASE WHEN g % 2 = 0 THEN $1 ELSE $2 END,
                'test', 1000 + g % 50000, 'INR', 'created',
                now() - make_interval(secs => ($3 - g) / 1000.0),
                now() - make_interval(secs => ($3 - g) / 1000.0)
           FROM generate_series($4::bigint, $5::bigint) AS g`,
        [options.merchantId, other!.id, options.count, from, to],
      );
      options.log(`  ${to.toLocaleString('en')} / ${options.count.toLocaleString('en')}`);
    }
    await db.query('ANALYZE orders');
  } finally {
    await db.close();
  }
  const half = Math.floor(options.count / 4) * 2;
  return {
    sample: () => loadedId(2 * (1 + Math.floor(Math.random() * Math.floor(options.count / 2)))),
    deepCursor: loadedId(half || 2),
  };
}
