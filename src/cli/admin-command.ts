import { loadConfig } from '../config.js';
import { type Container, createContainer } from '../container.js';
import { DataDirLockedError } from '../db/data-dir-lock.js';
import { migrateDatabase, openDatabase } from '../db/open.js';
import {
  AdminChannelError,
  adminSocketPath,
  executeAdmin,
  parseAdmin,
  sendToAdminChannel,
  UsageError,
} from './admin.js';
import { overrides, type Parsed } from './options.js';

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

/**
 * Admin commands open the database themselves; on the embedded database while `kosh serve` holds
 * the data folder, they are sent to that server's admin channel instead (src/cli/admin.ts).
 */
export async function admin(
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

/** `kosh migrate`: the database alone, as the container reads tables (settings) that migrations create. */
export async function migrateCommand(values: Parsed['values']): Promise<void> {
  const config = loadConfig(process.env, overrides(values));
  const db = await openDatabase(config);
  try {
    const applied = await migrateDatabase(config, db);
    if (values.json) process.stdout.write(`${JSON.stringify({ applied })}\n`);
    else {
      process.stdout.write(
        applied.length ? `Applied: ${applied.join(', ')}\n` : 'The database is up to date.\n',
      );
    }
  } finally {
    await db.close();
  }
}
