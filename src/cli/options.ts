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
