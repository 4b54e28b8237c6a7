import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Container } from '../container.js';
import { KoshError } from '../domain/errors.js';
import type { Mode } from '../domain/scope.js';
import { sealSecrets } from '../security/sealed-columns.js';

/** A mistake in the command line: the usage is printed with it. */
export class UsageError extends Error {}

/** An admin command, checked before any database is opened. */
export type AdminRequest =
  | { command: 'merchant create'; name: string; partner: string | null }
  | {
      command: 'merchant operate';
      action: 'activate' | 'suspend' | 'clarify';
      merchant: string;
      reason?: string;
    }
  | { command: 'partner create'; name: string }
  | { command: 'keys create'; account: string; mode: Mode }
  | { command: 'users create'; account: string; email: string; password: string | undefined }
  | { command: 'encryption rotate' };

export interface AdminOptions {
  name?: string;
  partner?: string;
  reason?: string;
  account?: string;
  mode?: string;
  email?: string;
  password?: string;
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required.`);
  return value;
}

/** The admin commands' actions, by command. */
const ADMIN_ACTIONS = {
  merchant: ['create', 'activate', 'clarify', 'suspend'],
  partner: ['create'],
  keys: ['create'],
  users: ['create'],
  encryption: ['rotate'],
} as const;

/** Reads an admin command line; an unknown command or a missing option is a UsageError. */
export function parseAdmin(
  command: string,
  sub: string | undefined,
  target: string | undefined,
  options: AdminOptions,
): AdminRequest {
  const line = [command, sub].filter(Boolean).join(' ');
  switch (line) {
    case 'merchant create':
      return { command: line, name: required(options.name, '--name'), partner: options.partner ?? null };
    case 'merchant activate':
    case 'merchant suspend':
    case 'merchant clarify': {
      const action = sub as 'activate' | 'suspend' | 'clarify';
      return {
        command: 'merchant operate',
        action,
        merchant: required(target, 'MID'),
        reason: action === 'clarify' ? required(options.reason, '--reason') : undefined,
      };
    }
    case 'partner create':
      return { command: line, name: required(options.name, '--name') };
    case 'keys create': {
      const mode = required(options.mode, '--mode');
      if (mode !== 'test' && mode !== 'live') throw new UsageError('--mode must be test or live.');
      return { command: line, account: required(options.account, '--account'), mode };
    }
    case 'users create':
      return {
        command: line,
        account: required(options.account, '--account'),
        email: required(options.email, '--email'),
        password: options.password,
      };
    case 'encryption rotate':
      return { command: line };
    default: {
      // `kosh merchant` alone is a command without its action: name the ones it takes.
      const actions = ADMIN_ACTIONS[command as keyof typeof ADMIN_ACTIONS];
      if (actions && sub === undefined) {
        throw new UsageError(
          `${command} needs an action: ${actions.map((a) => `${command} ${a}`).join(', ')}.`,
        );
      }
      throw new UsageError(line ? `Unknown command: ${line}` : 'No command given.');
    }
  }
}

/** Runs an admin command on an open container; what it prints, as an object. */
export async function executeAdmin(
  container: Container,
  request: AdminRequest,
): Promise<Record<string, unknown>> {
  const { accounts, merchants, dashboardUsers } = container.services;
  switch (request.command) {
    case 'merchant create': {
      const { account, credentials } = await accounts.createAccountWithTestKey({
        kind: 'merchant',
        name: request.name,
        partnerId: request.partner,
      });
      return { ...credentials, status: account.status };
    }
    case 'merchant operate': {
      return merchants.operateAny(request.merchant, request.action, request.reason);
    }
    case 'partner create': {
      const { account, credentials } = await accounts.createAccountWithTestKey({
        kind: 'partner',
        name: request.name,
      });
      return { ...credentials, status: account.status };
    }
    case 'keys create':
      return { ...(await accounts.issueKey(request.account, request.mode)) };
    case 'users create': {
      if (request.password === undefined) throw new UsageError('--password is required.');
      const user = await dashboardUsers.createUser({
        accountId: request.account,
        email: request.email,
        password: request.password,
      });
      return {
        user_id: user.id,
        account_id: user.account_id,
        email: user.email,
        login: `${container.config.publicUrl}/dashboard/`,
      };
    }
    case 'encryption rotate': {
      const reencrypted = await sealSecrets(container.db, container.keyring, { rotate: true });
      return { reencrypted, key_id: container.keyring.currentKeyId };
    }
  }
}

/**
 * The admin channel of a `kosh serve` on the embedded database: the data folder serves one process,
 * so admin commands run by another `kosh` are sent here and run by the server itself. A Unix socket
 * in a folder only the data folder's owner may enter (0700): only the local operator can use it.
 */
export function adminSocketPath(dataDir: string): string {
  return path.join(dataDir, 'admin', 'kosh.sock');
}

type ChannelAnswer =
  | { ok: true; output: Record<string, unknown> }
  | { ok: false; error: string; usage?: boolean };

export async function startAdminChannel(
  container: Container,
  dataDir: string,
): Promise<{ close(): Promise<void> }> {
  const socketPath = adminSocketPath(dataDir);
  fs.mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 });
  fs.chmodSync(path.dirname(socketPath), 0o700);
  // A socket left by a process that was killed: this process holds the data folder now.
  fs.rmSync(socketPath, { force: true });
  const server = net.createServer((socket) => {
    let input = '';
    socket.setEncoding('utf8');
    // One command per connection, sent at once: a silent or endless client is cut off.
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('error', () => socket.destroy());
    const onData = (chunk: string) => {
      input += chunk;
      if (input.length > 65_536) return socket.destroy();
      const end = input.indexOf('\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.setTimeout(0);
      void answer(input.slice(0, end)).then((reply) => socket.end(`${JSON.stringify(reply)}\n`));
    };
    socket.on('data', onData);
  });
  const answer = async (line: string): Promise<ChannelAnswer> => {
    try {
      const request = JSON.parse(line) as AdminRequest;
      const command = request.command === 'merchant operate' ? `merchant ${request.action}` : request.command;
      container.log.info({ command }, 'admin command from the admin channel');
      return { ok: true, output: await executeAdmin(container, request) };
    } catch (error) {
      if (error instanceof UsageError) return { ok: false, error: error.message, usage: true };
      if (error instanceof KoshError) return { ok: false, error: error.message };
      container.log.error({ err: error }, 'admin command failed');
      return { ok: false, error: 'The admin command failed; the server log has the details.' };
    }
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  fs.chmodSync(socketPath, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        fs.rmSync(socketPath, { force: true });
      }),
  };
}

/** Sends an admin command to the server holding the data folder; undefined when none answers. */
export async function sendToAdminChannel(
  dataDir: string,
  request: AdminRequest,
): Promise<Record<string, unknown> | undefined> {
  const socketPath = adminSocketPath(dataDir);
  if (!fs.existsSync(socketPath)) return undefined;
  const reply = await new Promise<string | undefined>((resolve) => {
    let output = '';
    const socket = net.connect(socketPath);
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on('data', (chunk: string) => {
      output += chunk;
    });
    socket.on('end', () => resolve(output));
    socket.on('error', () => resolve(undefined));
  });
  if (!reply) return undefined;
  const answer = JSON.parse(reply) as ChannelAnswer;
  if (answer.ok) return answer.output;
  throw answer.usage ? new UsageError(answer.error) : new AdminChannelError(answer.error);
}

/** The server ran the command and refused it. */
export class AdminChannelError extends Error {}
