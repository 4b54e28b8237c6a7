import os from 'node:os';
import path from 'node:path';
import { ignoredSettings } from './config-ignored.js';
import { type AmountLimits, CURRENCIES } from './domain/money.js';
import { parseKey } from './security/keyring.js';

export interface Config {
  port: number;
  host: string;
  /** postgres://… selects a PostgreSQL server; undefined selects embedded PGlite in `dataDir`. */
  databaseUrl: string | undefined;
  dataDir: string;
  publicUrl: string;
  /** Server-side pepper for hashing API secrets; when unset, one is generated and kept in the database. */
  secretPepper: string | undefined;
  /**
   * The key that encrypts secrets Kosh must read back (docs/security.md). Required with PostgreSQL;
   * on the embedded database one is generated into the data folder when unset.
   */
  encryptionKey: Buffer | undefined;
  /** Earlier keys, only for decrypting what a rotation has not re-encrypted yet. */
  previousEncryptionKeys: Buffer[];
  logLevel: string;
  bodyLimitBytes: number;
  /** The whole request, headers and body, must arrive within this long (slow clients are cut off). */
  requestTimeoutMs: number;
  /** The request's headers must arrive within this long. */
  headersTimeoutMs: number;
  amountLimits: AmountLimits;
  keyCacheTtlMs: number;
  methodsCacheTtlMs: number;
  dbPoolSize: number;
  dbConnectTimeoutMs: number;
  dbStatementTimeoutMs: number;
  /** Refuse calls that leave the process (providers, webhooks, DNS, files) inside a transaction. */
  transactionGuard: boolean;
  payments: PaymentSettings;
  sandboxBootstrap: boolean;
  /** HTTP processes `serve` runs (node:cluster); always 1 on the embedded database. */
  workers: number;
  /** Largest KYC document accepted by the api-portal upload, in bytes. */
  kycMaxFileBytes: number;
  /** The PSP handle after `@` in the VPAs Kosh generates for merchants. */
  vpaHandle: string;
  /** How long a completed Idempotency-Key request is kept for replay (docs/idempotency.md). */
  idempotencyTtlSeconds: number;
  /** How long a keyed request holds its key before a retry may take it over (docs/idempotency.md). */
  idempotencyLockSeconds: number;
  rateLimits: RateLimits;
  /** How many proxies in front of Kosh to trust for X-Forwarded-For (0: use the socket address). */
  trustProxyHops: number;
  /** Set when more workers were asked for than the database allows; `serve` prints it. */
  workersNotice: string | undefined;
  /** A sentence for each `KOSH_*` variable set but not a setting (a misspelling); `serve` prints them. */
  ignoredSettings: string[];
  /** One `info` line per request instead of Fastify's two; `false` logs only warnings and errors. */
  requestLog: boolean;
  webhooks: WebhookSettings;
  /**
   * Whether test-mode webhook URLs may point at this machine (loopback). On by default on the
   * embedded database (one developer's machine), off on PostgreSQL (a shared server, where any
   * merchant's test key could otherwise make Kosh call the host's own services). Live never.
   */
  allowLoopbackWebhooks: boolean;
  /** Fault-suite crash points to arm (docs/testing.md); empty in every real deployment. */
  failpoints: string[];
  /** Where the payment providers' APIs are (docs/connectors.md), and how long a call may take. */
  providers: ProviderSettings;
  /** Dashboard sessions and the login throttle (docs/dashboard.md). */
  dashboard: DashboardSettings;
}

export interface DashboardSettings {
  /** A session not used for this long ends. */
  idleSeconds: number;
  /** A session ends this long after its login, used or not. */
  maxAgeSeconds: number;
  /** Failed logins from one address within the window after which every login from it is refused. */
  throttleFailures: number;
  throttleWindowSeconds: number;
  /** log2 of scrypt's N for new password hashes (17: OWASP's minimum). */
  passwordLog2Cost: number;
}

export interface ProviderSettings {
  /** Cashfree's API base, paths such as `/orders` appended (KOSH_CASHFREE_BASE_URL). */
  cashfreeBaseUrl: string;
  /** Razorpay's API host, paths such as `/v1/orders` appended (KOSH_RAZORPAY_BASE_URL). */
  razorpayBaseUrl: string;
  /** How long one call to a provider may take before its answer counts as unknown. */
  timeoutMs: number;
  /**
   * KOSH_LATE_AUTH_WINDOW_SECONDS: how long Kosh asks about a payment that failed without the
   * provider's final word. A provider that captures a late authorisation by itself is told to do so
   * only within it, and a Cashfree order takes no new attempt after it, so that Kosh still asks
   * about everything the provider takes.
   */
  lateWindowSeconds: number;
}

/** How long payments stay open, how long they are asked about, and the sandbox's simulated bank. */
export interface PaymentSettings {
  /** A `created` payment nobody acted on fails with `payment_expired` after this long. */
  expirySeconds: number;
  /** A `pending` payment with no answer fails with `payment_timed_out` after this long. */
  pendingTimeoutSeconds: number;
  /** A payment that failed without the provider's final word is asked about for this long. */
  lateWindowSeconds: number;
  /** How long the sandbox bank's pending answers take to settle. */
  sandboxSettleSeconds: number;
  /** How long a sandbox refund stays pending (0: processed at once). */
  sandboxRefundSeconds: number;
  /** How often an idle reconciler looks for payments due to be asked about. */
  syncIntervalMs: number;
  /**
   * How long a payment or refund claimed by a reconciler (or a refund its request is sending) is
   * left to that process before another may take it: how long the claims of a process that died wait.
   */
  syncLeaseMs: number;
}

export interface WebhookSettings {
  timeoutMs: number;
  leaseMs: number;
  batchSize: number;
  pollIntervalMs: number;
}

/** Token buckets per API key (per process) and the failed-authentication throttle per client address. */
export interface RateLimits {
  /** Sustained requests per second per key; 0 turns the limit off for that mode. */
  perSecond: Record<'test' | 'live', number>;
  /** Bucket size: how many requests a key may send at once after being idle. */
  burst: Record<'test' | 'live', number>;
  /** Failed authentications per client address per window before that address gets 429s. */
  authFailures: number;
  authFailureWindowSeconds: number;
}

export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    readonly reason: string,
  ) {
    super(`Invalid setting ${setting}: ${reason}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;
export type ConfigOverrides = Partial<
  Record<'port' | 'host' | 'dataDir' | 'publicUrl' | 'databaseUrl' | 'workers', string>
>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `expected a whole number, got '${raw}'.`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(name, `expected a number from ${min} to ${max}, got ${value}.`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes'].includes(raw)) return true;
  if (['0', 'false', 'no'].includes(raw)) return false;
  throw new ConfigError(name, `expected true or false, got '${raw}'.`);
}

function url(name: string, raw: string, protocols: string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `'${raw}' is not an absolute URL.`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `expected a ${protocols.join(' or ')} URL, got '${parsed.protocol}'.`);
  }
  return raw;
}

function providerSettings(env: Env): Omit<ProviderSettings, 'lateWindowSeconds'> {
  const base = (name: string, fallback: string) =>
    url(name, env[name] || fallback, ['https:', 'http:']).replace(/\/+$/, '');
  return {
    cashfreeBaseUrl: base('KOSH_CASHFREE_BASE_URL', 'https://api.cashfree.com/pg'),
    razorpayBaseUrl: base('KOSH_RAZORPAY_BASE_URL', 'https://api.razorpay.com'),
    timeoutMs: integer(env, 'KOSH_PROVIDER_TIMEOUT_MS', 10_000, 100, 60_000),
  };
}

function webhookSettings(env: Env): WebhookSettings {
  const timeoutMs = integer(env, 'KOSH_WEBHOOK_TIMEOUT_MS', 15_000, 1_000, 60_000);
  const leaseMs = integer(env, 'KOSH_WEBHOOK_LEASE_MS', 60_000, 3_000, 3_600_000);
  // A lease that ends while its request may still be running would let a second worker send a duplicate.
  if (leaseMs < timeoutMs + 2_000) {
    throw new ConfigError(
      'KOSH_WEBHOOK_LEASE_MS',
      `must be at least KOSH_WEBHOOK_TIMEOUT_MS + 2000 (${timeoutMs + 2_000}).`,
    );
  }
  return {
    timeoutMs,
    leaseMs,
    batchSize: integer(env, 'KOSH_WEBHOOK_BATCH_SIZE', 20, 1, 500),
    pollIntervalMs: integer(env, 'KOSH_WEBHOOK_POLL_INTERVAL_MS', 500, 10, 60_000),
  };
}

function requestTimeouts(env: Env): { requestTimeoutMs: number; headersTimeoutMs: number } {
  const requestTimeoutMs = integer(env, 'KOSH_REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000);
  const headersTimeoutMs = integer(
    env,
    'KOSH_HEADERS_TIMEOUT_MS',
    Math.min(10_000, requestTimeoutMs),
    500,
    600_000,
  );
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      'KOSH_HEADERS_TIMEOUT_MS',
      `must not exceed KOSH_REQUEST_TIMEOUT_MS (${requestTimeoutMs}).`,
    );
  }
  return { requestTimeoutMs, headersTimeoutMs };
}

function paymentSettings(env: Env, providers: Pick<ProviderSettings, 'timeoutMs'>): PaymentSettings {
  const pendingTimeoutSeconds = integer(env, 'KOSH_PENDING_TIMEOUT_SECONDS', 900, 10, 86_400);
  const expirySeconds = integer(env, 'KOSH_PAYMENT_EXPIRY_SECONDS', 900, 10, 7 * 86_400);
  const lateWindowSeconds = integer(env, 'KOSH_LATE_AUTH_WINDOW_SECONDS', 259_200, 60, 30 * 86_400);
  // A payment can be started until it expires and then wait at the bank for the pending timeout:
  // Kosh must still be asking after both (and a provider is held to this window).
  if (lateWindowSeconds <= expirySeconds + pendingTimeoutSeconds) {
    throw new ConfigError(
      'KOSH_LATE_AUTH_WINDOW_SECONDS',
      `must be longer than KOSH_PAYMENT_EXPIRY_SECONDS + KOSH_PENDING_TIMEOUT_SECONDS (${expirySeconds + pendingTimeoutSeconds}).`,
    );
  }
  const syncLeaseMs = integer(env, 'KOSH_SYNC_LEASE_MS', 60_000, 3_000, 3_600_000);
  // Shorter, a claim would run out while its one provider call may still be waiting for an answer.
  if (syncLeaseMs < providers.timeoutMs + 2_000) {
    throw new ConfigError(
      'KOSH_SYNC_LEASE_MS',
      `must be at least KOSH_PROVIDER_TIMEOUT_MS + 2000 (${providers.timeoutMs + 2_000}).`,
    );
  }
  return {
    expirySeconds,
    pendingTimeoutSeconds,
    lateWindowSeconds,
    sandboxSettleSeconds: integer(env, 'KOSH_SANDBOX_SETTLE_SECONDS', 60, 0, 3_600),
    sandboxRefundSeconds: integer(env, 'KOSH_SANDBOX_REFUND_SECONDS', 5, 0, 3_600),
    syncIntervalMs: integer(env, 'KOSH_PAYMENT_SYNC_INTERVAL_MS', 1_000, 50, 60_000),
    syncLeaseMs,
  };
}

/** Reads every setting from the environment (and command-line overrides) and fails fast naming the bad one. */
export function loadConfig(env: Env = process.env, overrides: ConfigOverrides = {}): Config {
  const merged: Env = { ...env };
  const flags = new Map<string, string>();
  for (const [key, setting, flag] of OVERRIDDEN) {
    const value = overrides[key];
    if (value === undefined) continue;
    merged[setting] = value;
    flags.set(setting, flag);
  }
  // Every name the settings read is noted, so that a `KOSH_*` variable none of them read is named.
  const read = new Set<string>();
  const tracked = new Proxy(merged, {
    get: (target, name) => {
      if (typeof name === 'string') read.add(name);
      return target[name as string];
    },
  });
  try {
    return { ...configFrom(tracked), ignoredSettings: ignoredSettings(env, read) };
  } catch (error) {
    // A bad value given as a flag is named by the flag the operator typed.
    const flag = error instanceof ConfigError ? flags.get(error.setting) : undefined;
    throw flag ? new ConfigError(flag, (error as ConfigError).reason) : error;
  }
}

/** The command-line overrides: each replaces a setting. */
const OVERRIDDEN = [
  ['port', 'PORT', '--port'],
  ['host', 'HOST', '--host'],
  ['dataDir', 'KOSH_DATA_DIR', '--data-dir'],
  ['publicUrl', 'KOSH_PUBLIC_URL', '--public-url'],
  ['databaseUrl', 'DATABASE_URL', '--database-url'],
  ['workers', 'KOSH_WORKERS', '--workers'],
] as const;

function configFrom(merged: Env): Omit<Config, 'ignoredSettings'> {
  const port = integer(merged, 'PORT', 3000, 0, 65535);
  const host = merged.HOST || '127.0.0.1';
  const databaseUrl = merged.DATABASE_URL
    ? url('DATABASE_URL', merged.DATABASE_URL, ['postgres:', 'postgresql:'])
    : undefined;
  const publicUrl = url('KOSH_PUBLIC_URL', merged.KOSH_PUBLIC_URL || `http://localhost:${port}`, [
    'http:',
    'https:',
  ]).replace(/\/+$/, '');
  const pepper = merged.KOSH_SECRET_PEPPER || undefined;
  if (pepper !== undefined && pepper.length < 32) {
    throw new ConfigError('KOSH_SECRET_PEPPER', 'must be at least 32 characters long.');
  }
  const encryptionKey = merged.KOSH_ENCRYPTION_KEY ? parseKey(merged.KOSH_ENCRYPTION_KEY) : undefined;
  if (merged.KOSH_ENCRYPTION_KEY && !encryptionKey) {
    throw new ConfigError(
      'KOSH_ENCRYPTION_KEY',
      'expected 32 random bytes in base64 (for example the output of `openssl rand -base64 32`).',
    );
  }
  if (databaseUrl && !encryptionKey) {
    throw new ConfigError(
      'KOSH_ENCRYPTION_KEY',
      'is required with DATABASE_URL: secrets Kosh reads back are encrypted under it. Generate one with `openssl rand -base64 32` and keep it in your secret store.',
    );
  }
  const previousEncryptionKeys = (merged.KOSH_ENCRYPTION_PREVIOUS_KEYS ?? '')
    .split(',')
    .map((text) => text.trim())
    .filter(Boolean)
    .map((text) => {
      const key = parseKey(text);
      if (!key)
        throw new ConfigError(
          'KOSH_ENCRYPTION_PREVIOUS_KEYS',
          'expected base64 keys of 32 bytes, comma-separated.',
        );
      return key;
    });
  const logLevel = merged.KOSH_LOG_LEVEL || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(
      'KOSH_LOG_LEVEL',
      `expected fatal, error, warn, info, debug, trace or silent, got '${logLevel}'.`,
    );
  }

  const amountLimits: AmountLimits = {};
  for (const currency of Object.values(CURRENCIES)) {
    const minAmount = integer(
      merged,
      `KOSH_MIN_AMOUNT_${currency.code}`,
      currency.minAmount,
      1,
      Number.MAX_SAFE_INTEGER,
    );
    const maxAmount = integer(
      merged,
      `KOSH_MAX_AMOUNT_${currency.code}`,
      currency.maxAmount,
      1,
      Number.MAX_SAFE_INTEGER,
    );
    if (minAmount > maxAmount) {
      // Blame the one that was set: a maximum below the default minimum names the maximum.
      if (merged[`KOSH_MIN_AMOUNT_${currency.code}`] === undefined) {
        throw new ConfigError(
          `KOSH_MAX_AMOUNT_${currency.code}`,
          `must be at least KOSH_MIN_AMOUNT_${currency.code} (${minAmount}).`,
        );
      }
      throw new ConfigError(
        `KOSH_MIN_AMOUNT_${currency.code}`,
        `must not exceed KOSH_MAX_AMOUNT_${currency.code} (${maxAmount}).`,
      );
    }
    amountLimits[currency.code] = { minAmount, maxAmount };
  }

  const vpaHandle = merged.KOSH_VPA_HANDLE || 'kosh';
  if (!/^[a-z][a-z0-9]{2,31}$/.test(vpaHandle)) {
    throw new ConfigError(
      'KOSH_VPA_HANDLE',
      `expected 3 to 32 lowercase letters and digits, got '${vpaHandle}'.`,
    );
  }
  // PGlite is one process's database (its folder is locked), so it always runs a single worker.
  // On PostgreSQL every core serves by default.
  const requestedWorkers =
    merged.KOSH_WORKERS === undefined || merged.KOSH_WORKERS === ''
      ? undefined
      : integer(merged, 'KOSH_WORKERS', 1, 1, 256);
  const workers = databaseUrl ? (requestedWorkers ?? os.availableParallelism()) : 1;
  const workersNotice =
    !databaseUrl && requestedWorkers !== undefined && requestedWorkers > 1
      ? `${requestedWorkers} workers were asked for, but the embedded database (PGlite) serves one process: ` +
        'running 1 worker. Set DATABASE_URL=postgres://… to use every core.'
      : undefined;

  const providerCalls = providerSettings(merged);
  const payments = paymentSettings(merged, providerCalls);
  const providers = { ...providerCalls, lateWindowSeconds: payments.lateWindowSeconds };

  return {
    port,
    host,
    databaseUrl,
    dataDir: path.resolve(merged.KOSH_DATA_DIR || '.kosh-data'),
    publicUrl,
    secretPepper: pepper,
    encryptionKey,
    previousEncryptionKeys,
    logLevel,
    bodyLimitBytes: integer(merged, 'KOSH_BODY_LIMIT_BYTES', 100 * 1024, 1024, 50 * 1024 * 1024),
    ...requestTimeouts(merged),
    amountLimits,
    keyCacheTtlMs: integer(merged, 'KOSH_KEY_CACHE_TTL_MS', 30_000, 0, 3_600_000),
    methodsCacheTtlMs: integer(merged, 'KOSH_METHODS_CACHE_TTL_MS', 5_000, 0, 3_600_000),
    dbPoolSize: integer(merged, 'KOSH_DB_POOL_SIZE', 10, 1, 1000),
    dbConnectTimeoutMs: integer(merged, 'KOSH_DB_CONNECT_TIMEOUT_MS', 5_000, 100, 600_000),
    dbStatementTimeoutMs: integer(merged, 'KOSH_DB_STATEMENT_TIMEOUT_MS', 10_000, 100, 600_000),
    transactionGuard: boolean(merged, 'KOSH_TRANSACTION_GUARD', true),
    payments,
    sandboxBootstrap: boolean(merged, 'KOSH_SANDBOX_BOOTSTRAP', true),
    workers,
    workersNotice,
    requestLog: boolean(merged, 'KOSH_REQUEST_LOG', true),
    webhooks: webhookSettings(merged),
    allowLoopbackWebhooks: boolean(merged, 'KOSH_ALLOW_LOOPBACK_WEBHOOKS', databaseUrl === undefined),
    providers,
    failpoints: (merged.KOSH_FAILPOINTS ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
    kycMaxFileBytes: integer(merged, 'KOSH_KYC_MAX_FILE_BYTES', 5 * 1024 * 1024, 1024, 50 * 1024 * 1024),
    vpaHandle,
    idempotencyTtlSeconds: integer(merged, 'KOSH_IDEMPOTENCY_TTL_SECONDS', 86_400, 60, 30 * 86_400),
    idempotencyLockSeconds: integer(merged, 'KOSH_IDEMPOTENCY_LOCK_SECONDS', 60, 1, 3_600),
    rateLimits: {
      perSecond: {
        live: integer(merged, 'KOSH_RATE_LIMIT_LIVE_PER_SECOND', 100, 0, 1_000_000),
        test: integer(merged, 'KOSH_RATE_LIMIT_TEST_PER_SECOND', 50, 0, 1_000_000),
      },
      burst: {
        live: integer(merged, 'KOSH_RATE_LIMIT_LIVE_BURST', 200, 1, 10_000_000),
        test: integer(merged, 'KOSH_RATE_LIMIT_TEST_BURST', 100, 1, 10_000_000),
      },
      authFailures: integer(merged, 'KOSH_AUTH_FAILURE_LIMIT', 20, 0, 1_000_000),
      authFailureWindowSeconds: integer(merged, 'KOSH_AUTH_FAILURE_WINDOW_SECONDS', 60, 1, 86_400),
    },
    trustProxyHops: integer(merged, 'KOSH_TRUST_PROXY_HOPS', 0, 0, 10),
    dashboard: {
      idleSeconds: integer(merged, 'KOSH_DASHBOARD_IDLE_SECONDS', 1_800, 60, 86_400),
      maxAgeSeconds: integer(merged, 'KOSH_DASHBOARD_MAX_AGE_SECONDS', 43_200, 300, 30 * 86_400),
      throttleFailures: integer(merged, 'KOSH_DASHBOARD_LOGIN_FAILURES', 20, 1, 1_000_000),
      throttleWindowSeconds: integer(merged, 'KOSH_DASHBOARD_LOGIN_WINDOW_SECONDS', 900, 60, 86_400),
      passwordLog2Cost: integer(merged, 'KOSH_DASHBOARD_PASSWORD_COST', 17, 14, 20),
    },
  };
}
