import type { PaymentsRepo } from './payments.repo.js';

/**
 * What another module may do with payments (the refunds module, docs/refunds.md): read a payment,
 * and count a refund's amount on it or stop counting it. The payments table is written only by
 * the payments module; these are its repository's own statements, each taking the handle it runs
 * on, so that a refund's write joins the caller's transaction.
 */
export function createPaymentsLedger(repo: PaymentsRepo) {
  return {
    /** Tenant-scoped: another account's or mode's payment is not found. */
    find: repo.find,
    /** By id alone; `lock` takes the row lock. */
    findById: repo.findById,
    /** Counts a refund's amount on its payment (compare-and-set); undefined when it does not fit. */
    reserveRefund: repo.reserveRefund,
    /** A failed refund's amount stops counting on its payment. */
    releaseRefund: repo.releaseRefund,
    /** Payments whose money is owed back and not yet being refunded (the refund reconciler's). */
    owedBackWithoutRefund: repo.owedBackWithoutRefund,
  };
}

export type PaymentsLedger = ReturnType<typeof createPaymentsLedger>;
