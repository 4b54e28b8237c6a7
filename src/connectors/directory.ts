import type { Db } from '../db/db.js';
import { KoshError } from '../domain/errors.js';
import type { Mode } from '../domain/scope.js';
import type { Connector } from './connector.js';

/** A connector and the provider account it speaks for (null for the sandbox). */
export interface BoundConnector {
  connector: Connector;
  connectorAccountId: string | null;
}

/**
 * Which connector carries a payment. Test mode always uses the sandbox (no network). Live mode
 * uses the merchant's provider account; a live payment without one is refused, never simulated.
 * Every connector handed out is wrapped so that its calls refuse to run inside a transaction.
 */
export interface ConnectorDirectory {
  /** For a new payment of this account and mode; throws `connector_unavailable` when there is none. */
  forNewPayment(scope: { accountId: string; mode: Mode }): Promise<BoundConnector>;
  /** For an existing payment: the connector (and provider account) it was started with. */
  forPayment(payment: { connector: string; connector_account_id: string | null }): Promise<Connector>;
  /** For a provider's webhook sent to `/v1/connectors/<connector>/webhooks/<account>/`. */
  forWebhook(connector: string, connectorAccountId: string): Promise<Connector | undefined>;
  /** Where this merchant's live payments would go now, if anywhere (its methods are limited to it). */
  forLive(accountId: string): Promise<BoundConnector | undefined>;
}

/** Every call of the connector first checks that no transaction is open for the calling work. */
export function guardConnector(connector: Connector, db: Pick<Db, 'assertNoTransaction'>): Connector {
  const guarded = <A extends unknown[], R>(method: string, call: ((...args: A) => Promise<R>) | undefined) =>
    call &&
    ((...args: A) => {
      db.assertNoTransaction(`connector ${connector.name}.${method}`);
      return call.apply(connector, args);
    });
  return {
    name: connector.name,
    local: connector.local,
    methods: connector.methods,
    initiate: guarded('initiate', connector.initiate) as Connector['initiate'],
    status: guarded('status', connector.status) as Connector['status'],
    continueInBrowser: guarded('continueInBrowser', connector.continueInBrowser),
    handleReturn: guarded('handleReturn', connector.handleReturn),
    parseWebhook: guarded('parseWebhook', connector.parseWebhook),
    refund: guarded('refund', connector.refund) as Connector['refund'],
    refundStatus: guarded('refundStatus', connector.refundStatus) as Connector['refundStatus'],
  };
}

/** How many providers' connectors (one per provider account) a process keeps built. */
const BUILT_LIMIT = 1_000;

/**
 * The connectors of a running Kosh: the sandbox for test mode; for live mode, the merchant's active
 * provider account (`/v1/connector-accounts/`), its connector built from its credentials (opened
 * with the key ring) and the provider's base address; and at most one provider account the operator
 * wired in directly (tests with a local fake provider). A payment keeps the account it started
 * with: a disabled account still settles its payments and takes their webhooks.
 */
export function createConnectorDirectory<Account extends ProviderAccount>(deps: {
  db: Db;
  sandbox: Connector;
  live?: { connector: Connector; connectorAccountId: string };
  /** The provider accounts: a row by id, the merchant's active one, and a connector made from one. */
  accounts?: {
    findById(id: string): Promise<Account | undefined>;
    active(accountId: string): Promise<Account | undefined>;
    build(account: Account): Connector;
  };
}): ConnectorDirectory {
  const sandbox = guardConnector(deps.sandbox, deps.db);
  const live = deps.live && { ...deps.live, connector: guardConnector(deps.live.connector, deps.db) };
  const built = new Map<string, { version: number; connector: Connector }>();

  function connectorOf(account: Account): Connector {
    const version = account.updated_at.getTime();
    const known = built.get(account.id);
    if (known && known.version === version) return known.connector;
    const connector = guardConnector(deps.accounts!.build(account), deps.db);
    if (built.size >= BUILT_LIMIT) built.delete(built.keys().next().value as string);
    built.set(account.id, { version, connector });
    return connector;
  }

  async function forLive(accountId: string): Promise<BoundConnector | undefined> {
    const account = await deps.accounts?.active(accountId);
    if (account) return { connector: connectorOf(account), connectorAccountId: account.id };
    return live;
  }

  async function byAccountId(connector: string, id: string | null): Promise<Connector | undefined> {
    if (!id) return undefined;
    if (live && live.connector.name === connector && live.connectorAccountId === id) return live.connector;
    const account = await deps.accounts?.findById(id);
    return account && account.connector === connector ? connectorOf(account) : undefined;
  }

  return {
    forLive,
    async forNewPayment(scope) {
      if (scope.mode === 'test') return { connector: sandbox, connectorAccountId: null };
      const bound = await forLive(scope.accountId);
      if (!bound) {
        throw new KoshError(
          'connector_unavailable',
          'Live payments go through your own payment provider account, and this merchant has none: add one with POST /v1/connector-accounts/ (docs/connectors.md).',
        );
      }
      return bound;
    },
    async forPayment(payment) {
      if (payment.connector === sandbox.name) return sandbox;
      const connector = await byAccountId(payment.connector, payment.connector_account_id);
      if (connector) return connector;
      throw new KoshError('connector_unavailable', `The connector '${payment.connector}' is not configured.`);
    },
    async forWebhook(connector, connectorAccountId) {
      return byAccountId(connector, connectorAccountId);
    },
  };
}

/** What the directory needs of a provider account row. */
export interface ProviderAccount {
  id: string;
  account_id: string;
  connector: string;
  updated_at: Date;
}
