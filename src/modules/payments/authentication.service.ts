import { createHash, randomBytes } from 'node:crypto';
import type { ConnectorRegistry, CustomerChoice } from '../../connectors/connector.js';
import type { Db } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { KoshError, notFound } from '../../domain/errors.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import { expiryFailure, isExpired } from './payments.expiry.js';
import type { PaymentRow, PaymentsRepo } from './payments.repo.js';
import type { PaymentsService } from './payments.service.js';
import type { PaymentStates } from './payments.states.js';
import { signReturn } from './return-signature.js';

export type AuthenticationView =
  /** The simulated bank or wallet page with its Success, Failure and Cancel choices. */
  | { kind: 'choose'; payment: PaymentRow; merchantName: string; token: string }
  /** The auto-submitting POST back to the merchant's return_url. */
  | { kind: 'return'; payment: PaymentRow; signature: string }
  /** A used or replaced token: nothing changed; the customer reloads the page. */
  | { kind: 'stale'; payment: PaymentRow };

function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/**
 * The browser-facing half of a payment. It holds no API key: the payment id in the path finds the
 * payment, and a single-use token (stored only as a hash) binds a choice to the page that offered it.
 */
export function createAuthenticationService(deps: {
  db: Db;
  repo: PaymentsRepo;
  states: PaymentStates;
  payments: PaymentsService;
  accounts: AccountsService;
  connectors: ConnectorRegistry;
  clock: Clock;
  expirySeconds: number;
}) {
  const { db, repo, states, payments, accounts, connectors, clock, expirySeconds } = deps;

  async function load(paymentId: string): Promise<PaymentRow> {
    let payment = await repo.findById(db, paymentId);
    if (!payment) throw notFound('payment', paymentId);
    // Past its expiry the page must not take a choice, even before the sweep has come by.
    if (payment.status === 'created' && isExpired(payment.created_at, clock.now(), expirySeconds)) {
      const stale = payment;
      const expired = await db.transaction((tx) =>
        states.move(tx, stale, 'expired', expiryFailure(expirySeconds)),
      );
      payment = expired ?? (await repo.findById(db, paymentId)) ?? payment;
    }
    // Only the sandbox has a Kosh-rendered bank page; a live connector's page is the bank's own.
    if (payment.connector !== 'sandbox') {
      throw new KoshError('connector_unavailable', 'This payment is authenticated at its bank, not here.');
    }
    return payment;
  }

  async function returnView(payment: PaymentRow): Promise<AuthenticationView> {
    const secret = await payments.returnSigningSecret(payment.account_id, payment.mode);
    return {
      kind: 'return',
      payment,
      signature: signReturn(secret, payment.id, payment.order_id, payment.status),
    };
  }

  return {
    /** GET: offers the choices while the payment waits for its customer; afterwards sends the browser back. */
    async view(paymentId: string): Promise<AuthenticationView> {
      const payment = await load(paymentId);
      if (payment.status !== 'created') return returnView(payment);
      const token = randomBytes(32).toString('base64url');
      if (!(await repo.setTokenHash(db, payment.id, hashToken(token)))) {
        return returnView((await repo.findById(db, payment.id)) ?? payment);
      }
      const account = await accounts.getAccount(payment.account_id);
      return { kind: 'choose', payment, merchantName: account.name, token };
    },

    /** POST: uses the token up, moves created → pending, asks the connector, records the outcome. */
    async choose(paymentId: string, token: string, choice: CustomerChoice): Promise<AuthenticationView> {
      const payment = await load(paymentId);
      if (payment.status !== 'created') return returnView(payment);
      const pending = await db.transaction((tx) =>
        states.move(tx, payment, 'customer_acted', { tokenHash: hashToken(token) }),
      );
      if (!pending) {
        const current = (await repo.findById(db, payment.id)) ?? payment;
        return current.status === 'created' ? { kind: 'stale', payment: current } : returnView(current);
      }
      const connector = connectors.byName(pending.connector);
      const outcome = await connector.authenticate(
        {
          id: pending.id,
          mode: pending.mode,
          amount: Number(pending.amount),
          currency: pending.currency,
          method: pending.method,
          code: pending.bank ?? pending.wallet ?? '',
        },
        choice,
      );
      const settled = outcome.status === 'pending' ? undefined : await states.settle(pending, outcome);
      return returnView(settled ?? (await repo.findById(db, pending.id)) ?? pending);
    },
  };
}

export type AuthenticationService = ReturnType<typeof createAuthenticationService>;
