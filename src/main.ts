#!/usr/bin/env node
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import {
  AdminChannelError,
  adminSocketPath,
  executeAdmin,
  parseAdmin,
  sendToAdminChannel,
  startAdminChannel,
  UsageError,
} from './cli/admin.js';
import { runPrimary } from './cli/cluster.js';
import {
  bootstrapSandbox,
  CREDENTIALS_FILE,
  readSandboxCredentials,
  sandboxBanner,
} from './cli/sandbox-credentials.js';
import { TRIGGERS, TriggerError, trigger } from './cli/trigger.js';
import { ListenError, startWebhooksListen } from './cli/webhooks-listen.js';
import { ConfigError, type ConfigOverrides, loadConfig } from './config.js';
import { type Container, createContainer, openDatabase } from './container.js';
import { migrate } from './db/migrate.js';
import { DataDirLockedError } from './db/pglite.js';
import { KoshError } from './domain/errors.js';
import { joinClusterMetrics } from './http/metrics.js';
import { buildServer } from './http/server.js';
import { backgroundJobs } from './jobs/jobs.js';
import { startJobs } from './jobs/runner.js';
import { createLogger } from './log.js';

const USAGE = `Usage: kosh <command> [options]

Commands:
  serve                                  start the HTTP service (default)
  worker                                 run background jobs (webhook delivery) without HTTP
  webhooks listen [--forward-to URL] [--api-url URL] [--events a,b]
                                         receive test-mode webhooks on this machine; the key
                                         comes from KOSH_API_KEY and KOSH_SECRET_KEY
  migrate                                apply pending database migrations and exit
  merchant create --name NAME [--partner ID]
                                         create a merchant with a test key
  merchant activate MID                  activate a merchant after review (enables live keys)
  merchant clarify MID --reason TEXT     ask a merchant under review for more (needs_clarification)
  merchant suspend MID                   suspend a merchant (its keys stop working)
  partner create --name NAME             create a partner with a test key
  trigger EVENT [--api-url URL] [--method netbanking|upi]
                                         fire a test-mode event for real: creates the objects and
                                         walks the sandbox (payment.captured, payment.failed,
                                         payment.pending, order.paid, refund.processed) with a
                                         net-banking payment, or a UPI one (--method upi)
  keys create --account ID --mode test|live
                                         issue a key (live keys need an activated account)
  users create --account ID --email EMAIL [--password PASSWORD]
                                         add a dashboard user (the password is asked for when
                                         not given; at least 12 characters)
  encryption rotate                      re-encrypt every stored secret with KOSH_ENCRYPTION_KEY
                                         (the old key in KOSH_ENCRYPTION_PREVIOUS_KEYS meanwhile)

Options:
  --port N  --host ADDR  --data-dir DIR  --public-url URL  --database-url URL
  --workers N   HTTP processes sharing the port (default: one per core on PostgreSQL; 1 on PGlite)
  --json    print machine-readable JSON (admin commands)
Admin commands (merchant, partner, keys, users, encryption) also work while \`kosh serve\` runs on
the embedded database: they are sent to that server through its admin channel.
Settings come from the environment; see docs/configuration.md.`;

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      'public-url': { type: 'string' },
      'database-url': { type: 'string' },
      workers: { type: 'string' },
      name: { type: 'string' },
      partner: { type: 'string' },
      reason: { type: 'string' },
      account: { type: 'string' },
      mode: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      json: { type: 'boolean', default: false },
      'forward-to': { type: 'string' },
      'api-url': { type: 'string' },
      'api-key': { type: 'string' },
      'secret-key': { type: 'string' },
      events: { type: 'string' },
      'listen-port': { type: 'string' },
      method: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
}

type Parsed = ReturnType<typeof parse>;

function overrides(values: Parsed['values']): ConfigOverrides {
  const result: ConfigOverrides = {};
  if (values.port !== undefined) result.port = values.port;
  if (values.host !== undefined) result.host = values.host;
  if (values['data-dir'] !== undefined) result.dataDir = values['data-dir'];
  if (values['public-url'] !== undefined) result.publicUrl = values['public-url'];
  if (values['database-url'] !== undefined) result.databaseUrl = values['database-url'];
  if (values.workers !== undefined) result.workers = values.workers;
  return result;
}

/** Reads a password from the terminal without echoing it (or one line from a pipe). */
async function promptPassword(): Promise<string> {
  const input = process.stdin;
  if (!input.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of input) chunks.push(chunk as Buffer);
    const line = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
    if (!line) throw new UsageError('--password is required when no password is typed or piped in.');
    return line;
  }
  process.stderr.write('Password (not shown): ');
  input.setRawMode(true);
  input.resume();
  return new Promise((resolve, reject) => {
    let typed = '';
    const done = (error?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (data: Buffer) => {
      for (const char of data.toString('utf8')) {
        if (char === '\r' || char === '\n') return done();
        if (char === '\u0003') return done(new UsageError('Cancelled.'));
        if (char === '\u007f') typed = typed.slice(0, -1);
        else typed += char;
      }
    };
    input.on('data', onData);
  });
}

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
async function serve(values: Parsed['values']): Promise<void> {
  const config = loadConfig(process.env, overrides(values));
  if (cluster.isPrimary && config.workersNotice) process.stderr.write(`kosh: ${config.workersNotice}\n`);
  const clustered = config.workers > 1;
  if (clustered && cluster.isPrimary) {
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
  const container = await createContainer(config, { migrate: !cluster.isWorker });
  if (!cluster.isWorker) await bootstrap(container);
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
  await app.listen({ port: config.port, host: config.host });
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
async function worker(values: Parsed['values']): Promise<void> {
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

/**
 * `kosh trigger EVENT`: the key comes from --api-key/--secret-key, KOSH_API_KEY/KOSH_SECRET_KEY, or
 * the sandbox merchant's in sandbox-credentials.json of the data folder; the API from --api-url,
 * KOSH_API_URL or KOSH_PUBLIC_URL.
 */
async function fire(event: string | undefined, values: Parsed['values']): Promise<void> {
  if (!event) throw new UsageError(`Name the event: ${Object.keys(TRIGGERS).join(', ')}.`);
  const config = loadConfig(process.env, overrides(values));
  let apiKey = values['api-key'] ?? process.env.KOSH_API_KEY;
  let secretKey = values['secret-key'] ?? process.env.KOSH_SECRET_KEY;
  if (!apiKey || !secretKey) {
    const sandbox = readSandboxCredentials(config.dataDir);
    if (!sandbox) {
      throw new UsageError(
        `Set KOSH_API_KEY and KOSH_SECRET_KEY (or --api-key and --secret-key) to a test key; no ${CREDENTIALS_FILE} in ${config.dataDir} to take the sandbox merchant's from.`,
      );
    }
    apiKey = sandbox.merchant.api_key;
    secretKey = sandbox.merchant.secret_key;
  }
  await trigger({
    apiUrl: values['api-url'] ?? process.env.KOSH_API_URL ?? config.publicUrl,
    apiKey,
    secretKey,
    event,
    method: values.method,
    print: (line) => process.stdout.write(`${line}\n`),
  });
}

async function listen(values: Parsed['values']): Promise<void> {
  const apiKey = values['api-key'] ?? process.env.KOSH_API_KEY;
  const secretKey = values['secret-key'] ?? process.env.KOSH_SECRET_KEY;
  if (!apiKey || !secretKey) {
    throw new UsageError(
      'Set KOSH_API_KEY and KOSH_SECRET_KEY (or --api-key and --secret-key) to a test key.',
    );
  }
  const port = values['listen-port'] === undefined ? 0 : Number(values['listen-port']);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError('--listen-port must be a port number.');
  const listening = await startWebhooksListen({
    apiUrl: values['api-url'] ?? process.env.KOSH_API_URL ?? 'http://localhost:3000',
    apiKey,
    secretKey,
    forwardTo: values['forward-to'],
    events: values.events?.split(',').map((type) => type.trim()),
    port,
    print: (line) => process.stdout.write(`${line}\n`),
  });
  const stop = () => {
    void listening.close().finally(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/**
 * Admin commands open the database themselves; on the embedded database while `kosh serve` holds
 * the data folder, they are sent to that server's admin channel instead (src/cli/admin.ts).
 */
async function admin(
  command: string,
  sub: string | undefined,
  values: Parsed['values'],
  target: string | undefined,
): Promise<void> {
  const request = parseAdmin(command, sub, target, values);
  const config = loadConfig(
    { ...process.env, KOSH_LOG_LEVEL: process.env.KOSH_LOG_LEVEL ?? 'warn' },
    overrides(values),
  );
  if (request.command === 'users create' && request.password === undefined) {
    request.password = await promptPassword();
  }
  let container: Container;
  try {
    container = await createContainer(config);
  } catch (error) {
    if (!(error instanceof DataDirLockedError)) throw error;
    const output = await sendToAdminChannel(config.dataDir, request);
    if (!output) {
      throw new AdminChannelError(
        `${error.message} Its admin channel (${adminSocketPath(config.dataDir)}) did not answer: ` +
          'that process is not a kosh serve of this version, or is still starting.',
      );
    }
    return print(output, values.json);
  }
  try {
    print(await executeAdmin(container, request), values.json);
  } finally {
    await container.close();
  }
}

function print(output: Record<string, unknown>, json: boolean | undefined): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(output)}\n`);
    return;
  }
  for (const [key, value] of Object.entries(output)) {
    process.stdout.write(`${key.padEnd(12)} ${String(value)}\n`);
  }
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parse(argv);
  const [command = 'serve', sub, target] = positionals;
  if (values.help || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command === 'serve') return serve(values);
  if (command === 'worker') return worker(values);
  if (command === 'webhooks' && sub === 'listen') return listen(values);
  if (command === 'trigger') return fire(sub, values);
  if (command === 'migrate') {
    const config = loadConfig(process.env, overrides(values));
    // The database alone: the container reads tables (settings) that migrations create.
    const db = await openDatabase(config);
    try {
      const applied = await migrate(db);
      process.stdout.write(
        applied.length ? `Applied: ${applied.join(', ')}\n` : 'The database is up to date.\n',
      );
    } finally {
      await db.close();
    }
    return;
  }
  return admin(command, sub, values, target);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (
    error instanceof ConfigError ||
    error instanceof DataDirLockedError ||
    error instanceof UsageError ||
    error instanceof ListenError ||
    error instanceof AdminChannelError ||
    error instanceof TriggerError ||
    error instanceof KoshError
  ) {
    process.stderr.write(`kosh: ${error.message}\n`);
    if (error instanceof UsageError) process.stderr.write(`\n${USAGE}\n`);
    process.exit(error instanceof UsageError ? 64 : 1);
  }
  if (error instanceof Error && 'code' in error && error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    process.stderr.write(`kosh: ${error.message}\n\n${USAGE}\n`);
    process.exit(64);
  }
  process.stderr.write(`kosh: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
