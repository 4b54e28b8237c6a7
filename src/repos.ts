import { createAccountsRepo } from './modules/accounts/accounts.repo.js';
import { createCheckoutRepo } from './modules/checkout/checkout.repo.js';
import { createConnectorAccountsRepo } from './modules/connector-accounts/connector-accounts.repo.js';
import { createEventsRepo } from './modules/events/events.repo.js';
import { createIdempotencyRepo } from './modules/idempotency/idempotency.repo.js';
import { createLimitsRepo } from './modules/limits/limits.repo.js';
import { createDocumentsRepo } from './modules/merchants/documents.repo.js';
import { createMerchantsRepo } from './modules/merchants/merchants.repo.js';
import { createVpasRepo } from './modules/merchants/vpas.repo.js';
import { createMethodsRepo } from './modules/methods/methods.repo.js';
import { createOrdersRepo } from './modules/orders/orders.repo.js';
import { createPaymentsRepo } from './modules/payments/payments.repo.js';
import { createRefundsRepo } from './modules/refunds/refunds.repo.js';
import { createDeliveriesRepo } from './modules/webhooks/deliveries.repo.js';
import { createWebhooksRepo } from './modules/webhooks/webhooks.repo.js';

/** The repositories: stateless (each call takes the handle it runs on), so one set serves every wiring. */
export function createRepos() {
  return {
    accounts: createAccountsRepo(),
    checkout: createCheckoutRepo(),
    events: createEventsRepo(),
    methods: createMethodsRepo(),
    orders: createOrdersRepo(),
    payments: createPaymentsRepo(),
    refunds: createRefundsRepo(),
    connectorAccounts: createConnectorAccountsRepo(),
    webhooks: createWebhooksRepo(),
    deliveries: createDeliveriesRepo(),
    merchants: createMerchantsRepo(),
    documents: createDocumentsRepo(),
    vpas: createVpasRepo(),
    idempotency: createIdempotencyRepo(),
    limits: createLimitsRepo(),
  };
}

export type Repos = ReturnType<typeof createRepos>;
