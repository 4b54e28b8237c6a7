import type { NextStep } from '../../connectors/connector.js';
import type { PaymentMethod, UpiFlow } from '../../domain/payment-methods.js';
import type { Mode } from '../../domain/scope.js';
import type { PaymentStatus } from './payment.transitions.js';

/** A payments row as the repositories read it, and the columns they select. */
export interface PaymentRow {
  id: string;
  account_id: string;
  mode: Mode;
  order_id: string;
  amount: string;
  currency: string;
  status: PaymentStatus;
  method: PaymentMethod;
  bank: string | null;
  wallet: string | null;
  instrument_name: string;
  email: string;
  contact: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  return_url: string | null;
  connector: string;
  connector_account_id: string | null;
  provider_reference: string | null;
  provider_status: string | null;
  provider_next: NextStep | null;
  provider_data: Record<string, unknown>;
  bank_reference: string | null;
  fee: string | null;
  tax: string | null;
  error_code: string | null;
  error_reason: string | null;
  created_at: Date;
  updated_at: Date;
  captured_at: Date | null;
  pending_at: Date | null;
  authorised_at: Date | null;
  refund_due: boolean;
  amount_refunded: string;
  sync_attempts: number;
  next_sync_at: Date | null;
  upi_flow: UpiFlow | null;
  upi_vpa: string | null;
  upi_payer_vpa: string | null;
  /** A UPI payment's own deadline; null for the other methods. */
  expires_at: Date | null;
  /** The hosted checkout session that started the payment; null for an S2S payment. */
  checkout_session_id: string | null;
}

export const PAYMENT_COLUMNS = `id, account_id, mode, order_id, amount, currency, status, method, bank, wallet, instrument_name,
  email, contact, name, description, metadata, return_url, connector, connector_account_id, provider_reference,
  provider_status, provider_next, provider_data, bank_reference, fee, tax, error_code, error_reason, created_at,
  updated_at, captured_at, pending_at, authorised_at, refund_due, amount_refunded, sync_attempts, next_sync_at,
  upi_flow, upi_vpa, upi_payer_vpa, expires_at, checkout_session_id`;

/** The fields a status change may write besides the status itself. */
export interface StatusChange {
  id: string;
  from: PaymentStatus;
  to: PaymentStatus;
  errorCode: string | null;
  errorReason: string | null;
  at: Date;
  /** The authentication page's single-use token: must match, and is used up. */
  tokenHash?: Buffer;
  /** Merged into provider_data (the sandbox's recorded choice). */
  providerData?: Record<string, unknown>;
  /** Sets next_sync_at (null: nothing left to ask); left as it is when undefined. */
  nextSyncAt?: Date | null;
  /**
   * What the provider said, recorded by the same update (as `recordProviderFacts` would);
   * `asked` counts the ask towards the backoff.
   */
  facts?: { facts: ProviderFacts; asked: boolean };
  /**
   * The customer acted in this very move (`pending_at` is set), though it goes past `pending`: a
   * sandbox choice and its answer written as one update (`recordChoice`).
   */
  acted?: boolean;
  /**
   * Applies only to the payment exactly as last written at this time (its `updated_at`): the caller
   * decided from a copy of the row it read earlier (the authentication page's), not in this
   * transaction.
   */
  unchangedSince?: Date;
}

/** What the provider said about a payment, recorded whatever its state (the reconciler's notes). */
export interface ProviderFacts {
  rawStatus?: string | null;
  reference?: string | null;
  bankReference?: string | null;
  fee?: number | null;
  tax?: number | null;
  payerVpa?: string | null;
  data?: Record<string, unknown>;
}

/** How `PaymentStates.move` changes a payment (./payments.states.ts). */
export interface MoveOptions {
  errorCode?: string;
  errorReason?: string;
  /** The authentication page's single-use token: the move happens only if it matches, and uses it up. */
  tokenHash?: Buffer;
  providerData?: Record<string, unknown>;
  nextSyncAt?: Date | null;
  /**
   * A provider's answer recorded by the move itself, with when to ask next computed for the state
   * it moves to (`apply`: one update instead of a move and a note).
   */
  facts?: { facts: ProviderFacts; asked: boolean; attempts: number };
  /** A move that does not pay the order reads the order under its row lock (for a capture to follow). */
  lockOrder?: boolean;
}
