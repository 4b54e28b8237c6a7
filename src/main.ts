#!/usr/bin/env node
import cluster from 'node:cluster';

import { AddressUnavailableError } from './cli/address-check.js';
import { AdminChannelError, UsageError } from './cli/admin.js';
import { extraArgument, overrides, type Parsed, parse } from './cli/options.js';
import { CREDENTIALS_FILE, readSandboxCredentials } from './cli/sandbox-credentials.js';
import { TRIGGERS, TriggerError, trigger } from './cli/trigger.js';
import { ListenError, startWebhooksListen } from './cli/webhooks-listen.js';
import { ConfigError, loadConfig } from './config.js';
import { DataDirLockedError, DataDirUnusableError } from './db/data-dir-lock.js';
import { SchemaTooNewError } from './db/migrate.js';
import { DatabaseStartError, EXIT_DATABASE_UNAVAILABLE } from './db/postgres.js';
import { KoshError } from './domain/errors.js';
import { EncryptionKeyError } from './security/key-check.js';

const USAGE = `Usage: kosh <command> [options]

Commands:
  serve                                  start the HTTP service (default)
  worker                                 run background jobs (webhook delivery) without HTTP
  webhooks listen [--forward-to URL] [--api-url URL] [--events a,b] [--listen-port N]
                 [--api-key KEY --secret-key SECRET]
                                         receive test-mode webhooks on this machine; the key
                                         also comes from KOSH_API_KEY and KOSH_SECRET_KEY
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
                                         payment.pending, order.paid, refund.created,
                                         refund.processed) with a net-banking payment, or a UPI
                                         one (--method upi)
  keys create --account ID --mode test|live
                                         issue a key (live keys need an activated account)
  users create --account ID --email EMAIL [--password PASSWORD]
                                         add a dashboard user (the password is asked for when
                                         not given; at least 12 characters)
  encryption rotate                      re-encrypt every stored secret with KOSH_ENCRYPTION_KEY
                                         (the old key in KOSH_ENCRYPTION_PREVIOUS_KEYS meanwhile)
  documents migrate                      PostgreSQL: move the KYC files of this host's data folder
                                         into the database (run on every host that has some)

Options:
  --port N  --host ADDR  --data-dir DIR  --public-url URL  --database-url URL
  --workers N   HTTP processes sharing the port (default: one per core on PostgreSQL; 1 on PGlite)
  --json    print machine-readable JSON (admin commands, migrate, documents migrate)
Admin commands (merchant, partner, keys, users, encryption) also work while \`kosh serve\` runs on
the embedded database: they are sent to that server through its admin channel.
Settings come from the environment; see docs/configuration.md.`;

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

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parse(argv);
  const [command = 'serve', sub, target] = positionals;
  if (values.help || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const extra = extraArgument(positionals);
  if (extra !== undefined) throw new UsageError(extra);
  // Each command loads what it needs: a trigger or the usage does not load the HTTP service.
  if (command === 'serve') return (await import('./cli/serve.js')).serve(values);
  if (command === 'worker') return (await import('./cli/serve.js')).worker(values);
  if (command === 'webhooks' && sub === 'listen') return listen(values);
  if (command === 'trigger') return fire(sub, values);
  if (command === 'migrate') return (await import('./cli/admin-command.js')).migrateCommand(values);
  if (command === 'documents' && sub === 'migrate')
    return (await import('./cli/documents.js')).migrateDocuments(values);
  return (await import('./cli/admin-command.js')).admin(command, sub, values, target);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (
    error instanceof ConfigError ||
    error instanceof AddressUnavailableError ||
    error instanceof DataDirLockedError ||
    error instanceof DataDirUnusableError ||
    error instanceof DatabaseStartError ||
    error instanceof SchemaTooNewError ||
    error instanceof EncryptionKeyError ||
    error instanceof UsageError ||
    error instanceof ListenError ||
    error instanceof AdminChannelError ||
    error instanceof TriggerError ||
    error instanceof KoshError
  ) {
    // The driver's words behind "the database is unavailable" (a timeout, a refused connection).
    const cause = error instanceof KoshError && typeof error.cause === 'string' ? ` (${error.cause})` : '';
    process.stderr.write(`kosh: ${error.message}${cause}\n`);
    if (error instanceof UsageError) process.stderr.write(`\n${USAGE}\n`);
    if (error instanceof DatabaseStartError && cluster.isWorker) process.exit(EXIT_DATABASE_UNAVAILABLE);
    process.exit(error instanceof UsageError ? 64 : 1);
  }
  // An unknown option, or one given without its value (`--data-dir` at the end).
  if (
    error instanceof Error &&
    'code' in error &&
    (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
  ) {
    process.stderr.write(`kosh: ${error.message}\n\n${USAGE}\n`);
    process.exit(64);
  }
  process.stderr.write(`kosh: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
