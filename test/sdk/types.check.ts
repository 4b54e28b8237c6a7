/**
 * Compile-time checks of the SDK's generated types (run by `npm run typecheck`, which .ci/run runs):
 * each `@ts-expect-error` must find an error, so a document that stopped telling the two payment
 * shapes apart would fail the type check.
 */
import type { CreatePaymentRequest, Order, PaymentAction } from '../../sdk/node/src/index.js';

const customer = {
  amount: 5000,
  currency: 'INR',
  order_id: 'order_1',
  name: 'Asha Rao',
  email: 'asha@example.com',
  contact: '+919876543210',
  return_url: 'https://shop.example.com/return',
};

export const netbanking: CreatePaymentRequest = { ...customer, method: 'netbanking', bank: 'ICIC' };
export const wallet: CreatePaymentRequest = { ...customer, method: 'wallet', wallet: 'AIRTELMONEY' };

// @ts-expect-error a net-banking payment needs `bank`
export const netbankingWithoutBank: CreatePaymentRequest = { ...customer, method: 'netbanking' };

export const walletWithBank: CreatePaymentRequest = {
  ...customer,
  method: 'wallet',
  wallet: 'AIRTELMONEY',
  // @ts-expect-error a wallet payment takes no `bank`
  bank: 'ICIC',
};

// @ts-expect-error `card` is not a method Kosh takes
export const card: CreatePaymentRequest = { ...customer, method: 'card', bank: 'ICIC' };

/** An action is told apart by `action`: a form has html_content, a UPI collect only its expiry, the others a url. */
export function render(next: PaymentAction): string {
  if (next.action === 'html_form') return next.html_content;
  if (next.action === 'upi_collect') return `Approve the request in your UPI app by ${next.expires_at}`;
  return next.url;
}

export const paid = (order: Order): boolean => order.status === 'paid';
