import { SANDBOX_BANKS, SANDBOX_WALLETS } from '../../connectors/sandbox/catalogue.js';
import type { Db } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { KoshError, notFound } from '../../domain/errors.js';
import type { Mode } from '../../domain/scope.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import type { MethodsService } from '../methods/methods.service.js';
import type { OrdersService } from '../orders/orders.service.js';
import type { Payment } from '../payments/payments.model.js';
import {
  authenticationUrl,
  htmlFormStep,
  type PaymentsService,
  tooManyCheckoutAttempts,
  UNANSWERED_FAILURES,
} from '../payments/payments.service.js';
import type { CheckoutSessionRow, PaymentChoice } from './checkout.model.js';
import type { CheckoutService } from './checkout.service.js';

/** Payments one session may start: enough for every honest retry, too few to use the page as a tool. */
export const CHECKOUT_MAX_ATTEMPTS = 20;

/** How many of the account's banks the page shows as the most used, before the rest. */
const MOST_USED_BANKS = 6;

export interface Instrument {
  code: string;
  label: string;
}

/** What the customer's page shows, or where it sends the browser. */
export type CheckoutPageView =
  | {
      kind: 'open';
      session: CheckoutSessionRow;
      merchantName: string;
      amount: number;
      currency: string;
      mode: Mode;
      /** UPI by QR code or app (intent), and by a request to a UPI ID (collect), as enabled. */
      upi: { app: boolean; collect: boolean } | null;
      /** The account's banks: the most used by its customers first, then the rest. */
      banks: { mostUsed: Instrument[]; others: Instrument[] } | null;
      wallets: Instrument[] | null;
      /** The merchant gave no customer: the page asks for the name, email and phone. */
      askCustomer: boolean;
      /** The newest payment the session started, to say how the last attempt ended. */
      /** `unanswered`: it failed only because Kosh stopped waiting; the bank may still take the money. */
      lastAttempt: (Payment & { instrument_name: string; page: string; unanswered: boolean }) | null;
    }
  /**
   * The order is paid: the page says so and offers the way back, the captured payment's page, which
   * sends the signed return POST to the merchant.
   */
  | {
      kind: 'paid';
      merchantName: string;
      amount: number;
      currency: string;
      paymentId: string;
      returnPage: string;
      test: boolean;
      /** Other payments of the link that took money after the order was paid: refunded, or being. */
      owedBack: { id: string; amount: number; currency: string; refunded: boolean }[];
    }
  | { kind: 'expired'; merchantName: string; amount: number; currency: string }
  /** The merchant cannot take payments now (suspended, or a live merchant no longer activated). */
  | { kind: 'unavailable'; merchantName: string; amount: number; currency: string }
  /**
   * Past `expires_at` while a payment it started is still in progress: the session waits for that
   * payment (it may still capture) but starts no other; the page leads back to that payment.
   */
  | { kind: 'closing'; merchantName: string; amount: number; currency: string; paymentPage: string | null };

/** The page's form, as the browser posts it. */
export interface CheckoutForm {
  pay?: string;
  vpa?: string;
  name?: string;
  email?: string;
  contact?: string;
}

/** Where the browser goes once a payment is started: Kosh's next page by GET, with fields or not. */
export type StartedStep =
  | { kind: 'redirect'; url: string }
  | { kind: 'form'; url: string; fields: Record<string, string>; label: string };

/**
 * The account's banks or wallets in the catalogue's order (the most used in the country first; a
 * stable sort keeps it among equals), those the catalogue does not list after them by name.
 */
function inCatalogueOrder(entries: Array<[string, string]>, catalogue: readonly Instrument[]): Instrument[] {
  const rank = new Map(catalogue.map((entry, index) => [entry.code, index]));
  return entries
    .map(([code, label]) => ({ code, label }))
    .sort(
      (a, b) =>
        (rank.get(a.code) ?? catalogue.length) - (rank.get(b.code) ?? catalogue.length) ||
        a.label.localeCompare(b.label, 'en'),
    );
}

/** A phone or tablet: the UPI payment is an intent (the app on this device), otherwise a QR code. */
function onPhone(userAgent: string | null): boolean {
  return userAgent !== null && /Mobi|Android|iPhone|iPad/i.test(userAgent);
}

function choose(form: CheckoutForm, userAgent: string | null): PaymentChoice {
  const pay = form.pay ?? '';
  const customer = {
    ...(form.name !== undefined && { name: form.name.trim() }),
    ...(form.email !== undefined && { email: form.email.trim() }),
    ...(form.contact !== undefined && { contact: form.contact.replace(/[\s-]/g, '') }),
  };
  if (pay === 'upi')
    return { method: 'upi', upi: { flow: onPhone(userAgent) ? 'intent' : 'qr' }, ...customer };
  if (pay === 'upi_collect') {
    const vpa = form.vpa?.trim() ?? '';
    if (!vpa) throw new KoshError('missing_field', 'Enter your UPI ID, such as name@bank.', 'upi.vpa');
    return { method: 'upi', upi: { flow: 'collect', vpa }, ...customer };
  }
  if (pay.startsWith('bank:')) return { method: 'netbanking', bank: pay.slice(5), ...customer };
  if (pay.startsWith('wallet:')) return { method: 'wallet', wallet: pay.slice(7), ...customer };
  throw new KoshError('missing_field', 'Choose how to pay.', 'pay');
}

/** Whether the merchant may take a payment in `mode` now: as its keys are refused (403) when not. */
function takesPayments(account: { status: string }, mode: Mode): boolean {
  return account.status !== 'suspended' && (mode === 'test' || account.status === 'activated');
}

/**
 * The customer's side of a hosted checkout session (docs/checkout.md): what the page at
 * `/checkout/<id>/` shows, and the payment a choice on it starts. It holds no key: the session's
 * unguessable id is the capability, and it works only while the session is open.
 */
export function createCheckoutPageService(deps: {
  db: Db;
  checkout: CheckoutService;
  orders: OrdersService;
  accounts: AccountsService;
  methods: MethodsService;
  payments: PaymentsService;
  clock: Clock;
  publicUrl: string;
}) {
  const { db, checkout, orders, accounts, methods, payments, clock, publicUrl } = deps;

  async function orderOf(session: CheckoutSessionRow) {
    const order = await orders.findForPayment(db, session.account_id, session.mode, session.order_id, false);
    if (!order) throw notFound('checkout_session', session.id);
    return { amount: Number(order.amount), currency: order.currency };
  }

  return {
    async view(sessionId: string): Promise<CheckoutPageView> {
      const session = await checkout.session(sessionId);
      const scope = { accountId: session.account_id, mode: session.mode };
      const [account, order] = await Promise.all([accounts.getAccount(session.account_id), orderOf(session)]);
      if (session.status === 'completed' && session.payment_id) {
        return {
          kind: 'paid',
          merchantName: account.name,
          ...order,
          paymentId: session.payment_id,
          returnPage: authenticationUrl(publicUrl, session.payment_id),
          test: session.mode === 'test',
          owedBack: await payments.checkoutOwedBack(session.id),
        };
      }
      if (session.status !== 'open') return { kind: 'expired', merchantName: account.name, ...order };
      if (!takesPayments(account, session.mode)) {
        return { kind: 'unavailable', merchantName: account.name, ...order };
      }
      if (session.expires_at.getTime() <= clock.now().getTime()) {
        const { latest } = await payments.checkoutAttempts(session.id);
        const paymentPage = latest ? authenticationUrl(publicUrl, latest.id) : null;
        return { kind: 'closing', merchantName: account.name, ...order, paymentPage };
      }
      const [offered, attempts] = await Promise.all([
        methods.offered(scope.accountId, scope.mode),
        payments.checkoutAttempts(session.id),
      ]);
      const allows = (method: CheckoutSessionRow['methods'][number]) => session.methods.includes(method);
      const upiOn = allows('upi') && (offered.upi.intent || offered.upi.collect);
      const bankEntries = allows('netbanking') ? Object.entries(offered.netbanking) : [];
      const walletEntries = allows('wallet') ? Object.entries(offered.wallet) : [];
      // Nothing the session allows is on offer now (the merchant's live connector was disabled):
      // the link is unavailable, as for a merchant that cannot take payments.
      if (!upiOn && bankEntries.length === 0 && walletEntries.length === 0) {
        return { kind: 'unavailable', merchantName: account.name, ...order };
      }
      let banks: { mostUsed: Instrument[]; others: Instrument[] } | null = null;
      if (bankEntries.length > 0) {
        const usage = await payments.bankUsage(scope);
        // The catalogue lists the country's most used banks first: its order breaks ties.
        const ranked = inCatalogueOrder(bankEntries, SANDBOX_BANKS)
          .map((bank) => ({ ...bank, used: usage.get(bank.code) ?? 0 }))
          .sort((a, b) => b.used - a.used);
        const mostUsed = ranked.slice(0, MOST_USED_BANKS);
        const others = ranked.slice(MOST_USED_BANKS).sort((a, b) => a.label.localeCompare(b.label, 'en'));
        const plain = ({ code, label }: Instrument) => ({ code, label });
        banks = { mostUsed: mostUsed.map(plain), others: others.map(plain) };
      }
      const latest = attempts.latest;
      return {
        kind: 'open',
        session,
        merchantName: account.name,
        ...order,
        mode: session.mode,
        upi: upiOn ? { app: offered.upi.intent, collect: offered.upi.collect } : null,
        banks,
        wallets: walletEntries.length > 0 ? inCatalogueOrder(walletEntries, SANDBOX_WALLETS) : null,
        askCustomer: session.customer === null,
        lastAttempt: latest
          ? {
              ...latest,
              page: authenticationUrl(publicUrl, latest.id),
              unanswered: latest.status === 'failed' && UNANSWERED_FAILURES.has(latest.error_code ?? ''),
            }
          : null,
      };
    },

    /**
     * The customer's choice: one payment through the same core as an S2S payment. Refused, with
     * nothing written, when the session is closed, the choice is incomplete, or the session has
     * started `CHECKOUT_MAX_ATTEMPTS` payments.
     */
    async start(sessionId: string, form: CheckoutForm, userAgent: string | null): Promise<StartedStep> {
      const choice = choose(form, userAgent);
      // The link is the merchant's: it starts nothing while the merchant's own keys would be refused.
      const session = await checkout.session(sessionId);
      if (!takesPayments(await accounts.getAccount(session.account_id), session.mode)) {
        throw new KoshError(
          'account_not_activated',
          'This merchant cannot take payments now; nothing was charged.',
        );
      }
      const { count } = await payments.checkoutAttempts(sessionId);
      // Counted here to start no work in vain; held by the database when posts arrive at once.
      if (count >= CHECKOUT_MAX_ATTEMPTS) throw tooManyCheckoutAttempts();
      const created = await checkout.startPayment(sessionId, choice).catch((error: unknown) => {
        // The customer is told the link cannot take payments, not how the merchant's account is set up.
        if (error instanceof KoshError && error.code === 'connector_unavailable') {
          throw new KoshError(
            'account_not_activated',
            'This merchant cannot take payments now; nothing was charged.',
          );
        }
        throw error;
      });
      const [next] = created.next;
      if (choice.method !== 'upi' && next?.action === 'html_form') {
        const code = choice.method === 'netbanking' ? choice.bank : choice.wallet;
        const step = htmlFormStep({ id: created.payment_id, method: choice.method, code }, publicUrl);
        return { kind: 'form', ...step, label: choice.method === 'netbanking' ? 'bank' : 'wallet' };
      }
      // UPI: Kosh's UPI page (the QR code, the app button, or the collect request's wait).
      return { kind: 'redirect', url: authenticationUrl(publicUrl, created.payment_id) };
    },
  };
}

export type CheckoutPageService = ReturnType<typeof createCheckoutPageService>;
