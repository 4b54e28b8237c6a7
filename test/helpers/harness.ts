import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import qs from 'qs';
import { afterAll, beforeAll, describe } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type Container, type ContainerOptions, createContainer } from '../../src/container.js';
import type { Mode } from '../../src/domain/scope.js';
import type { App } from '../../src/http/app-types.js';
import { buildServer } from '../../src/http/server.js';
import { createLogger } from '../../src/log.js';
import type { Credentials } from '../../src/modules/accounts/accounts.service.js';
import { TestClock } from './clock.js';
import { countingDb, type QueryLog, roundTripLog } from './counting-db.js';
import { DATABASE_KINDS, type DatabaseKind, openTestDatabase } from './databases.js';

export interface TestAccount {
  id: string;
  credentials: Credentials;
  auth: string;
}

export function basicAuth(credentials: { api_key: string; secret_key: string }): string {
  return `Basic ${Buffer.from(`${credentials.api_key}:${credentials.secret_key}`).toString('base64')}`;
}

export interface RequestOptions {
  auth?: string | TestAccount;
  json?: unknown;
  form?: Record<string, unknown> | string;
  headers?: Record<string, string>;
}

export interface Harness {
  kind: DatabaseKind;
  container: Container;
  app: App;
  clock: TestClock;
  /** The round trips the service made to the database (reset it before the request to measure). */
  queries: QueryLog;
  /** Every log line written so far, as text. */
  logs(): string;
  merchant(name?: string, options?: { partnerId?: string }): Promise<TestAccount>;
  partner(name?: string): Promise<TestAccount>;
  /** Activates the account and issues it a live key. */
  liveKey(account: TestAccount): Promise<TestAccount>;
  request(
    method: InjectOptions['method'],
    url: string,
    options?: RequestOptions,
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** A live-mode provider account (a local fake provider's connector). */
  liveConnector?: ContainerOptions['liveConnector'];
  /** The system clock instead of the test clock: for tests that run the background jobs in real time. */
  realClock?: boolean;
  /** Keep the embedded database in this folder instead of memory. */
  pgliteDir?: string;
  /** How webhooks leave (a live endpoint's signed request handed to a local receiver). */
  webhookSender?: ContainerOptions['webhookSender'];
}

export async function createHarness(
  kind: DatabaseKind,
  env: Record<string, string> = {},
  options: HarnessOptions = {},
): Promise<Harness> {
  const log = roundTripLog();
  const db = countingDb(
    await openTestDatabase(kind, { pgliteDir: options.pgliteDir, onRoundTrip: log.observe }),
    log.wire,
  );
  const clock = new TestClock();
  if (options.realClock) clock.now = () => new Date();
  let captured = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      captured += chunk.toString();
      done();
    },
  });
  // Suites send far more requests per second than a merchant would and the test clock only moves
  // when told: limits are lifted unless a suite sets them (test/security/rate-limits.test.ts does).
  const config = loadConfig({
    KOSH_LOG_LEVEL: 'info',
    KOSH_PUBLIC_URL: 'http://localhost:3000',
    KOSH_RATE_LIMIT_TEST_PER_SECOND: '0',
    KOSH_RATE_LIMIT_LIVE_PER_SECOND: '0',
    KOSH_AUTH_FAILURE_LIMIT: '0',
    // A key of its own per harness: secrets are stored encrypted under it (docs/security.md).
    KOSH_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    // Test receivers listen on this machine; PostgreSQL's default (off) is tested on its own.
    KOSH_ALLOW_LOOPBACK_WEBHOOKS: 'true',
    // Dashboard password hashes at scrypt's lowest accepted cost (2^14, not the default 2^17):
    // suites log in hundreds of times; what they test is the login, not the hash's strength.
    KOSH_DASHBOARD_PASSWORD_COST: '14',
    ...env,
  });
  const container = await createContainer(config, {
    db,
    clock,
    log: createLogger(config.logLevel, sink),
    migrate: false,
    liveConnector: options.liveConnector,
    webhookSender: options.webhookSender,
  });
  const app = await buildServer(container);
  let counter = 0;

  async function account(
    kind: 'merchant' | 'partner',
    name: string,
    partnerId?: string,
  ): Promise<TestAccount> {
    const { account, credentials } = await container.services.accounts.createAccountWithTestKey({
      kind,
      name: `${name} ${++counter}`,
      partnerId: partnerId ?? null,
    });
    return { id: account.id, credentials, auth: basicAuth(credentials) };
  }

  return {
    kind,
    container,
    app,
    clock,
    queries: db.queries,
    logs: () => captured,
    merchant: (name = 'Test Merchant', options = {}) => account('merchant', name, options.partnerId),
    partner: (name = 'Test Partner') => account('partner', name),
    async liveKey(testAccount) {
      await container.db.transaction((tx) =>
        container.services.accounts.setStatus(tx, testAccount.id, 'activated'),
      );
      const credentials = await container.services.accounts.issueKey(testAccount.id, 'live' as Mode);
      return { id: testAccount.id, credentials, auth: basicAuth(credentials) };
    },
    async request(method, url, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.auth)
        headers.authorization = typeof options.auth === 'string' ? options.auth : options.auth.auth;
      let payload: string | undefined;
      if (options.json !== undefined) {
        headers['content-type'] ??= 'application/json';
        payload = typeof options.json === 'string' ? options.json : JSON.stringify(options.json);
      } else if (options.form !== undefined) {
        headers['content-type'] ??= 'application/x-www-form-urlencoded';
        payload = typeof options.form === 'string' ? options.form : qs.stringify(options.form);
      }
      return app.inject({ method, url, headers, payload });
    },
    async close() {
      await app.close();
      await container.close();
    },
  };
}

/** Runs the same suite once on PGlite and once on PostgreSQL, each with a fresh database. */
export function describeEachDatabase(
  title: string,
  suite: (harness: () => Harness) => void,
  /** Settings; a function is called when the harness starts (after the file's own beforeAll). */
  env: Record<string, string> | (() => Record<string, string>) = {},
  options: HarnessOptions | (() => HarnessOptions) = {},
) {
  for (const kind of DATABASE_KINDS) {
    describe(`${title} [${kind}]`, () => {
      let harness: Harness | undefined;
      beforeAll(async () => {
        harness = await createHarness(
          kind,
          typeof env === 'function' ? env() : env,
          typeof options === 'function' ? options() : options,
        );
      });
      afterAll(async () => {
        await harness?.close();
      });
      suite(() => {
        if (!harness) throw new Error('harness not ready');
        return harness;
      });
    });
  }
}
