import type { CashfreeFakeBook } from './cashfree-fake-api.js';
import type { FakeCashfreeOrder, FakeCashfreePayment } from './cashfree-fake-model.js';
import { CASHFREE_FAKE_PAYER_VPA, fakeRrn, UPI_DECLINE } from './cashfree-fake-upi.js';

/**
 * The Cashfree fake's simulated customer: their choice at the bank's page (net banking, wallets) or
 * in their UPI app, recorded on the attempt as Cashfree would (the webhooks that follow are the server's).
 */

/**
 * The customer's choice at the bank: `success`, `failure` (declined by the bank), `pending` (the
 * bank has not decided) or `drop` (the customer left). False for a choice the page does not offer.
 */
export function decideAtBank(
  book: CashfreeFakeBook,
  order: FakeCashfreeOrder,
  payment: FakeCashfreePayment,
  choice: string,
): boolean {
  if (payment.status === 'NOT_ATTEMPTED' || payment.status === 'PENDING') {
    const at = book.now().toISOString();
    if (choice === 'success') {
      payment.status = 'SUCCESS';
      payment.bankReference = `${Date.now() % 1_000_000_000_000}${book.next()}`;
      payment.completionTime = at;
      order.status = 'PAID';
    } else if (choice === 'failure') {
      payment.status = 'FAILED';
      payment.bankReference = `${Date.now() % 1_000_000_000_000}${book.next()}`;
      payment.error = {
        error_code: 'TRANSACTION_DECLINED',
        error_description: 'transaction is rejected at the remitter bank end',
        error_reason: 'bank_rejected',
        error_source: 'bank',
      };
      payment.completionTime = at;
    } else if (choice === 'drop') {
      payment.status = 'USER_DROPPED';
      payment.completionTime = at;
    } else if (choice === 'pending') {
      payment.status = 'PENDING';
    } else {
      return false;
    }
  }
  return true;
}

/**
 * The customer in a UPI app approves (pays) or declines the order's latest UPI attempt still
 * waiting; returns that order.
 */
export function decideInUpiApp(
  book: CashfreeFakeBook,
  orderId: string,
  action: 'approve' | 'decline',
): FakeCashfreeOrder {
  const order = book.orderFor(orderId);
  const payment = order?.payments
    .filter((attempt) => 'upi' in attempt.method && attempt.status === 'NOT_ATTEMPTED')
    .at(-1);
  if (!order || !payment || !('upi' in payment.method)) throw new Error(`no UPI attempt waits on ${orderId}`);
  const at = book.now().toISOString();
  payment.completionTime = at;
  payment.bankReference = fakeRrn(book.next());
  if (action === 'approve') {
    payment.status = 'SUCCESS';
    // The payer: the collect request's VPA, or the VPA the customer's app paid a link from.
    payment.method.upi.upi_id ??= CASHFREE_FAKE_PAYER_VPA;
    order.status = 'PAID';
  } else {
    payment.status = 'FAILED';
    payment.error = { ...UPI_DECLINE };
  }
  return order;
}
