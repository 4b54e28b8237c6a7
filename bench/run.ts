/**
 * `npm run bench`: builds Kosh, starts it as a child process on a database of its own, drives each
 * scenario with autocannon and compares it with a bare Fastify + pg baseline measured right before it.
 * See docs/performance.md. Options: --pglite, --workers N, --connections N, --duration S, --warmup S,
 * --only a,b, --scale [N], --cpu-prof, --out DIR.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { BASELINE_DESCRIPTIONS, type BaselineRun, startBaselines } from './baselines.js';
import { measure } from './load.js';
import {
  freePort,
  KOSH,
  kosh,
  processesCpuSeconds,
  processTreeCpuSeconds,
  ROOT,
  type Running,
  startProcess,
} from './processes.js';
import { printTable, type Report, type ScenarioResult, writeResults } from './report.js';
import { loadOrders } from './scale.js';
import {
  type ApiCall,
  FIXTURES,
  type Fixtures,
  SCENARIOS,
  type Scenario,
  scaleScenarios,
} from './scenarios.js';

const argv = process.argv.slice(2);
// `--scale` alone means one million orders.
const scaleAt = argv.indexOf('--scale');
if (scaleAt >= 0 && (argv[scaleAt + 1] === undefined || argv[scaleAt + 1]!.startsWith('--'))) {
  argv.splice(scaleAt + 1, 0, '1000000');
}
const { values } = parseArgs({
  args: argv,
  options: {
    pglite: { type: 'boolean', default: false },
    workers: { type: 'string' },
    connections: { type: 'string', default: '50' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    only: { type: 'string' },
    scale: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    // Test keys limited to N requests a second (bursts of 2N) instead of no limit: what the
    // deployment-wide limiter costs a request (docs/rate-limits.md). N must stay above the bench's rate.
    'rate-limit': { type: 'string' },
    out: { type: 'string', default: path.join(ROOT, 'bench/results') },
  },
});

const adminUrl = process.env.DATABASE_URL;
if (!values.pglite && !adminUrl) {
  process.stderr.write(
    'bench: set DATABASE_URL=postgres://… (a server where the bench may create and drop a database of its own), or pass --pglite.\n',
  );
  process.exit(64);
}
const workers = values.pglite ? 1 : Number(values.workers ?? os.availableParallelism());
const load = {
  connections: Number(values.connections),
  durationSeconds: Number(values.duration),
  warmupSeconds: Number(values.warmup),
};
const only = values.only?.split(',').map((name) => name.trim());
const scenarios = SCENARIOS.filter((scenario) => !only || only.some((name) => scenario.name.includes(name)));
const scale = values.scale === undefined ? undefined : Number(values.scale.replace(/_/g, ''));

const log = (message: string) => process.stdout.write(`${message}\n`);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-bench-'));
const databaseName = `kosh_bench_${randomBytes(4).toString('hex')}`;

function databaseUrl(name: string): string {
  const url = new URL(adminUrl!);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function versions(serverVersion: string): Record<string, string> {
  const require = createRequire(import.meta.url);
  const version = (name: string) => (require(`${name}/package.json`) as { version: string }).version;
  return {
    node: process.version,
    pg: version('pg'),
    fastify: version('fastify'),
    autocannon: version('autocannon'),
    [values.pglite ? 'PGlite' : 'PostgreSQL']: serverVersion,
    kosh: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).toString().trim(),
  };
}

/**
 * CPU of the PostgreSQL backends connected to the bench database (the service's or the baseline's
 * pool, whichever runs). Only when the server runs on this machine; PGlite runs inside the service.
 */
async function databaseCpu(): Promise<Map<number, number>> {
  const pids = await admin(async (client) =>
    (
      await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
        databaseName,
      ])
    ).rows.map((row) => row.pid),
  );
  return processesCpuSeconds(pids);
}

async function createFixtures(api: ApiCall, names: Set<string>): Promise<Fixtures> {
  const fixtures: Fixtures = {};
  for (const name of Object.keys(FIXTURES) as Array<keyof typeof FIXTURES>) {
    if (!names.has(name)) continue;
    const spec = FIXTURES[name];
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < spec.count) {
          next++;
          ids.push(await spec.create(api, fixtures));
        }
      }),
    );
    fixtures[name] = ids;
  }
  return fixtures;
}

const loadAtStart = os.loadavg().map((value) => Number(value.toFixed(1)));

async function main(): Promise<void> {
  log(`Building Kosh…`);
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });

  const dataDir = path.join(work, 'kosh-data');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KOSH_SANDBOX_BOOTSTRAP: 'false',
    KOSH_DATA_DIR: dataDir,
    // The bench drives one key far past its rate limit on purpose: off (0), as docs/rate-limits.md
    // documents, or it would measure 429s. The failed-authentication throttle stays on (never hit).
    KOSH_RATE_LIMIT_TEST_PER_SECOND: values['rate-limit'] ?? '0',
    KOSH_RATE_LIMIT_TEST_BURST: String(2 * Number(values['rate-limit'] ?? 0) || 100),
    KOSH_RATE_LIMIT_LIVE_PER_SECOND: '0',
    DATABASE_URL: values.pglite ? '' : databaseUrl(databaseName),
    KOSH_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
  if (!values.pglite) {
    await admin((client) => client.query(`CREATE DATABASE ${databaseName}`));
    log(`Database ${databaseName} created on ${new URL(adminUrl!).host}.`);
  }
  try {
    await kosh(['migrate'], env);
    const merchant = JSON.parse(
      await kosh(['merchant', 'create', '--name', 'Bench Merchant', '--json'], env),
    );
    const auth = `Basic ${Buffer.from(`${merchant.api_key}:${merchant.secret_key}`).toString('base64')}`;

    log(`Baseline server (${workers} worker(s)): each scenario's baseline is measured right before it.`);
    const baselineServer = await startBaselines({
      workers,
      env: values.pglite
        ? { BASELINE_PGLITE_DIR: path.join(work, 'baseline-pglite') }
        : { DATABASE_URL: env.DATABASE_URL },
      logFile: path.join(work, 'baseline.log'),
      load: { ...load, databaseCpuSeconds: values.pglite ? undefined : databaseCpu },
    });
    const baselines: BaselineRun[] = [];
    await baselineServer.warm(new Set(scenarios.map((scenario) => scenario.baseline)));

    const port = await freePort();
    const nodeArgs = values['cpu-prof']
      ? ['--cpu-prof', `--cpu-prof-dir=${path.join(values.out!, 'profiles')}`]
      : [];
    const startKosh = () =>
      startProcess(
        process.execPath,
        [...nodeArgs, KOSH, 'serve', '--port', String(port), '--workers', String(workers)],
        {
          env,
          logFile: path.join(work, 'kosh.log'),
          readyText: '"msg":"Kosh is serving"',
        },
      );
    let service: Running = await startKosh();
    const url = `http://127.0.0.1:${port}`;
    const api: ApiCall = async (method, urlPath, body) => {
      const response = await fetch(url + urlPath, {
        method,
        headers: {
          authorization: auth,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${method} ${urlPath}: ${response.status} ${await response.text()}`);
      return response.json();
    };

    const run = async (list: Scenario[], fixtures: Fixtures): Promise<ScenarioResult[]> => {
      const results: ScenarioResult[] = [];
      for (const scenario of list) {
        const base = await baselineServer.measure(scenario.baseline, scenario.name);
        baselines.push(base);
        log(`  ${scenario.name}…`);
        const measured = await measure(
          {
            url,
            auth,
            ...load,
            serverCpuSeconds: () => processTreeCpuSeconds(service.child.pid!),
            databaseCpuSeconds: values.pglite ? undefined : databaseCpu,
          },
          scenario,
          fixtures,
        );
        results.push({
          name: scenario.name,
          baseline: scenario.baseline,
          ...measured,
          baseline_rps: base.rps,
          ratio: measured.rps / base.rps,
          cpu_ratio:
            measured.cpu_us > 0
              ? (base.cpu_us + base.db_cpu_us) / (measured.cpu_us + measured.db_cpu_us)
              : undefined,
        });
      }
      return results;
    };

    let results: ScenarioResult[];
    let scaleReport: Report['scale'];
    try {
      const fixtures = await createFixtures(
        api,
        new Set(scenarios.flatMap((scenario) => scenario.uses ?? [])),
      );
      log(
        `Kosh (${workers} worker(s), ${load.connections} connections, ${load.durationSeconds} s per scenario)…`,
      );
      results = await run(scenarios, fixtures);
      if (scale) {
        await service.stop();
        log(`Bulk-loading ${scale.toLocaleString('en')} orders…`);
        const started = Date.now();
        const loaded = await loadOrders({ env, merchantId: merchant.account_id, count: scale, log });
        const loadSeconds = Math.round((Date.now() - started) / 1000);
        service = await startKosh();
        log(`Kosh on ${scale.toLocaleString('en')} orders…`);
        scaleReport = {
          orders: scale,
          load_seconds: loadSeconds,
          scenarios: await run(scaleScenarios(loaded), {}),
        };
      }
    } finally {
      await service.stop();
      await baselineServer.stop();
    }

    const serverVersion = values.pglite
      ? 'PGlite 0.5 (PostgreSQL 18, WASM)'
      : await admin(async (client) => (await client.query('SHOW server_version')).rows[0].server_version);
    const report: Report = {
      date: new Date().toISOString(),
      machine: {
        cores: os.availableParallelism(),
        cpu: os.cpus()[0]?.model ?? 'unknown',
        memory_gb: Math.round(os.totalmem() / 2 ** 30),
        load_average_at_start: loadAtStart,
        load_average_at_end: os.loadavg().map((value) => Number(value.toFixed(1))),
        os: `${os.type()} ${os.release()}`,
      },
      versions: versions(serverVersion),
      settings: {
        database: values.pglite ? 'pglite' : 'postgres',
        workers,
        connections: load.connections,
        duration_s: load.durationSeconds,
        warmup_s: load.warmupSeconds,
        ...(values['rate-limit'] ? { rate_limit_per_second: Number(values['rate-limit']) } : {}),
      },
      baselines: baselines.map((b) => ({ ...b, description: BASELINE_DESCRIPTIONS[b.name] })),
      scenarios: results,
      scale: scaleReport,
    };
    printTable('Kosh', results);
    printTable(
      'Baselines (each measured right before the scenario it is paired with)',
      baselines.map((b) => ({ ...b, name: `${b.name} → ${b.paired_with}`, baseline: b.name })),
    );
    if (scaleReport) printTable(`After ${scale!.toLocaleString('en')} orders`, scaleReport.scenarios);
    const files = writeResults(values.out!, report);
    log(`\nWritten: ${files.map((file) => path.relative(ROOT, file)).join(', ')}`);
  } finally {
    if (!values.pglite)
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`));
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
