import { KoshError } from '../domain/errors.js';
import type { Mode } from '../domain/principal.js';

/**
 * The boundary between Kosh and a bank or wallet network. Kosh owns the payment row and its
 * states; a connector only answers. Calls are made outside database transactions (they may go
 * over the network): Kosh records the intent, commits, calls, then records the result.
 */
export interface ConnectorPayment {
  id: string;
  mode: Mode;
  amount: number;
  currency: string;
  method: 'netbanking' | 'wallet';
  /** The canonical bank or wallet key of the account's methods. */
  code: string;
}

/** How the customer's browser is sent to authentication (seed §2.2, §4.4). */
export type ConnectorAction = { action: 'html_form' } | { action: 'redirect' };

/** What the customer did on the authentication page of a simulated bank; live connectors ignore it. */
export type CustomerChoice = 'success' | 'failure' | 'cancel';

export type ConnectorOutcome =
  | { status: 'captured' }
  | { status: 'failed'; errorCode: string; errorReason: string }
  | { status: 'pending' };

export interface Connector {
  readonly name: string;
  /** Starts the payment at the bank or wallet and says how the browser gets there. */
  initiate(payment: ConnectorPayment): Promise<ConnectorAction>;
  /** Completes authentication after the customer acted; the answer may still be pending. */
  authenticate(payment: ConnectorPayment, choice: CustomerChoice): Promise<ConnectorOutcome>;
  /** Asks for the current outcome (reconciliation of pending or late-authorised payments). */
  status(payment: ConnectorPayment): Promise<ConnectorOutcome>;
}

export interface ConnectorRegistry {
  /** The connector for a mode; throws `connector_unavailable` when none is configured. */
  forMode(mode: Mode): Connector;
  byName(name: string): Connector;
}

/** Test mode always uses the sandbox; live mode uses the configured connector, never a simulation. */
export function createConnectorRegistry(connectors: {
  test: Connector;
  live?: Connector;
}): ConnectorRegistry {
  const all = [connectors.test, connectors.live].filter((c): c is Connector => c !== undefined);
  return {
    forMode(mode) {
      const connector = mode === 'test' ? connectors.test : connectors.live;
      if (!connector) {
        throw new KoshError(
          'connector_unavailable',
          'Live payments need a bank or wallet connector, and none is configured on this Kosh.',
        );
      }
      return connector;
    },
    byName(name) {
      const connector = all.find((candidate) => candidate.name === name);
      if (!connector)
        throw new KoshError('connector_unavailable', `The connector '${name}' is not configured.`);
      return connector;
    },
  };
}
