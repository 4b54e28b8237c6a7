import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './db/db.js';
import { migrate } from './db/migrate.js';
import { openPglite } from './db/pglite.js';
import { openPostgres } from './db/postgres.js';
import { type Clock, systemClock } from './domain/clock.js';
import { createIdGenerator, type IdGenerator } from './domain/ids.js';
import { createLogger } from './log.js';
import { createAccountsRepo } from './modules/accounts/accounts.repo.js';
import { createAccountsService } from './modules/accounts/accounts.service.js';
import { newPepper } from './modules/accounts/credentials.js';
import { createEventsRepo } from './modules/events/events.repo.js';
import { createEventsService } from './modules/events/events.service.js';
import { createIdempotencyRepo } from './modules/idempotency/idempotency.repo.js';
import { createIdempotencyService } from './modules/idempotency/idempotency.service.js';
import { createMethodsService } from './modules/methods/methods.service.js';
import { createOrdersRepo } from './modules/orders/orders.repo.js';
import { createOrdersService } from './modules/orders/orders.service.js';

export async function openDatabase(config: Config): Promise<Db> {
  if (config.databaseUrl) {
    return openPostgres(config.databaseUrl, {
      poolSize: config.dbPoolSize,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      statementTimeoutMs: config.dbStatementTimeoutMs,
    });
  }
  return openPglite({ dataDir: config.dataDir, connectTimeoutMs: config.dbConnectTimeoutMs });
}

export interface ContainerOptions {
  /** An already open database (tests); otherwise one is opened from the configuration. */
  db?: Db;
  clock?: Clock;
  log?: Logger;
  /** Apply pending migrations first (default true). */
  migrate?: boolean;
}

/** Wires every service with its dependencies passed in explicitly. */
export async function createContainer(config: Config, options: ContainerOptions = {}) {
  const log = options.log ?? createLogger(config.logLevel);
  const db = options.db ?? (await openDatabase(config));
  try {
    if (options.migrate !== false) {
      const applied = await migrate(db);
      if (applied.length > 0) log.info({ migrations: applied }, 'applied migrations');
    }
    const clock = options.clock ?? systemClock;
    const ids: IdGenerator = createIdGenerator(() => clock.now().getTime());
    const accountsRepo = createAccountsRepo();
    const pepper = config.secretPepper ?? (await accountsRepo.pepperSetting(db, newPepper()));

    const methods = createMethodsService({ db, cacheTtlMs: config.methodsCacheTtlMs });
    const accounts = createAccountsService({
      db,
      repo: accountsRepo,
      ids,
      methods,
      pepper,
      keyCacheTtlMs: config.keyCacheTtlMs,
    });
    const events = createEventsService({ repo: createEventsRepo(), ids, clock });
    const orders = createOrdersService({
      db,
      repo: createOrdersRepo(),
      ids,
      clock,
      amountLimits: config.amountLimits,
    });

    const idempotency = createIdempotencyService({
      db,
      repo: createIdempotencyRepo(),
      clock,
      ttlSeconds: config.idempotencyTtlSeconds,
    });

    return {
      config,
      db,
      log,
      clock,
      ids,
      services: { accounts, methods, orders, events, idempotency },
      async close() {
        await db.close();
      },
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}

export type Container = Awaited<ReturnType<typeof createContainer>>;
