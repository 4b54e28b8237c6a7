import { unixSeconds } from '../../domain/clock.js';
import type { PaymentRow } from './payments.repo.js';
import type { Payment } from './payments.schemas.js';

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
  };
}

/** The order's `bank_details` for a payment: what was chosen and its customer label. */
export function bankDetailsOf(row: Pick<PaymentRow, 'method' | 'bank' | 'wallet' | 'instrument_name'>) {
  return row.method === 'netbanking'
    ? { method: 'netbanking', bank: row.bank, bank_name: row.instrument_name }
    : { method: 'wallet', wallet: row.wallet, wallet_name: row.instrument_name };
}
