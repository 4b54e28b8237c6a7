import path from 'node:path';
import { type LoadOptions, type Measured, measure, warmUp } from './load.js';
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

/** One measured baseline, taken right before the scenario it is compared with. */
export type BaselineRun = Measured & { name: BaselineName; paired_with: string };

export interface BaselineServer {
  /** One warm-up pass over the baselines (Kosh's code is warmed by creating the fixtures). */
  warm(names: Set<BaselineName>): Promise<void>;
  measure(name: BaselineName, pairedWith: string): Promise<BaselineRun>;
  stop(): Promise<void>;
}

/**
 * Starts the bare baseline server (bench/baseline-server.ts). It stays up beside Kosh, idle while
 * Kosh is measured, so that each scenario's baseline is measured just before the scenario: the
 * machine's drift over a run (baselines moved by up to 40 % between runs minutes apart) then
 * cancels out of each ratio instead of landing in it.
 */
export async function startBaselines(options: {
  workers: number;
  env: NodeJS.ProcessEnv;
  logFile: string;
  load: Omit<LoadOptions, 'url' | 'auth'>;
}): Promise<BaselineServer> {
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
  const load: LoadOptions = {
    url: `http://127.0.0.1:${port}`,
    ...options.load,
    serverCpuSeconds: () => processTreeCpuSeconds(server.child.pid!),
  };
  return {
    async warm(names) {
      for (const name of names) await warmUp(load, BASELINE_SCENARIOS[name], {});
    },
    async measure(name, pairedWith) {
      process.stdout.write(`  baseline ${name}…\n`);
      return { name, paired_with: pairedWith, ...(await measure(load, BASELINE_SCENARIOS[name], {})) };
    },
    stop: () => server.stop(),
  };
}
