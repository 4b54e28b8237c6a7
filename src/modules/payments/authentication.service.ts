import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { BrowserDetails, Connector, NextStep, StatusResult } from '../../connectors/connector.js';
import type { ConnectorDirectory } from '../../connectors/directory.js';
import { SANDBOX_LET_EXPIRE, type SandboxChoice } from '../../connectors/sandbox/sandbox.connector.js';
import { CallInTransactionError, type Db } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { KoshError, notFound } from '../../domain/errors.js';
import { secureRandomBytes } from '../../domain/random.js';
import { TtlCache } from '../../domain/ttl-cache.js';
import { qrDataUrl } from '../../pages/qr.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import { isFinal } from './payment.transitions.js';
import type { PaymentInitiation } from './payment-initiation.js';
import { checkoutPageUrl, upiSimulatorUrl } from './payments.actions.js';
import { expiryFailure, isExpired } from './payments.expiry.js';
import { toConnectorPayment } from './payments.model.js';
import type { PaymentRow, PaymentsRepo } from './payments.repo.js';
import type { PaymentsService } from './payments.service.js';
import type { MoveOptions, PaymentStates } from './payments.states.js';
import { signReturn } from './return-signature.js';
import { nextSyncAt, type PaymentDeadlines } from './sync-schedule.js';

export type AuthenticationView =
  /** The simulated bank or wallet page with its choices (test mode). */
  | { kind: 'choose'; payment: PaymentRow; merchantName: string; token: string }
  /** The provider's own page: a GET to it, or an auto-submitting POST of its fields. */
  | { kind: 'provider'; payment: PaymentRow; next: Extract<NextStep, { kind: 'redirect' | 'form' }> }
  /**
   * A hosted checkout's payment that failed: back to the checkout page, where the customer tries
   * again (the merchant hears of the attempt by its webhooks; the return POST is for the payment
   * that ends the session).
   */
  | { kind: 'checkout'; payment: PaymentRow; url: string }
  /** The auto-submitting POST back to the merchant's return_url. */
  | { kind: 'return'; payment: PaymentRow & { return_url: string }; signature: string }
  /** A final UPI payment without a return_url: the outcome, shown by Kosh. */
  | { kind: 'outcome'; payment: PaymentRow; merchantName: string }
  /**
   * Kosh's UPI page: the QR (wide screens) or the app button (phones) of `link`, or the collect
   * request's wait; `link` is the sandbox UPI app's address in test mode.
   */
  | {
      kind: 'upi';
      payment: PaymentRow;
      merchantName: string;
      link: string | null;
      /** The QR code of `link` (a data: URL). */
      qr: string | null;
      sandbox: boolean;
      /** The hosted checkout page the payment was started from, to choose another way to pay. */
      checkoutUrl: string | null;
    }
  /** The sandbox UPI app (test mode): the customer's choices for a UPI payment. */
  | { kind: 'simulator'; payment: PaymentRow; merchantName: string; token: string }
  /** The sandbox UPI app after a choice: the payment as it stands now. */
  | { kind: 'simulated'; payment: PaymentRow; choice: SandboxChoice | 'expire' }
  /** A used or replaced token: nothing changed; the customer reloads the page. */
  | { kind: 'stale'; payment: PaymentRow }
  /** The provider cannot be reached right now: nothing changed; the customer tries again. */
  | { kind: 'unavailable'; payment: PaymentRow };

/** A payment whose customer chooses on Kosh's sandbox bank page (not a provider's, not UPI's). */
function onSandboxPage(payment: PaymentRow): boolean {
  return payment.provider_next?.kind === 'sandbox' && payment.method !== 'upi';
}

/** A payment the sandbox UPI app can take no choice for: decided, or left to expire (recorded). */
function choiceMade(payment: PaymentRow): boolean {
  return payment.status !== 'created' || payment.provider_data.choice === SANDBOX_LET_EXPIRE;
}

/** At most this many pages' copies of their payment per process (a few MB). */
const PAGE_READS_KEPT = 2_000;

function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** A fresh single-use page token: the value for the page, and the hash Kosh stores. */
function freshToken(): { token: string; hash: Buffer } {
  const token = secureRandomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

/**
 * The browser-facing half of a payment before the provider: Kosh's authentication URL sends the
 * browser to the provider's step, or shows the sandbox bank page. It holds no API key: the payment
 * id in the path finds the payment, and a single-use token (stored only as a hash) binds a sandbox
 * choice to the page that offered it.
 */
export function createAuthenticationService(deps: {
  db: Db;
  repo: PaymentsRepo;
  states: PaymentStates;
  initiation: PaymentInitiation;
  payments: PaymentsService;
  accounts: AccountsService;
  connectors: ConnectorDirectory;
  clock: Clock;
  deadlines: PaymentDeadlines;
  publicUrl: string;
  log: Logger;
}) {
  const { db, repo, states, initiation, payments, accounts, connectors, clock, deadlines, publicUrl, log } =
    deps;
  /**
   * The payment as the sandbox page last read it when it set the page's token, per payment, so that
   * the choice posted from that page (usually the next request of the same browser) need not read
   * it again. A hint only: a choice settles from it only when the payment was not written since
   * (`settleFromPage`), and a choice that finds no copy (another process served the page, the copy
   * was dropped) reads the payment. Bounded in size and kept no longer than a payment can wait.
   */
  const pageReads = new TtlCache<PaymentRow>(deadlines.expirySeconds * 1000, PAGE_READS_KEPT, () =>
    clock.now().getTime(),
  );

  /**
   * Waiting for its customer past its expiry: the page must not take a choice, even before the
   * sweep has come by. A payment the provider may hold is left to the reconciler, which asks once
   * more before expiring it.
   */
  function pastExpiry(payment: PaymentRow): boolean {
    return (
      payment.status === 'created' &&
      payment.next_sync_at === null &&
      isExpired(payment.created_at, clock.now(), deadlines.expirySeconds)
    );
  }

  /** The payment (`read`: as the caller has just read it), expired first when it is past its expiry. */
  async function load(paymentId: string, read?: PaymentRow): Promise<PaymentRow> {
    let payment = read ?? (await repo.findById(db, paymentId));
    if (!payment) throw notFound('payment', paymentId);
    if (pastExpiry(payment)) {
      const stale = payment;
      const expired = await db.transaction((tx) =>
        states.move(tx, stale, 'expired', expiryFailure(deadlines.expirySeconds)),
      );
      payment = expired ?? (await repo.findById(db, paymentId)) ?? payment;
    }
    return payment;
  }

  async function returnView(payment: PaymentRow): Promise<AuthenticationView> {
    const { return_url } = payment;
    if (payment.checkout_session_id !== null && payment.status === 'failed') {
      return { kind: 'checkout', payment, url: checkoutPageUrl(publicUrl, payment.checkout_session_id) };
    }
    if (return_url === null) {
      const account = await accounts.getAccount(payment.account_id);
      return { kind: 'outcome', payment, merchantName: account.name };
    }
    const secret = await payments.returnSigningSecret(payment.account_id, payment.mode);
    return {
      kind: 'return',
      payment: { ...payment, return_url },
      signature: signReturn(secret, payment.id, payment.order_id, payment.status),
    };
  }

  /**
   * A UPI payment's page: waits while it is open (created, or pending at the bank), started at the
   * provider first when its answer was lost; once final, sends the browser back.
   */
  async function upiView(found: PaymentRow): Promise<AuthenticationView> {
    let payment = found;
    if (isFinal(payment.status)) return returnView(payment);
    if (!payment.provider_next && payment.status === 'created') {
      payment = await initiation.start(payment, await connectors.forPayment(payment));
      if (isFinal(payment.status)) return returnView(payment);
    }
    const next = payment.provider_next;
    if (next?.kind !== 'upi') return { kind: 'unavailable', payment };
    const account = await accounts.getAccount(payment.account_id);
    const sandbox = payment.mode === 'test';
    const link = sandbox && next.link !== null ? upiSimulatorUrl(publicUrl, payment.id) : next.link;
    const qr = link === null ? null : qrDataUrl(link);
    const checkoutUrl =
      payment.checkout_session_id === null ? null : checkoutPageUrl(publicUrl, payment.checkout_session_id);
    return { kind: 'upi', payment, merchantName: account.name, link, qr, sandbox, checkoutUrl };
  }

  /**
   * The sandbox's answer to the customer's choice, asked for the payment as the choice leaves it
   * (pending, the choice in its provider data), and the choice's own writes: the token used up, the
   * choice recorded, when to ask next.
   */
  async function ask(
    connector: Connector,
    payment: PaymentRow,
    token: string,
    choice: SandboxChoice,
  ): Promise<{ acted: MoveOptions; answer: StatusResult }> {
    const now = clock.now();
    const acting: PaymentRow = {
      ...payment,
      status: 'pending',
      pending_at: now,
      provider_data: { ...payment.provider_data, choice },
    };
    const answer = await connector.status(toConnectorPayment(acting, publicUrl));
    const acted = {
      tokenHash: hashToken(token),
      providerData: { choice },
      nextSyncAt: nextSyncAt(acting, 0, now, deadlines),
    };
    return { acted, answer };
  }

  /**
   * The choice settled from the copy of the payment that the page showing this token read (see
   * `pageReads`), without reading it again: only when that copy says the payment waits for this
   * sandbox page and the settling update finds the payment exactly as the copy has it (same state,
   * same token, not written since the copy's `updated_at`). Undefined, with nothing written,
   * otherwise: the caller reads the payment and takes the general path.
   */
  async function settleFromPage(
    seen: PaymentRow,
    token: string,
    choice: SandboxChoice,
  ): Promise<PaymentRow | undefined> {
    // An expired payment is expired by the general path (`load`), from the row as it is now.
    if (seen.status !== 'created' || !onSandboxPage(seen) || pastExpiry(seen)) return undefined;
    const connector = await connectors.forPayment(seen);
    if (!connector.local) return undefined;
    const { acted, answer } = await ask(connector, seen, token, choice);
    try {
      return await states.settleChoice(seen, acted, answer, seen.updated_at);
    } catch (error) {
      if (error instanceof CallInTransactionError) throw error;
      log.warn(
        { err: error, payment_id: seen.id },
        "settling the sandbox choice from the page's copy failed; reading the payment again",
      );
      return undefined;
    }
  }

  /**
   * The customer's choice on a sandbox page: pending with the choice recorded and the simulated
   * bank's answer applied, in one transaction. The sandbox never leaves the process and its answer
   * is a function of the recorded choice, so it is asked first, for the payment as the choice
   * leaves it, and nothing outside the database is called while the transaction is open. Should
   * that transaction fail (a row lock held past the statement timeout, a refused write), the choice
   * is committed alone, as a provider's answer would be, and the answer applied after it.
   */
  async function record(
    payment: PaymentRow,
    token: string,
    choice: SandboxChoice,
  ): Promise<PaymentRow | 'stale'> {
    const connector = await connectors.forPayment(payment);
    if (!connector.local) {
      throw new KoshError('state_conflict', 'This payment is authenticated at its provider, not here.');
    }
    const { acted, answer } = await ask(connector, payment, token, choice);
    let recorded: PaymentRow | undefined;
    try {
      recorded = await states.recordChoice(payment, acted, answer);
    } catch (error) {
      if (error instanceof CallInTransactionError) throw error;
      log.warn(
        { err: error, payment_id: payment.id },
        'recording the sandbox choice with its outcome failed; recording the choice alone',
      );
      recorded = await recordAlone(payment, acted, answer);
    }
    if (recorded) return recorded;
    const current = (await repo.findById(db, payment.id)) ?? payment;
    return current.status === 'created' ? 'stale' : current;
  }

  /**
   * The choice in a transaction of its own (created → pending, with when to ask), then the answer
   * in another. Once the first has committed the choice cannot be lost: should the second fail
   * too, the customer goes back with the payment pending and the reconciler applies the answer.
   */
  async function recordAlone(
    payment: PaymentRow,
    acted: MoveOptions,
    answer: StatusResult,
  ): Promise<PaymentRow | undefined> {
    const pending = await db.transaction((tx) => states.move(tx, payment, 'customer_acted', acted));
    if (!pending) return undefined;
    try {
      return (await states.apply(pending.id, answer, { asked: false, seen: pending })) ?? pending;
    } catch (error) {
      if (error instanceof CallInTransactionError) throw error;
      log.warn(
        { err: error, payment_id: pending.id },
        'recording the sandbox outcome failed; the reconciler will',
      );
      return pending;
    }
  }

  /** A test-mode UPI payment still waiting for its customer, for the sandbox UPI app. */
  async function simulatable(paymentId: string): Promise<PaymentRow> {
    const payment = await load(paymentId);
    if (payment.mode !== 'test' || payment.method !== 'upi') throw notFound('payment', paymentId);
    return payment;
  }

  /** The sandbox UPI app's answer to a choice its token no longer takes: the payment as it stands. */
  async function notTaken(payment: PaymentRow): Promise<AuthenticationView> {
    const current = (await repo.findById(db, payment.id)) ?? payment;
    return choiceMade(current)
      ? { kind: 'simulated', payment: current, choice: SANDBOX_LET_EXPIRE }
      : { kind: 'stale', payment };
  }

  async function sandboxPage(payment: PaymentRow): Promise<AuthenticationView> {
    const { token, hash } = freshToken();
    if (!(await repo.setTokenHash(db, payment.id, hash))) {
      return returnView((await repo.findById(db, payment.id)) ?? payment);
    }
    pageReads.set(payment.id, payment);
    return chooseView(payment, token);
  }

  async function chooseView(payment: PaymentRow, token: string): Promise<AuthenticationView> {
    const account = await accounts.getAccount(payment.account_id);
    return { kind: 'choose', payment, merchantName: account.name, token };
  }

  return {
    returnView,

    /** HEAD: whether the page exists, read without issuing a token or calling a provider. */
    async exists(paymentId: string): Promise<boolean> {
      return (await repo.findById(db, paymentId)) !== undefined;
    },

    /**
     * GET: sends the browser on to the payment's step while it waits for its customer (starting the
     * payment at the provider first when that has not happened yet); afterwards sends it back.
     */
    async view(paymentId: string, browser: BrowserDetails): Promise<AuthenticationView> {
      // One statement reads the payment and, when it shows the sandbox bank page, sets its token.
      const { token, hash } = freshToken();
      const notBefore = new Date(clock.now().getTime() - deadlines.expirySeconds * 1000);
      const found = await repo.findForPage(db, paymentId, hash, notBefore);
      if (!found) throw notFound('payment', paymentId);
      if (found.tokenSet) {
        pageReads.set(paymentId, found.payment);
        return chooseView(found.payment, token);
      }
      let payment = await load(paymentId, found.payment);
      // Another payment paid the order since this one was started: the customer is not sent on to pay again.
      payment = (await states.stopIfOrderPaid(payment)) ?? payment;
      if (payment.method === 'upi') return upiView(payment);
      if (payment.status !== 'created') return returnView(payment);
      const connector = await connectors.forPayment(payment);
      // The provider's answer to the start was lost (a timeout, an unreadable page): start again.
      // Both calls are safe to repeat (docs/connectors.md): the provider finds its order by Kosh's
      // payment id and continues it or makes a fresh attempt on it, never a second order.
      if (!payment.provider_next) payment = await initiation.start(payment, connector);
      if (payment.provider_next?.kind === 'browser') {
        payment = await initiation.continueInBrowser(payment, connector, browser);
      }
      if (payment.status !== 'created') return returnView(payment);
      const next = payment.provider_next;
      if (next?.kind === 'sandbox') return sandboxPage(payment);
      if (next?.kind === 'redirect' || next?.kind === 'form') return { kind: 'provider', payment, next };
      return { kind: 'unavailable', payment };
    },

    /**
     * POST of the sandbox page: uses the token up, moves created → pending with the customer's
     * choice and applies the simulated bank's answer to it, in one transaction when it can commit
     * and else one after the other (`record`). A choice whose answer is still pending (pending then
     * success, a late success) is finished by the reconciler from the recorded choice.
     */
    async choose(paymentId: string, token: string, choice: SandboxChoice): Promise<AuthenticationView> {
      // The page's copy is used once: whatever happens, the next choice reads the payment.
      const seen = pageReads.get(paymentId);
      if (seen) {
        pageReads.delete(paymentId);
        const settled = await settleFromPage(seen, token, choice);
        if (settled) return returnView(settled);
      }
      const payment = await load(paymentId);
      if (payment.status !== 'created') return returnView(payment);
      if (!onSandboxPage(payment)) {
        throw new KoshError('state_conflict', 'This payment is authenticated at its provider, not here.');
      }
      const recorded = await record(payment, token, choice);
      return recorded === 'stale' ? { kind: 'stale', payment } : returnView(recorded);
    },

    /** The payment's status for Kosh's UPI page to follow (no key: the payment id is the capability). */
    async status(paymentId: string): Promise<{ status: PaymentRow['status']; final: boolean }> {
      // What Kosh's UPI page follows: any other payment is not found here.
      const found = await repo.findById(db, paymentId);
      if (found?.method !== 'upi') throw notFound('UPI payment', paymentId);
      const payment = await load(paymentId, found);
      return { status: payment.status, final: isFinal(payment.status) };
    },

    /** GET of the sandbox UPI app: its choices, bound to this page by a fresh single-use token. */
    async simulator(paymentId: string): Promise<AuthenticationView> {
      const payment = await simulatable(paymentId);
      if (choiceMade(payment)) return { kind: 'simulated', payment, choice: SANDBOX_LET_EXPIRE };
      const { token, hash } = freshToken();
      if (!(await repo.setTokenHash(db, payment.id, hash))) {
        return {
          kind: 'simulated',
          payment: (await repo.findById(db, payment.id)) ?? payment,
          choice: SANDBOX_LET_EXPIRE,
        };
      }
      const account = await accounts.getAccount(payment.account_id);
      return { kind: 'simulator', payment, merchantName: account.name, token };
    },

    /**
     * POST of the sandbox UPI app: the choice is recorded as on the sandbox bank page; `expire` is
     * recorded too, using the token up, but moves nothing (the payment fails with upi_expired at
     * its expires_at). Either way the app takes no other choice afterwards.
     */
    async simulate(
      paymentId: string,
      token: string,
      choice: SandboxChoice | typeof SANDBOX_LET_EXPIRE,
    ): Promise<AuthenticationView> {
      const payment = await simulatable(paymentId);
      if (choiceMade(payment)) return { kind: 'simulated', payment, choice: SANDBOX_LET_EXPIRE };
      if (choice === SANDBOX_LET_EXPIRE) {
        const left = await repo.recordWaitingChoice(db, payment.id, hashToken(token), choice);
        return left ? { kind: 'simulated', payment: left, choice } : notTaken(payment);
      }
      const recorded = await record(payment, token, choice);
      return recorded === 'stale' ? notTaken(payment) : { kind: 'simulated', payment: recorded, choice };
    },
  };
}

export type AuthenticationService = ReturnType<typeof createAuthenticationService>;
