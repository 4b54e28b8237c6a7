import path from 'node:path';
import type { Logger } from 'pino';
import { type Caches, createCaches, listenForChanges } from './caches.js';
import type { Config } from './config.js';
import type { Connector } from './connectors/connector.js';
import { type ConnectorDirectory, createConnectorDirectory } from './connectors/directory.js';
import { createSandboxConnector } from './connectors/sandbox/sandbox.connector.js';
import type { Db } from './db/db.js';
import { migrate } from './db/migrate.js';
import { migrateDatabase, openDatabase } from './db/open.js';
import { type Clock, systemClock } from './domain/clock.js';
import { createFailpoints, type Failpoints } from './domain/failpoints.js';
import { createIdGenerator, type IdGenerator } from './domain/ids.js';
import { createLogger } from './log.js';
import { createAccountsService } from './modules/accounts/accounts.service.js';
import { newPepper } from './modules/accounts/credentials.js';
import { createCheckoutService } from './modules/checkout/checkout.service.js';
import { createCheckoutPageService } from './modules/checkout/checkout-page.service.js';
import { createCheckoutSweepJob } from './modules/checkout/checkout-sweep.js';
import {
  connectorOf,
  createConnectorAccountsService,
} from './modules/connector-accounts/connector-accounts.service.js';
import { createDashboardUsers } from './modules/dashboard/users.service.js';
import { createEventsService } from './modules/events/events.service.js';
import { createIdempotencyService } from './modules/idempotency/idempotency.service.js';
import { createLocalLimits, createSharedLimits } from './modules/limits/limits.service.js';
import { createDatabaseStore, createFolderStore } from './modules/merchants/document-store.js';
import { createDocumentsService } from './modules/merchants/documents.service.js';
import { createMerchantsService } from './modules/merchants/merchants.service.js';
import { createOnboarding } from './modules/merchants/onboarding.js';
import { createVpasService } from './modules/merchants/vpas.service.js';
import { createMethodsService } from './modules/methods/methods.service.js';
import { createOrdersService } from './modules/orders/orders.service.js';
import { createAuthenticationService } from './modules/payments/authentication.service.js';
import { createPaymentInitiation } from './modules/payments/payment-initiation.js';
import { createPaymentSyncJob } from './modules/payments/payment-sync.js';
import { createPaymentExpiryJob } from './modules/payments/payments.expiry.js';
import { createPaymentsLedger } from './modules/payments/payments.ledger.js';
import { createPaymentsService } from './modules/payments/payments.service.js';
import { createPaymentStates } from './modules/payments/payments.states.js';
import { createProviderReturns } from './modules/payments/provider-returns.service.js';
import { createRefundExecution } from './modules/refunds/refund-execution.js';
import { createRefundSyncJob } from './modules/refunds/refund-sync.js';
import { createRefundsService } from './modules/refunds/refunds.service.js';
import { createDeliveryWorker } from './modules/webhooks/delivery-worker.js';
import { createHttpSender, type Sender } from './modules/webhooks/http-sender.js';
import { type Resolver, systemResolver } from './modules/webhooks/url-safety.js';
import { createWebhooksService } from './modules/webhooks/webhooks.service.js';
import { createRepos, type Repos } from './repos.js';
import { checkEncryptionKey } from './security/key-check.js';
import { KEY_FILE, loadOrCreateKeyFile } from './security/key-file.js';
import { createKeyRing, type KeyRing } from './security/keyring.js';
import { sealSecrets } from './security/sealed-columns.js';

export interface ContainerOptions {
  /** An already open database (tests); otherwise one is opened from the configuration. */
  db?: Db;
  clock?: Clock;
  log?: Logger;
  /** Apply pending migrations first (default true). */
  migrate?: boolean;
  /** DNS for webhook URLs (tests play changing answers); the system resolver otherwise. */
  resolver?: Resolver;
  /**
   * How webhooks leave the process (tests: a live-mode receiver cannot be on this machine, which live
   * mode never reaches, so tests hand the signed request to a local receiver instead).
   */
  webhookSender?: Sender;
  /** A live-mode provider account wired in by the operator (tests use a local fake provider). */
  liveConnector?: { connector: Connector; connectorAccountId: string };
}

/** What every wiring of the services shares: one per process. */
interface Shared {
  config: Config;
  clock: Clock;
  ids: IdGenerator;
  pepper: string;
  resolver: Resolver;
  connectors: ConnectorDirectory;
  caches: Caches;
  repos: Repos;
  log: Logger;
  keyring: KeyRing;
  /** Crash points of the fault suite (KOSH_FAILPOINTS); inert in every real deployment. */
  failpoints: Failpoints;
}

/**
 * Wires the module services over the pool, once per process, with their dependencies passed in
 * explicitly. A service method that a keyed request runs in its transaction takes that handle as
 * an argument (src/http/idempotency.ts).
 */
function wireServices(db: Db, shared: Shared) {
  const { config, clock, ids, pepper, resolver, connectors, caches, repos, log } = shared;
  const { publicUrl } = config;
  const deadlines = config.payments;
  const methods = createMethodsService({ db, repo: repos.methods, cache: caches.methods, connectors });
  const accounts = createAccountsService({
    db,
    repo: repos.accounts,
    ids,
    methods,
    pepper,
    keyCache: caches.keys,
    accountCache: caches.accounts,
    clock,
  });
  const events = createEventsService({ db, repo: repos.events, ids, clock });
  const orders = createOrdersService({
    db,
    repo: repos.orders,
    ids,
    clock,
    amountLimits: config.amountLimits,
  });
  const paymentStates = createPaymentStates({
    db,
    repo: repos.payments,
    orders,
    events,
    clock,
    deadlines,
    // The checkout module completes a session when its payment captures (payments does not import it).
    checkoutPaid: (tx, sessionId, paymentId) => checkout.paymentCaptured(tx, sessionId, paymentId),
    log,
  });
  const initiation = createPaymentInitiation({
    db,
    repo: repos.payments,
    states: paymentStates,
    clock,
    deadlines,
    publicUrl,
    log,
  });
  const payments = createPaymentsService({
    db,
    repo: repos.payments,
    ids,
    clock,
    orders,
    methods,
    connectors,
    initiation,
    publicUrl,
    keyring: shared.keyring,
  });
  const authentication = createAuthenticationService({
    db,
    repo: repos.payments,
    states: paymentStates,
    initiation,
    payments,
    accounts,
    connectors,
    clock,
    deadlines,
    publicUrl,
    log,
  });
  const checkout = createCheckoutService({
    db,
    repo: repos.checkout,
    ids,
    clock,
    orders,
    methods,
    payments,
    events,
    publicUrl,
  });
  const checkoutPage = createCheckoutPageService({
    db,
    checkout,
    orders,
    accounts,
    methods,
    payments,
    clock,
    publicUrl,
  });
  const connectorAccounts = createConnectorAccountsService({
    db,
    repo: repos.connectorAccounts,
    ids,
    clock,
    keyring: shared.keyring,
    publicUrl,
    methods,
  });
  const paymentsLedger = createPaymentsLedger(repos.payments);
  const refundExecution = createRefundExecution({
    db,
    repo: repos.refunds,
    payments: paymentsLedger,
    events,
    connectors,
    clock,
    publicUrl,
    log,
    failpoints: shared.failpoints,
  });
  const refunds = createRefundsService({
    db,
    repo: repos.refunds,
    payments: paymentsLedger,
    events,
    execution: refundExecution,
    ids,
    clock,
    leaseMs: config.payments.syncLeaseMs,
  });
  const providerReturns = createProviderReturns({
    db,
    webhookEvents: connectorAccounts,
    repo: repos.payments,
    states: paymentStates,
    authentication,
    connectors,
    clock,
    publicUrl,
    log,
    askAboutRefund: (connectorAccountId, refundId) => refunds.askSoon(connectorAccountId, refundId),
  });
  const webhooks = createWebhooksService({
    db,
    repo: repos.webhooks,
    deliveries: repos.deliveries,
    events,
    ids,
    clock,
    resolver,
    keyring: shared.keyring,
    allowLoopback: config.allowLoopbackWebhooks,
  });
  const merchantRepos = { merchants: repos.merchants, documents: repos.documents, vpas: repos.vpas };
  const onboarding = createOnboarding({ accounts, events, clock, repos: merchantRepos });
  const merchants = createMerchantsService({
    db,
    clock,
    accounts,
    methods,
    onboarding,
    repos: merchantRepos,
  });
  // Several hosts share a PostgreSQL database, not a data folder: the bytes go into the database.
  const folder = createFolderStore(path.join(config.dataDir, 'documents'));
  const documents = createDocumentsService({
    db,
    clock,
    ids,
    store: db.kind === 'postgres' ? createDatabaseStore(merchantRepos.documents, folder) : folder,
    folder,
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
  const dashboardUsers = createDashboardUsers({ db, ids, clock, settings: config.dashboard });
  return {
    accounts,
    dashboardUsers,
    methods,
    orders,
    events,
    payments,
    paymentStates,
    paymentsLedger,
    authentication,
    checkout,
    checkoutPage,
    providerReturns,
    refunds,
    refundExecution,
    connectorAccounts,
    webhooks,
    merchants,
    documents,
    vpas,
  };
}

export type Services = ReturnType<typeof wireServices>;

/** Opens the database and wires every service and background job. */
export async function createContainer(config: Config, options: ContainerOptions = {}) {
  const log = options.log ?? createLogger(config.logLevel);
  const db = options.db ?? (await openDatabase(config));
  try {
    if (options.migrate !== false) {
      const onWait = () => log.info('waiting for another process to finish applying migrations');
      // A database handed in (tests) is migrated as it is; one opened here, on a connection of its own.
      const applied = options.db
        ? await migrate(db, undefined, { onWait })
        : await migrateDatabase(config, db, undefined, { onWait });
      if (applied.length > 0) log.info({ migrations: applied }, 'applied migrations');
    }
    const clock = options.clock ?? systemClock;
    const repos = createRepos();
    const resolver = options.resolver ?? systemResolver;
    const keyring = createKeyRing(
      config.encryptionKey ?? loadOrCreateKeyFile(config.dataDir),
      config.previousEncryptionKeys,
    );
    await checkEncryptionKey(
      db,
      keyring,
      config.encryptionKey ? 'KOSH_ENCRYPTION_KEY' : path.join(config.dataDir, KEY_FILE),
    );
    const shared: Shared = {
      config,
      clock,
      ids: createIdGenerator(() => clock.now().getTime()),
      pepper: config.secretPepper ?? (await repos.accounts.pepperSetting(db, newPepper())),
      // Consumers call `resolver.lookup` at use time, so tests can swap the DNS answers of a running
      // container; a lookup leaves the process, so it refuses to run inside a transaction.
      resolver: {
        lookup: (hostname) => {
          db.assertNoTransaction('DNS lookup');
          return resolver.lookup(hostname);
        },
      },
      // Test mode: the sandbox. Live mode: the provider account wired in, or none (live payments
      // are then refused, never simulated).
      connectors: createConnectorDirectory({
        db,
        accounts: {
          findById: (id) => repos.connectorAccounts.findById(db, id),
          active: (accountId) => repos.connectorAccounts.active(db, accountId),
          build: (account) => connectorOf(account, keyring, config.providers),
        },
        sandbox: createSandboxConnector({
          clock,
          settleSeconds: config.payments.sandboxSettleSeconds,
          pendingTimeoutSeconds: config.payments.pendingTimeoutSeconds,
          refundSeconds: config.payments.sandboxRefundSeconds,
        }),
        live: options.liveConnector,
      }),
      caches: createCaches(config),
      repos,
      log,
      keyring,
      failpoints: createFailpoints(config.failpoints),
    };
    const stopListening = await listenForChanges(db, shared.caches);
    // Secrets stored before they were encrypted (an upgrade) are encrypted now.
    const sealed = await sealSecrets(db, keyring, { rotate: false });
    if (sealed > 0) log.info({ sealed }, 'encrypted secrets stored in plain text');
    const services = wireServices(db, shared);
    const paymentExpiry = createPaymentExpiryJob({
      db,
      repo: repos.payments,
      states: services.paymentStates,
      clock,
      expirySeconds: config.payments.expirySeconds,
    });
    const paymentSync = createPaymentSyncJob({
      db,
      repo: repos.payments,
      states: services.paymentStates,
      connectors: shared.connectors,
      clock,
      publicUrl: config.publicUrl,
      log,
      leaseMs: config.payments.syncLeaseMs,
      idleIntervalMs: config.payments.syncIntervalMs,
    });
    const webhookDelivery = createDeliveryWorker({
      db,
      deliveries: repos.deliveries,
      endpoints: repos.webhooks,
      ids: shared.ids,
      clock,
      send:
        options.webhookSender ??
        createHttpSender(shared.resolver, db, { allowLoopback: config.allowLoopbackWebhooks }),
      log,
      keyring,
      ...config.webhooks,
    });
    const idempotency = createIdempotencyService({
      db,
      repo: repos.idempotency,
      clock,
      ttlSeconds: config.idempotencyTtlSeconds,
      lockSeconds: config.idempotencyLockSeconds,
      keyring,
      failpoints: shared.failpoints,
    });
    const refundSync = createRefundSyncJob({
      db,
      repo: repos.refunds,
      payments: services.paymentsLedger,
      refunds: services.refunds,
      execution: services.refundExecution,
      clock,
      log,
      leaseMs: config.payments.syncLeaseMs,
      idleIntervalMs: config.payments.syncIntervalMs,
    });

    const checkoutSweep = createCheckoutSweepJob({ checkout: services.checkout });
    // Rate limits hold for the whole deployment: shared in PostgreSQL, in memory on PGlite's one process.
    const limits =
      db.kind === 'postgres'
        ? createSharedLimits({ db, repo: repos.limits, limits: config.rateLimits, clock, log })
        : createLocalLimits(config.rateLimits, clock);

    return {
      config,
      db,
      log,
      /**
       * The access log is buffered on the service's own standard output; a logger handed in (tests,
       * the cluster primary) gets its lines one write each, in order with everything else.
       */
      bufferedAccessLog: options.log === undefined,
      clock,
      ids: shared.ids,
      resolver: shared.resolver,
      connectors: shared.connectors,
      keyring,
      webhookDelivery,
      services: { ...services, idempotency, limits },
      jobs: { paymentExpiry, paymentSync, refundSync, checkoutSweep },
      async close() {
        await stopListening();
        await db.close();
      },
    };
  } catch (error) {
    // A database handed in belongs to the caller.
    if (!options.db) await db.close();
    throw error;
  }
}

export type Container = Awaited<ReturnType<typeof createContainer>>;
