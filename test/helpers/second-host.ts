import { loadConfig } from '../../src/config.js';
import { type Container, createContainer } from '../../src/container.js';
import { openPostgres } from '../../src/db/postgres.js';
import type { App } from '../../src/http/app-types.js';
import { buildServer } from '../../src/http/server.js';
import { createLogger } from '../../src/log.js';
import type { Harness } from './harness.js';

export interface SecondHost {
  container: Container;
  app: App;
  close(): Promise<void>;
}

/**
 * Another Kosh host on the PostgreSQL database of `first` (a pool, container and server of its
 * own, as a second machine has), with the same encryption key and clock. `env` adds settings.
 */
export async function startSecondHost(first: Harness, env: Record<string, string> = {}): Promise<SecondHost> {
  const url = (first.container.db as { url?: string }).url;
  if (!url) throw new Error('a second host needs the first one on PostgreSQL');
  const config = loadConfig({
    KOSH_LOG_LEVEL: 'silent',
    KOSH_PUBLIC_URL: 'http://localhost:3000',
    KOSH_ENCRYPTION_KEY: first.container.config.encryptionKey!.toString('base64'),
    KOSH_RATE_LIMIT_TEST_PER_SECOND: '0',
    KOSH_RATE_LIMIT_LIVE_PER_SECOND: '0',
    ...env,
  });
  const db = openPostgres(url, {
    poolSize: 2,
    connectTimeoutMs: 20_000,
    statementTimeoutMs: 30_000,
    transactionGuard: true,
  });
  const container = await createContainer(config, {
    db,
    migrate: false,
    clock: first.clock,
    log: createLogger('silent'),
  });
  const app = await buildServer(container);
  return {
    container,
    app,
    async close() {
      await app.close();
      await container.close();
    },
  };
}
