import type { Payment } from '../payments/payments.model.js';

const COLUMNS = [
  'id',
  'order_id',
  'amount',
  'currency',
  'status',
  'method',
  'bank',
  'wallet',
  'email',
  'contact',
  'amount_refunded',
  'refund_status',
  'bank_reference',
  'error_code',
  'created_at',
  'captured_at',
] as const satisfies readonly (keyof Payment)[];

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. A value a
 * spreadsheet would run as a formula (=, +, -, @, tab, carriage return first) is prefixed with a
 * quote, as OWASP advises against CSV injection; amounts and times are numbers, never prefixed.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return String(value);
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The payments as CSV, one row per payment, amounts in the smallest unit and times in Unix seconds. */
export function paymentsCsv(payments: Payment[]): string {
  const lines = [COLUMNS.join(',')];
  for (const payment of payments) lines.push(COLUMNS.map((column) => csvField(payment[column])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
