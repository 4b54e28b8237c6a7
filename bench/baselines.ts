import path from 'node:path';
import { type LoadOptions, type Measured, measure } from './load.js';
import { freePort, processTreeCpuSeconds, ROOT, startProcess } from './processes.js';
import type { BaselineName, Scenario } from './scenarios.js';
import { chargeSteps, ORDER_BODY, pick } from './scenarios.js';

export const BASELINE_DESCRIPTIONS: Record<BaselineName, string> = {
  insert: 'bare Fastify, same body schema, one INSERT … RETURNING with pg',
  select: 'bare Fastify, one SELECT by primary key with pg',
  page: 'bare Fastify, one SELECT … ORDER BY id DESC LIMIT 11 with pg',
  cached: 'bare Fastify, a JSON reply serialised once and cached',
  chain: 'bare Fastify, the five requests of a charge with the minimum SQL (two transactions) with pg',
};

const SEEDED = Array.from({ length: 1_000 }, (_, i) => `b_${String(i + 1).padStart(6, '0')}`);

/** The baseline counterpart of each scenario kind (bench/baseline-server.ts serves them). */
const BASELINE_SCENARIOS: Record<BaselineName, Scenario> = {
  insert: {
    name: 'insert',
    baseline: 'insert',
    steps: [{ method: 'POST', path: '/orders', body: ORDER_BODY }],
  },
  select: {
    name: 'select',
    baseline: 'select',
    steps: [{ method: 'GET', path: () => `/orders/${pick(SEEDED)}` }],
  },
  page: { name: 'page', baseline: 'page', steps: [{ method: 'GET', path: '/orders' }] },
  cached: { name: 'cached', baseline: 'cached', steps: [{ method: 'GET', path: '/methods' }] },
  chain: {
    name: 'chain',
    baseline: 'chain',
    steps: chargeSteps({
      orders: '/chain/orders',
      payments: '/chain/payments',
      page: (payment) => `/chain/payments/${payment}/authentication`,
      payment: (payment) => `/chain/payments/${payment}`,
    }),
  },
};

export async function runBaselines(options: {
  names: Set<BaselineName>;
  workers: number;
  env: NodeJS.ProcessEnv;
  logFile: string;
  load: Omit<LoadOptions, 'url' | 'auth'>;
}): Promise<Array<Measured & { name: BaselineName }>> {
  const port = await freePort();
  const server = await startProcess(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'bench/baseline-server.ts')],
    {
      env: {
        ...process.env,
        ...options.env,
        BASELINE_PORT: String(port),
        BASELINE_WORKERS: String(options.workers),
      },
      logFile: options.logFile,
      readyText: 'baseline ready',
    },
  );
  const results: Array<Measured & { name: BaselineName }> = [];
  try {
    for (const name of ['insert', 'select', 'page', 'cached', 'chain'] as const) {
      if (!options.names.has(name)) continue;
      process.stdout.write(`  baseline ${name}…\n`);
      const measured = await measure(
        {
          url: `http://127.0.0.1:${port}`,
          ...options.load,
          serverCpuSeconds: () => processTreeCpuSeconds(server.child.pid!),
        },
        BASELINE_SCENARIOS[name],
        {},
      );
      results.push({ name, ...measured });
    }
  } finally {
    await server.stop();
  }
  return results;
}
