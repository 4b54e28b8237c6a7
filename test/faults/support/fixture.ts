import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PostgresInstance } from './postgres-instance.js';
import { koshCommand } from './service.js';

export interface FaultFixture {
  postgres: PostgresInstance;
  /** The environment every `kosh` process of the check runs with. */
  env: NodeJS.ProcessEnv;
  /** Basic credentials of the check's merchant, and its account id. */
  auth: string;
  accountId: string;
  /** Runs a `kosh` admin command with the check's environment. */
  kosh(args: string[]): Promise<{ stdout: string; stderr: string }>;
  destroy(): void;
}

/**
 * What every fault check starts from: a throwaway PostgreSQL of its own, a data folder, and a
 * merchant created with `kosh merchant create`. `settings` adds or overrides environment settings.
 */
export async function createFaultFixture(
  merchantName: string,
  settings: NodeJS.ProcessEnv = {},
): Promise<FaultFixture> {
  const postgres = await PostgresInstance.create();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-faults-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: postgres.url,
    KOSH_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    KOSH_DATA_DIR: dataDir,
    KOSH_SANDBOX_BOOTSTRAP: 'false',
    // `serve` says it is ready at info level.
    KOSH_LOG_LEVEL: 'info',
    // The loads are far above one test key's rate limit on purpose; 0 turns it off (docs/rate-limits.md).
    KOSH_RATE_LIMIT_TEST_PER_SECOND: '0',
    // The checks kill processes and then wait, seconds, for the survivors to finish what was open:
    // a killed reconciler's claims (docs/configuration.md, KOSH_SYNC_LEASE_MS) must run out within that.
    KOSH_PROVIDER_TIMEOUT_MS: '3000',
    KOSH_SYNC_LEASE_MS: '5000',
    ...settings,
  };
  const kosh = (args: string[]) => koshCommand(args, { ...env, KOSH_LOG_LEVEL: 'warn' });
  const { stdout } = await kosh(['merchant', 'create', '--name', merchantName, '--json']);
  const credentials = JSON.parse(stdout);
  return {
    postgres,
    env,
    accountId: credentials.account_id,
    kosh,
    auth: `Basic ${Buffer.from(`${credentials.api_key}:${credentials.secret_key}`).toString('base64')}`,
    destroy() {
      postgres.destroy();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
