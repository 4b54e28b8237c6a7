import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { createConnectorRegistry } from './connectors/connector.js';
import { createSandboxConnector } from './connectors/sandbox/sandbox.connector.js';
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
import { createDocumentsRepo } from './modules/merchants/documents.repo.js';
import { createDocumentsService } from './modules/merchants/documents.service.js';
import { createMerchantsRepo } from './modules/merchants/merchants.repo.js';
import { createMerchantsService } from './modules/merchants/merchants.service.js';
import { createOnboarding } from './modules/merchants/onboarding.js';
import { createVpasRepo } from './modules/merchants/vpas.repo.js';
import { createVpasService } from './modules/merchants/vpas.service.js';
import { createMethodsService } from './modules/methods/methods.service.js';
import { createOrdersRepo } from './modules/orders/orders.repo.js';
import { createOrdersService } from './modules/orders/orders.service.js';
import { createAuthenticationService } from './modules/payments/authentication.service.js';
import { createPaymentExpiryJob } from './modules/payments/payments.expiry.js';
import { createPaymentsRepo } from './modules/payments/payments.repo.js';
import { createPaymentsService } from './modules/payments/payments.service.js';
import { createPaymentStates } from './modules/payments/payments.states.js';
import { createDeliveriesRepo } from './modules/webhooks/deliveries.repo.js';
import { createDeliveryWorker } from './modules/webhooks/delivery-worker.js';
import { createHttpSender } from './modules/webhooks/http-sender.js';
import { type Resolver, systemResolver } from './modules/webhooks/url-safety.js';
import { createWebhooksRepo } from './modules/webhooks/webhooks.repo.js';
import { createWebhooksService } from './modules/webhooks/webhooks.service.js';

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
  /** DNS for webhook URLs (tests play changing answers); the system resolver otherwise. */
  resolver?: Resolver;
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
    const events = createEventsService({ db, repo: createEventsRepo(), ids, clock });
    const orders = createOrdersService({
      db,
      repo: createOrdersRepo(),
      ids,
      clock,
      amountLimits: config.amountLimits,
    });
    // Live mode has no connector yet: live payments are refused, never simulated.
    const connectors = createConnectorRegistry({ test: createSandboxConnector() });
    const paymentsRepo = createPaymentsRepo();
    const paymentStates = createPaymentStates({ db, repo: paymentsRepo, orders, events, clock });
    const payments = createPaymentsService({
      db,
      repo: paymentsRepo,
      ids,
      clock,
      orders,
      methods,
      connectors,
      publicUrl: config.publicUrl,
    });
    const authentication = createAuthenticationService({
      db,
      repo: paymentsRepo,
      states: paymentStates,
      payments,
      accounts,
      connectors,
      clock,
      expirySeconds: config.paymentExpirySeconds,
    });
    const paymentExpiry = createPaymentExpiryJob({
      db,
      repo: paymentsRepo,
      states: paymentStates,
      clock,
      expirySeconds: config.paymentExpirySeconds,
    });

    // Consumers call `resolver.lookup` at use time, so tests can swap the DNS answers of a running container.
    const resolver: Resolver = { lookup: (options.resolver ?? systemResolver).lookup };
    const webhooksRepo = createWebhooksRepo();
    const deliveriesRepo = createDeliveriesRepo();
    const webhooks = createWebhooksService({
      db,
      repo: webhooksRepo,
      deliveries: deliveriesRepo,
      ids,
      clock,
      resolver,
    });
    const webhookDelivery = createDeliveryWorker({
      db,
      deliveries: deliveriesRepo,
      endpoints: webhooksRepo,
      ids,
      clock,
      send: createHttpSender(resolver),
      log,
      ...config.webhooks,
    });

    const merchantRepos = {
      merchants: createMerchantsRepo(),
      documents: createDocumentsRepo(),
      vpas: createVpasRepo(),
    };
    const onboarding = createOnboarding({ accounts, events, clock, repos: merchantRepos });
    const merchants = createMerchantsService({
      db,
      clock,
      accounts,
      methods,
      onboarding,
      repos: merchantRepos,
    });
    const documents = createDocumentsService({
      db,
      clock,
      ids,
      directory: path.join(config.dataDir, 'documents'),
      merchants,
      onboarding,
      repo: merchantRepos.documents,
    });
    const vpas = createVpasService({
      db,
      clock,
      ids,
      handle: config.vpaHandle,
      merchants,
      repo: merchantRepos.vpas,
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
      resolver,
      webhookDelivery,
      services: {
        accounts,
        methods,
        orders,
        events,
        payments,
        paymentStates,
        authentication,
        webhooks,
        merchants,
        documents,
        vpas,
        idempotency,
      },
      jobs: { paymentExpiry },
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
