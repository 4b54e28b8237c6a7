import type { Db } from '../db/db.js';
import { KoshError } from '../domain/errors.js';
import type { Mode } from '../domain/principal.js';
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
    initiate: guarded('initiate', connector.initiate) as Connector['initiate'],
    status: guarded('status', connector.status) as Connector['status'],
    continueInBrowser: guarded('continueInBrowser', connector.continueInBrowser),
    handleReturn: guarded('handleReturn', connector.handleReturn),
    parseWebhook: guarded('parseWebhook', connector.parseWebhook),
    refund: guarded('refund', connector.refund),
    refundStatus: guarded('refundStatus', connector.refundStatus),
  };
}

/**
 * A directory of fixed connectors: the sandbox for test mode, and for live mode at most one
 * provider account (given by the operator's wiring, e.g. tests with a fake provider).
 */
export function createStaticDirectory(deps: {
  db: Pick<Db, 'assertNoTransaction'>;
  sandbox: Connector;
  live?: { connector: Connector; connectorAccountId: string };
}): ConnectorDirectory {
  const sandbox = guardConnector(deps.sandbox, deps.db);
  const live = deps.live && { ...deps.live, connector: guardConnector(deps.live.connector, deps.db) };
  return {
    async forNewPayment(scope) {
      if (scope.mode === 'test') return { connector: sandbox, connectorAccountId: null };
      if (!live) {
        throw new KoshError(
          'connector_unavailable',
          'Live payments need a payment provider account, and this merchant has none.',
        );
      }
      return live;
    },
    async forPayment(payment) {
      if (payment.connector === sandbox.name) return sandbox;
      if (
        live &&
        payment.connector === live.connector.name &&
        payment.connector_account_id === live.connectorAccountId
      ) {
        return live.connector;
      }
      throw new KoshError('connector_unavailable', `The connector '${payment.connector}' is not configured.`);
    },
    async forWebhook(connector, connectorAccountId) {
      return live && live.connector.name === connector && live.connectorAccountId === connectorAccountId
        ? live.connector
        : undefined;
    },
  };
}
