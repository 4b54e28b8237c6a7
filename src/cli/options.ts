import { parseArgs } from 'node:util';
import type { ConfigOverrides } from '../config.js';

/** The command line's options: every command parses the same set (src/main.ts). */
export function parse(argv: string[]) {
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

export type Parsed = ReturnType<typeof parse>;

/** How many words each command line is (`merchant activate MID` is three). */
const COMMAND_WORDS: Record<string, number> = {
  serve: 1,
  worker: 1,
  migrate: 1,
  trigger: 2,
  'webhooks listen': 2,
  'documents migrate': 2,
  'merchant create': 2,
  'merchant activate': 3,
  'merchant suspend': 3,
  'merchant clarify': 3,
  'partner create': 2,
  'keys create': 2,
  'users create': 2,
  'encryption rotate': 2,
};

/**
 * What is wrong when a known command is given a word it does not take (`kosh merchant suspend mid_1
 * mid_2`), which would otherwise be ignored; undefined when there is none or the command is
 * unknown (the caller says so).
 */
export function extraArgument(positionals: string[]): string | undefined {
  const [command = 'serve', sub] = positionals;
  const words = COMMAND_WORDS[`${command} ${sub}`] ?? COMMAND_WORDS[command];
  if (words === undefined || positionals.length <= words) return undefined;
  return `Unexpected argument '${positionals[words]}' after 'kosh ${positionals.slice(0, words).join(' ')}'.`;
}

export function overrides(values: Parsed['values']): ConfigOverrides {
  const result: ConfigOverrides = {};
  if (values.port !== undefined) result.port = values.port;
  if (values.host !== undefined) result.host = values.host;
  if (values['data-dir'] !== undefined) result.dataDir = values['data-dir'];
  if (values['public-url'] !== undefined) result.publicUrl = values['public-url'];
  if (values['database-url'] !== undefined) result.databaseUrl = values['database-url'];
  if (values.workers !== undefined) result.workers = values.workers;
  return result;
}
