import type { ConnectorRefund } from '../../connectors/connector.js';
import { unixSeconds } from '../../domain/clock.js';
import type { Metadata } from '../../domain/metadata.js';
import type { PageQuery } from '../../domain/pagination.js';
import { type PaymentRow, toConnectorPayment } from '../payments/payments.model.js';
import type { RefundStatus } from './refund.transitions.js';
import type { RefundRow } from './refunds.repo.js';

export type RefundSpeed = 'normal' | 'instant';

/** What refunding a payment takes (the API's body; its schema bounds the values). */
export interface CreateRefund {
  /** In the smallest sub-unit; by default all that is still refundable on the payment. */
  amount?: number;
  /** `normal` by default. */
  speed?: RefundSpeed;
  /** The merchant's own reference; unique per account and mode. */
  receipt?: string;
  metadata?: Metadata;
}

/** Which refunds a list shows, newest first. */
export interface RefundListFilter extends PageQuery {
  payment_id?: string;
  status?: RefundStatus;
}

/** The refund as the API, the dashboard and the event payloads show it. */
export interface Refund {
  id: string;
  entity: 'refund';
  payment_id: string;
  order_id: string;
  amount: number;
  currency: string;
  status: RefundStatus;
  speed: RefundSpeed;
  receipt: string | null;
  metadata: Record<string, unknown>;
  error_code: string | null;
  error_reason: string | null;
  /** Unix seconds. */
  created_at: number;
  /** Unix seconds, once processed. */
  processed_at: number | null;
}

/** The refund as the API and the event payloads (`{ refund, payment }`) show it. */
export function toRefund(row: RefundRow): Refund {
  const failed = row.status === 'failed';
  return {
    id: row.id,
    entity: 'refund',
    payment_id: row.payment_id,
    order_id: row.order_id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.status,
    speed: row.speed,
    receipt: row.receipt,
    metadata: row.metadata,
    error_code: failed ? row.error_code : null,
    error_reason: failed ? row.error_reason : null,
    created_at: unixSeconds(row.created_at),
    processed_at: row.processed_at ? unixSeconds(row.processed_at) : null,
  };
}

/** The refund as its connector sees it: the refund id is the provider's idempotency key. */
export function toConnectorRefund(row: RefundRow, payment: PaymentRow, publicUrl: string): ConnectorRefund {
  return {
    id: row.id,
    paymentId: row.payment_id,
    amount: Number(row.amount),
    currency: row.currency,
    speed: row.speed,
    metadata: row.metadata,
    createdAt: row.created_at,
    provider: { reference: row.provider_reference, status: row.provider_status, data: row.provider_data },
    payment: toConnectorPayment(payment, publicUrl),
  };
}
