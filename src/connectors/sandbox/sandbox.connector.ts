import type { Connector, ConnectorOutcome, CustomerChoice } from '../connector.js';
import { SANDBOX_BANKS, SANDBOX_WALLETS, type SandboxInstrument } from './catalogue.js';

/** Finds a sandbox bank or wallet by code, in any case. */
export function sandboxInstrument(
  method: 'netbanking' | 'wallet',
  code: string,
): SandboxInstrument | undefined {
  const list = method === 'netbanking' ? SANDBOX_BANKS : SANDBOX_WALLETS;
  const wanted = code.toLowerCase();
  return list.find((instrument) => instrument.code.toLowerCase() === wanted);
}

const OUTCOMES: Record<CustomerChoice, ConnectorOutcome> = {
  success: { status: 'captured' },
  failure: {
    status: 'failed',
    errorCode: 'payment_declined',
    errorReason: 'The bank or wallet declined the payment.',
  },
  cancel: {
    status: 'failed',
    errorCode: 'payment_cancelled',
    errorReason: 'The customer cancelled the payment.',
  },
};

/**
 * Test mode's simulated banks and wallets: no network, the action fixed per code by the catalogue,
 * the outcome chosen by the customer on Kosh's own sandbox page. A code the account enabled that is
 * not in the catalogue answers `html_form`.
 */
export function createSandboxConnector(): Connector {
  return {
    name: 'sandbox',
    async initiate(payment) {
      return { action: sandboxInstrument(payment.method, payment.code)?.action ?? 'html_form' };
    },
    async authenticate(_payment, choice) {
      return OUTCOMES[choice];
    },
    async status() {
      // The sandbox decides at authentication; until then there is nothing to report.
      return { status: 'pending' };
    },
  };
}
