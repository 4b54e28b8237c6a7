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

export const upiIntent: CreatePaymentRequest = { ...customer, method: 'upi', upi: { flow: 'intent' } };
export const upiQr: CreatePaymentRequest = {
  ...customer,
  method: 'upi',
  upi: { flow: 'qr', expiry_minutes: 15 },
};
export const upiCollect: CreatePaymentRequest = {
  ...customer,
  method: 'upi',
  upi: { flow: 'collect', vpa: 'asha@okaxis' },
};
// A UPI payment needs no return_url: Kosh's UPI page shows the outcome when there is none.
export const upiWithoutReturn: CreatePaymentRequest = {
  amount: 5000,
  currency: 'INR',
  order_id: 'order_1',
  name: 'Asha Rao',
  email: 'asha@example.com',
  contact: '+919876543210',
  method: 'upi',
  upi: { flow: 'intent' },
};

// @ts-expect-error a UPI payment needs `upi`
export const upiWithoutUpi: CreatePaymentRequest = { ...customer, method: 'upi' };

// @ts-expect-error `push` is not a UPI flow
export const upiPush: CreatePaymentRequest = { ...customer, method: 'upi', upi: { flow: 'push' } };

export const upiWithBank: CreatePaymentRequest = {
  ...customer,
  method: 'upi',
  upi: { flow: 'intent' },
  // @ts-expect-error a UPI payment takes no `bank`
  bank: 'ICIC',
};

/**
 * An action is told apart by `action`: a form has html_content, a redirect a url, UPI intent and
 * QR the upi:// link (and QR its image), collect only its expiry.
 */
export function render(next: PaymentAction): string {
  switch (next.action) {
    case 'html_form':
      return next.html_content;
    case 'redirect':
    case 'upi_intent':
      return next.url;
    case 'upi_qr':
      return `${next.qr_image} ${next.url} ${next.expires_at}`;
    case 'upi_collect':
      return String(next.expires_at);
  }
}

// @ts-expect-error a collect step has no link
export const collectUrl = (next: Extract<PaymentAction, { action: 'upi_collect' }>): string => next.url;

export const paid = (order: Order): boolean => order.status === 'paid';
