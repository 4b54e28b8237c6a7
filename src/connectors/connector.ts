import type { PaymentMethod, UpiFlow } from '../domain/payment-methods.js';
import type { Mode } from '../domain/scope.js';

/**
 * The boundary between Kosh and a payment provider (a bank, a wallet, a gateway that holds the bank
 * integrations). Kosh owns the payment row and its states; a connector only speaks the provider's
 * API and answers in Kosh's words. Every call may go over the network, so Kosh makes it outside
 * database transactions: it records the intent, commits, calls, and records the result. An answer
 * a connector cannot read (a timeout, a reset connection, a 5xx, an HTML error page, garbage) is
 * `unknown`, never a failure: Kosh asks `status` later (docs/connectors.md).
 */

/** What a connector knows of a Kosh payment: the row's own facts and what the provider said before. */
export interface ConnectorPayment {
  /** Kosh's payment id: the provider's reference for it (its order id, receipt or idempotency key). */
  id: string;
  mode: Mode;
  orderId: string;
  amount: number;
  currency: string;
  method: PaymentMethod;
  /** The canonical bank or wallet key of the account's methods ('' for UPI). */
  code: string;
  /** A UPI payment's flow, the customer's VPA (collect only) and when Kosh stops waiting; else null. */
  upi: { flow: UpiFlow; vpa: string | null; expiresAt: Date } | null;
  customer: { name: string; email: string; contact: string };
  description: string | null;
  createdAt: Date;
  /** `{base_url}/v1/payments/<id>/callback/`: where the provider sends the browser back. */
  callbackUrl: string;
  provider: ProviderState;
}

/** What Kosh stored from earlier answers of the provider (the connector's own notes in `data`). */
export interface ProviderState {
  /** The provider's own id for the payment (or its order), once known. */
  reference: string | null;
  /** The provider's last raw status, as the provider spelt it. */
  status: string | null;
  /** Connector-owned details (the sandbox's choice, a provider's order and payment ids). */
  data: Record<string, unknown>;
  /** When the payment became pending (the customer acted at the bank). */
  pendingAt: Date | null;
}

/**
 * Where the customer's browser goes from Kosh's authentication page:
 * - `sandbox`: Kosh's own simulated bank page (test mode);
 * - `redirect`: a GET to the provider's page;
 * - `form`: a POST of fields to the provider's page, sent by an auto-submitting form;
 * - `browser`: nothing yet: the provider needs the customer's browser (its address, user agent)
 *   before it can start, so Kosh calls `continueInBrowser` when the browser arrives;
 * - `upi`: the customer pays in a UPI app: by the provider's `upi://pay` link (intent and QR; null
 *   for collect, where the request is already on the customer's phone). Kosh's page shows it.
 */
export type NextStep =
  | { kind: 'sandbox' }
  | { kind: 'redirect'; url: string }
  | { kind: 'form'; url: string; fields: Record<string, string> }
  | { kind: 'browser' }
  | { kind: 'upi'; link: string | null };

/** The answer `initiate` (and `continueInBrowser`) give. */
export type InitiateResult =
  | {
      outcome: 'started';
      /**
       * How Kosh's `next[0]` looks to the merchant (the URL is always Kosh's authentication page);
       * `upi` for a UPI payment, whose `next` Kosh builds from its flow and the `upi` step's link.
       */
      action: 'html_form' | 'redirect' | 'upi';
      next: NextStep;
      reference: string | null;
      rawStatus: string | null;
      data?: Record<string, unknown>;
      /** Whether the provider now holds something Kosh must ask about later (`status`). */
      reconcile: boolean;
      /**
       * When asking first makes sense, for a connector that knows (the sandbox's UPI payment: its
       * deadline, or when a collect request settles by itself); the reconciler's schedule otherwise.
       */
      askAt?: Date;
    }
  /** The provider refused to start it (a definite answer: a closed bank, a refused amount). */
  | {
      outcome: 'failed';
      errorCode: string;
      errorReason: string;
      reference: string | null;
      rawStatus: string | null;
    }
  /** Kosh does not know what happened: the payment stays open and is asked about later. */
  | { outcome: 'unknown'; reason: string };

/**
 * The outcome of a payment at the provider, in Kosh's words:
 * - `captured`: the money is taken (authorised and captured);
 * - `failed`: declined, cancelled or expired at the provider — final;
 * - `pending`: the customer acted and the bank has not decided;
 * - `not_started`: the provider holds nothing the customer did (still at Kosh, or never arrived);
 * - `unknown`: no answer Kosh can trust (timeout, 5xx, garbage, or a status the table does not know).
 */
export type PaymentOutcome = 'captured' | 'failed' | 'pending' | 'not_started' | 'unknown';

export interface StatusResult {
  outcome: PaymentOutcome;
  /** The provider's own word for it, stored as `provider_status`. */
  rawStatus?: string | null;
  errorCode?: string;
  errorReason?: string;
  /** What the provider says the payment is: cross-checked against Kosh's own row before it counts. */
  amount?: number;
  currency?: string;
  reference?: string | null;
  /** The bank's reference for the transfer (for UPI its RRN), and the provider's fee and tax in sub-units, when given. */
  bankReference?: string | null;
  /** The VPA that paid a UPI payment, when the provider tells it. */
  payerVpa?: string | null;
  fee?: number | null;
  tax?: number | null;
  data?: Record<string, unknown>;
  /** Why the answer is unknown (logged; never shown to a customer). */
  reason?: string;
}

/** What the browser brought back from the provider to Kosh's callback. */
export interface BrowserReturn {
  method: 'GET' | 'POST';
  query: Record<string, unknown>;
  body: Record<string, unknown>;
}

/** A provider's return, after the connector checked it. */
export interface ReturnResult {
  /**
   * True when the return carries a signature the connector verified: the customer acted at the
   * provider. An unverified return counts only through `status`'s answer (none: nothing changes).
   */
  verified: boolean;
  /** What the return says, when it says anything; Kosh asks `status` unless it is verified and final. */
  status?: StatusResult;
}

/** A provider's own webhook (the raw body is what it signed). */
export interface ProviderWebhook {
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
}

export type WebhookResult =
  /**
   * Signed by the provider: its statement about one payment, or (`refundId`, Kosh's id of the
   * refund) about one of its refunds, which Kosh then asks the provider about at once.
   */
  | {
      verified: true;
      eventId: string | null;
      paymentId: string | null;
      status: StatusResult | null;
      refundId?: string;
    }
  /** Not verified (or not understood): at most a hint of which payment to ask about. */
  | { verified: false; paymentId: string | null; reason: string };

/** The customer's browser as Kosh saw it on the authentication page (some providers need it). */
export interface BrowserDetails {
  ip: string;
  userAgent: string | null;
  referer: string | null;
}

/** A refund as a connector sees it; its id is the provider's idempotency key for it. */
export interface ConnectorRefund {
  id: string;
  paymentId: string;
  amount: number;
  currency: string;
  speed: 'normal' | 'instant';
  metadata: Record<string, unknown>;
  createdAt: Date;
  provider: { reference: string | null; status: string | null; data: Record<string, unknown> };
  payment: ConnectorPayment;
}

export interface RefundResult {
  outcome: 'processed' | 'failed' | 'pending' | 'unknown';
  reference?: string | null;
  rawStatus?: string | null;
  errorCode?: string;
  errorReason?: string;
  data?: Record<string, unknown>;
  reason?: string;
}

export interface Connector {
  /** The connector's name, stored on every payment it carries (`cashfree`, `sandbox`, …). */
  readonly name: string;
  /**
   * The Kosh bank and wallet codes (the keys of the methods object) this connector can take. A live
   * merchant is offered only what is both enabled for it and here. Absent: whatever is enabled.
   */
  readonly methods?: {
    netbanking: readonly string[];
    wallet: readonly string[];
    /** The UPI flows it takes: `intent` covers intent and QR. */
    upi: { intent: boolean; collect: boolean };
  };
  /**
   * True for a connector that never leaves the process (the sandbox): its answers are pure
   * functions of the payment, so they cannot be lost halfway and need no recovery point.
   */
  readonly local?: boolean;
  /**
   * Starts the payment at the provider; Kosh's payment row is already committed. Safe to call
   * again: Kosh calls it once more (the customer reopening Kosh's page) whenever the last answer
   * was not one it could read, and the provider may have done the work. It finds what earlier
   * calls made under Kosh's payment id and never makes a second provider order; it continues an
   * attempt whose browser step it can still give, or starts a fresh attempt on the same order.
   */
  initiate(payment: ConnectorPayment): Promise<InitiateResult>;
  /**
   * For a `browser` next step: starts the payment now that the browser is here. Safe to call
   * again, as `initiate`: a fresh attempt goes on the same provider order.
   */
  continueInBrowser?(payment: ConnectorPayment, browser: BrowserDetails): Promise<InitiateResult>;
  /** Reads and verifies what the provider sent back with the browser. */
  handleReturn?(payment: ConnectorPayment, browserReturn: BrowserReturn): Promise<ReturnResult>;
  /** Verifies and reads a provider's own webhook. */
  parseWebhook?(webhook: ProviderWebhook): Promise<WebhookResult>;
  /**
   * Asks the provider for the payment's current outcome (mapped through the connector's table). An
   * attempt whose start answer Kosh never recorded was never shown to the customer (Kosh records
   * the answer before it sends the browser on): unless it took the money, it is `not_started`,
   * never `pending` or `failed`, so that the customer can still finish the payment.
   */
  status(payment: ConnectorPayment): Promise<StatusResult>;
  /**
   * Asks the provider to refund (part of) a payment; the refund id is the provider's idempotency
   * key, so sending it again (after a crash, an unknown answer) never refunds twice.
   */
  refund(refund: ConnectorRefund): Promise<RefundResult>;
  /** The refund's current outcome, mapped through the connector's table. */
  refundStatus(refund: ConnectorRefund): Promise<RefundResult>;
}
