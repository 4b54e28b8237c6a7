import cluster from 'node:cluster';
import { loadConfig } from '../config.js';
import { type Container, createContainer } from '../container.js';
import { joinClusterMetrics } from '../http/metrics.js';
import { backgroundJobs } from '../jobs/jobs.js';
import { startJobs } from '../jobs/runner.js';
import { createLogger } from '../log.js';
import { checkAddressFree, listenFailure } from './address-check.js';
import { startAdminChannel } from './admin.js';
import { runPrimary } from './cluster.js';
import { overrides, type Parsed } from './options.js';
import { bootstrapSandbox, sandboxBanner } from './sandbox-credentials.js';

/** First start on an empty database: the sandbox accounts, their credentials printed once. */
async function bootstrap(container: Container): Promise<void> {
  if (!container.config.sandboxBootstrap) return;
  const created = await bootstrapSandbox(container);
  if (created) {
    process.stdout.write(`${sandboxBanner(created.credentials, created.file, container.config.publicUrl)}\n`);
  }
}

/**
 * With more than one worker the primary migrates and bootstraps once, then forks the workers
 * (each opens its own pool, runs the HTTP server and the background jobs; jobs are safe with
 * any number of processes). With one worker everything runs in this process.
 */
export async function serve(values: Parsed['values']): Promise<void> {
  const config = loadConfig(process.env, overrides(values));
  if (cluster.isPrimary && config.workersNotice) process.stderr.write(`kosh: ${config.workersNotice}\n`);
  if (cluster.isPrimary) {
    for (const notice of config.ignoredSettings) process.stderr.write(`kosh: ${notice}\n`);
  }
  const clustered = config.workers > 1;
  if (clustered && cluster.isPrimary) {
    await checkAddressFree(config.host, config.port);
    const log = createLogger(config.logLevel);
    const setup = await createContainer(config, { log });
    try {
      await bootstrap(setup);
    } finally {
      await setup.close();
    }
    const code = await runPrimary({
      workers: config.workers,
      log,
      onListening: () =>
        log.info({ url: config.publicUrl, database: 'postgres', workers: config.workers }, 'Kosh is serving'),
    });
    process.exit(code);
  }
  // Before the slow part of a worker's start, so the primary's metrics gathering never waits on it.
  if (cluster.isWorker) joinClusterMetrics();
  // The HTTP service (Fastify, the API reference, every route and its compiled schemas) is loaded
  // only by the processes that serve: a cluster's primary forks its workers without it.
  const [container, { buildServer }] = await Promise.all([
    createContainer(config, { migrate: !cluster.isWorker }),
    import('../http/server.js'),
  ]);
  if (!cluster.isWorker) {
    // A port held by another process is said before a first start creates and prints sandbox
    // credentials for a server that then could not serve. (A second Kosh on the same embedded
    // database has been refused already, by the data folder's lock.)
    await checkAddressFree(config.host, config.port).catch(async (error: unknown) => {
      await container.close();
      throw error;
    });
    await bootstrap(container);
  }
  const app = await buildServer(container);
  const jobs = startJobs(backgroundJobs(container), container.log);
  let channel: { close(): Promise<void> } | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    container.log.info({ signal, pid: process.pid }, 'shutting down');
    await channel?.close();
    await app.close();
    await jobs.stop();
    await container.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
    throw listenFailure(error, config.host, config.port);
  });
  // On the embedded database this process holds the data folder: admin commands come through it.
  if (container.db.kind === 'pglite') {
    channel = await startAdminChannel(container, config.dataDir).catch((error: Error) => {
      // Serving matters more than the channel (a socket path too long for the OS, say).
      container.log.warn(
        { err: error },
        'admin channel not available: admin commands need the server stopped',
      );
      return undefined;
    });
  }
  if (cluster.isWorker) {
    container.log.debug({ pid: process.pid }, 'worker serving');
    return;
  }
  container.log.info(
    {
      url: config.publicUrl,
      database: container.db.kind,
      data_dir: container.db.kind === 'pglite' ? config.dataDir : undefined,
      workers: 1,
    },
    'Kosh is serving',
  );
}

/** Background jobs only: scale webhook delivery out with any number of these beside `serve`. */
export async function worker(values: Parsed['values']): Promise<void> {
  const config = loadConfig(process.env, overrides(values));
  const container = await createContainer(config);
  const jobs = startJobs(backgroundJobs(container), container.log);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    container.log.info({ signal }, 'worker shutting down; finishing in-flight work');
    await jobs.stop();
    await container.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  container.log.info({ database: container.db.kind }, 'Kosh worker running');
}
