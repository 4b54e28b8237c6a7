import type { ConnectorPayment } from '../../connectors/connector.js';
import { maskVpa } from '../../connectors/upi.js';
import { unixSeconds } from '../../domain/clock.js';
import type { Metadata } from '../../domain/metadata.js';
import type { CreatedRange, PageQuery } from '../../domain/pagination.js';
import type { PaymentMethod, UpiFlow } from '../../domain/payment-methods.js';
import type { PaymentStatus } from './payment.transitions.js';
import type { PaymentRow } from './payments.repo.js';

/** How a UPI payment is taken: its flow, the customer's VPA (collect only) and how long it waits. */
export interface UpiRequest {
  flow: UpiFlow;
  vpa?: string;
  /** 5 to 60; 10 when absent. */
  expiry_minutes?: number;
}

/**
 * What starting a payment takes (seed §4.2 net banking, §4.3 wallet: one body, `bank` with
 * netbanking, `wallet` with wallet; `upi` with upi, where `return_url` is optional). The API's
 * schema checks shapes and lengths; `payments.validation.ts` the formats and which of `bank` /
 * `wallet` / `upi` goes with the method.
 */
export interface CreatePayment {
  amount: number;
  currency: string;
  contact: string;
  name: string;
  email: string;
  order_id: string;
  return_url?: string;
  method: PaymentMethod;
  bank?: string;
  wallet?: string;
  upi?: UpiRequest;
  description?: string;
  metadata?: Metadata;
}

/**
 * What the merchant's page does next to authenticate the customer (`next[0]` of seed §2.2, §4.4;
 * for UPI, docs/payments.md "UPI": `upi_intent`, `upi_qr` or `upi_collect`, then a redirect).
 */
export interface Action {
  action: 'html_form' | 'redirect' | 'upi_intent' | 'upi_qr' | 'upi_collect';
  /** A complete HTML document (html_form). */
  html_content?: string;
  /** Absolute URL to navigate the browser to (redirect), or the upi://pay link (upi_intent, upi_qr). */
  url?: string;
  /** The QR code of `url` as a data: URL (upi_qr). */
  qr_image?: string;
  /** When the UPI payment stops waiting for the customer, in Unix seconds (upi_*). */
  expires_at?: number;
}

/** A started payment: its id and what comes next (the seed fixes this shape: no envelope). */
export interface CreatedPayment {
  payment_id: string;
  next: Action[];
}

/** Which payments a list shows, newest first. */
export interface PaymentListFilter extends PageQuery, CreatedRange {
  status?: PaymentStatus;
  method?: PaymentMethod;
  order_id?: string;
  /** Any case. */
  bank?: string;
  /** Any case. */
  wallet?: string;
  /** Any case. */
  email?: string;
  contact?: string;
}

/** A UPI payment's details (VPAs masked); null on the other methods. */
export interface PaymentUpi {
  flow: UpiFlow;
  /** The VPA a collect request went to, masked; null for intent and QR. */
  vpa: string | null;
  /** The VPA that paid, masked, when the provider tells it. */
  payer_vpa: string | null;
  /** Unix seconds: when the payment stops waiting for the customer (it then fails with upi_expired). */
  expires_at: number;
}

/** null while nothing is refunded; `partial` or `full` as its pending and processed refunds add up. */
export type PaymentRefundStatus = 'partial' | 'full' | null;

/** The payment as the API, the dashboard and the event payloads show it. */
export interface Payment {
  id: string;
  entity: 'payment';
  order_id: string;
  amount: number;
  currency: string;
  status: PaymentStatus;
  method: PaymentMethod;
  bank: string | null;
  wallet: string | null;
  upi: PaymentUpi | null;
  email: string;
  contact: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  error_code: string | null;
  error_reason: string | null;
  /** Unix seconds, as every time below. */
  created_at: number;
  updated_at: number;
  captured_at: number | null;
  authorised_at: number | null;
  bank_reference: string | null;
  fee: number | null;
  tax: number | null;
  amount_refunded: number;
  refund_status: PaymentRefundStatus;
  /** The hosted checkout session that started the payment; null for an S2S payment. */
  checkout_session_id: string | null;
}

/** The payment row, for the modules that read payments through the payments ledger (refunds). */
export type { PaymentRow };

/**
 * The payment as the API and the event payloads (`{ payment, order }`) show it. Failure details are
 * null unless the payment failed.
 */
export function toPayment(row: PaymentRow): Payment {
  const failed = row.status === 'failed';
  return {
    id: row.id,
    entity: 'payment',
    order_id: row.order_id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.status,
    method: row.method,
    bank: row.bank,
    wallet: row.wallet,
    upi: upiOf(row),
    email: row.email,
    contact: row.contact,
    name: row.name,
    description: row.description,
    metadata: row.metadata,
    error_code: failed ? row.error_code : null,
    error_reason: failed ? row.error_reason : null,
    created_at: unixSeconds(row.created_at),
    updated_at: unixSeconds(row.updated_at),
    captured_at: row.captured_at ? unixSeconds(row.captured_at) : null,
    authorised_at: row.authorised_at ? unixSeconds(row.authorised_at) : null,
    bank_reference: row.bank_reference,
    fee: row.fee === null ? null : Number(row.fee),
    tax: row.tax === null ? null : Number(row.tax),
    amount_refunded: Number(row.amount_refunded),
    refund_status: refundStatusOf(Number(row.amount_refunded), Number(row.amount)),
    checkout_session_id: row.checkout_session_id,
  };
}

function upiOf(row: PaymentRow): PaymentUpi | null {
  if (!row.upi_flow || !row.expires_at) return null;
  return {
    flow: row.upi_flow,
    vpa: row.upi_vpa === null ? null : maskVpa(row.upi_vpa),
    payer_vpa: row.upi_payer_vpa === null ? null : maskVpa(row.upi_payer_vpa),
    expires_at: unixSeconds(row.expires_at),
  };
}

/** null while nothing is refunded; `partial` or `full` as the non-failed refunds add up. */
export function refundStatusOf(refunded: number, amount: number): PaymentRefundStatus {
  return refunded === 0 ? null : refunded >= amount ? 'full' : 'partial';
}

/** `{publicUrl}/v1/payments/<id>/callback/`: where a provider sends the customer's browser back. */
export function callbackUrl(publicUrl: string, paymentId: string): string {
  return `${publicUrl}/v1/payments/${encodeURIComponent(paymentId)}/callback/`;
}

export type ConnectorFacts = Pick<
  PaymentRow,
  | 'id'
  | 'mode'
  | 'order_id'
  | 'amount'
  | 'currency'
  | 'method'
  | 'bank'
  | 'wallet'
  | 'name'
  | 'email'
  | 'contact'
  | 'description'
  | 'created_at'
  | 'provider_reference'
  | 'provider_status'
  | 'provider_data'
  | 'pending_at'
  | 'upi_flow'
  | 'upi_vpa'
  | 'expires_at'
>;

/** The payment as a connector sees it: the facts of the row and what the provider said before. */
export function toConnectorPayment(row: ConnectorFacts, publicUrl: string): ConnectorPayment {
  return {
    id: row.id,
    mode: row.mode,
    orderId: row.order_id,
    amount: Number(row.amount),
    currency: row.currency,
    method: row.method,
    code: row.bank ?? row.wallet ?? '',
    upi:
      row.upi_flow && row.expires_at
        ? { flow: row.upi_flow, vpa: row.upi_vpa, expiresAt: row.expires_at }
        : null,
    customer: { name: row.name, email: row.email, contact: row.contact },
    description: row.description,
    createdAt: row.created_at,
    callbackUrl: callbackUrl(publicUrl, row.id),
    provider: {
      reference: row.provider_reference,
      status: row.provider_status,
      data: row.provider_data,
      pendingAt: row.pending_at,
    },
  };
}

/** The order's `bank_details` for a payment: what was chosen and its customer label. */
export function bankDetailsOf(
  row: Pick<PaymentRow, 'method' | 'bank' | 'wallet' | 'instrument_name' | 'upi_flow'>,
) {
  if (row.method === 'upi') return { method: 'upi', flow: row.upi_flow };
  return row.method === 'netbanking'
    ? { method: 'netbanking', bank: row.bank, bank_name: row.instrument_name }
    : { method: 'wallet', wallet: row.wallet, wallet_name: row.instrument_name };
}
