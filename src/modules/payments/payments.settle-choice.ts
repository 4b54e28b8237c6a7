import type { Logger } from 'pino';
import type { StatusResult } from '../../connectors/connector.js';
import type { Db, Queryable } from '../../db/db.js';
import { isUniqueViolation } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import type { EventsService } from '../events/events.service.js';
import { orderTransition } from '../orders/order.transitions.js';
import type { OrderRow } from '../orders/orders.model.js';
import type { OrdersService } from '../orders/orders.service.js';
import { toOrder } from '../orders/orders.service.js';
import { paymentTransition } from './payment.transitions.js';
import { factsOf, matches, triggerFor } from './payment-answers.js';
import { bankDetailsOf, toPayment } from './payments.model.js';
import type { PaymentsRepo } from './payments.repo.js';
import type { MoveOptions, PaymentRow, StatusChange } from './payments.row.js';
import { nextSyncAt, type PaymentDeadlines } from './sync-schedule.js';

/** The order moved to paid by `payment` (compare-and-set on `order.status`); undefined if it did not move. */
export async function payOrderBy(
  orders: OrdersService,
  tx: Queryable,
  order: Pick<OrderRow, 'id' | 'account_id' | 'mode' | 'status'>,
  payment: PaymentRow,
  amountPaid: number,
): Promise<OrderRow | undefined> {
  const to = orderTransition(order.status, 'paid');
  if (!to) return undefined;
  return orders.changeStatus(tx, order, {
    to,
    amountPaid,
    returnUrl: payment.return_url,
    bankDetails: bankDetailsOf(payment),
  });
}

/** `settleChoice` found something not as expected: its transaction rolls back. */
class NotSettledHere extends Error {}

/** What the payment state machine (./payments.states.ts) and its sandbox fast path work with. */
export interface PaymentStatesDeps {
  db: Db;
  repo: PaymentsRepo;
  orders: OrdersService;
  events: EventsService;
  clock: Clock;
  deadlines: PaymentDeadlines;
  /** A payment started from a checkout session captured: its session completes, in `tx`. */
  checkoutPaid?: (tx: Queryable, sessionId: string, paymentId: string) => Promise<void>;
  /** Where an answer that money was taken for something else is reported to the operator. */
  log?: Pick<Logger, 'error'>;
}

/** The sandbox's fast path of `PaymentStates` (./payments.states.ts): a choice settled in one update. */
export function createSettleChoice(deps: PaymentStatesDeps) {
  const { db, repo, orders, events, clock, deadlines } = deps;
  /**
   * A sandbox choice whose answer settles the payment (captured or failed) when nothing stands in
   * the way, in one transaction of two round trips. Its two moves (created → pending with the
   * choice, pending → final with the answer) are written as one compare-and-set UPDATE from
   * `created`: inside one transaction the `pending` version would be seen by nobody. In the same
   * round trip the order is read (under its row lock for a capture, after the payment's, as in
   * every capture) and, for a capture, moved attempted → paid by its own compare-and-set; the events
   * of both moves (`payment.pending` with the payment as the choice left it) go with the COMMIT.
   * Undefined, with nothing changed, when anything is not as expected (a used or replaced token,
   * a payment or order that moved, an order paid by another payment, an answer that does not
   * settle): the caller then takes the general path, which decides each of those cases.
   * `unchangedSince`: `payment` is a copy read earlier (the authentication page's), good only if
   * the payment was not written since its `updated_at`; the update checks that too.
   */
  async function settleChoice(
    payment: PaymentRow,
    choice: MoveOptions,
    answer: StatusResult,
    unchangedSince?: Date,
  ): Promise<PaymentRow | undefined> {
    const at = clock.now();
    const acting = paymentTransition(payment.status, 'customer_acted');
    if (!acting) return undefined;
    // The payment as the move to pending would leave it (what that move's own update would return).
    const pending: PaymentRow = {
      ...payment,
      status: acting.to,
      updated_at: at,
      pending_at: at,
      provider_data: { ...payment.provider_data, ...choice.providerData },
      next_sync_at: choice.nextSyncAt === undefined ? payment.next_sync_at : choice.nextSyncAt,
    };
    const decided = matches(pending, answer) ? triggerFor(pending, answer, at, deadlines) : undefined;
    const settling = decided && paymentTransition(pending.status, decided.trigger);
    if (!decided || !settling || (settling.to !== 'captured' && settling.to !== 'failed')) return undefined;
    const failed = settling.to === 'failed';
    const errorCode = failed ? (decided.options.errorCode ?? 'payment_failed') : null;
    const moved = { ...pending, status: settling.to, error_code: errorCode };
    const change: StatusChange = {
      id: payment.id,
      from: payment.status,
      to: settling.to,
      errorCode,
      errorReason: failed ? (decided.options.errorReason ?? 'The payment failed.') : null,
      at,
      tokenHash: choice.tokenHash,
      providerData: choice.providerData,
      nextSyncAt: nextSyncAt(moved, payment.sync_attempts, at, deadlines),
      facts: { facts: factsOf(answer), asked: false },
      acted: true,
      unchangedSince,
    };
    const { account_id: accountId, mode, order_id: orderId } = payment;
    try {
      return await db.transaction(async (tx) => {
        const [updated, order, paid] = await tx.together(() =>
          Promise.all([
            repo.changeStatus(tx, change),
            orders.findForPayment(tx, accountId, mode, orderId, settling.capturesOrder),
            settling.capturesOrder
              ? payOrderBy(
                  orders,
                  tx,
                  { id: orderId, account_id: accountId, mode, status: 'attempted' },
                  payment,
                  Number(payment.amount),
                )
              : undefined,
          ]),
        );
        if (!updated || !order || (settling.capturesOrder && !paid)) throw new NotSettledHere();
        const after = { payment: toPayment(updated), order: toOrder(paid ?? order) };
        await events.recordAll(tx, [
          {
            accountId,
            mode,
            type: acting.event,
            data: { payment: toPayment(pending), order: toOrder(order) },
          },
          { accountId, mode, type: settling.event, data: after },
          ...(paid ? [{ accountId, mode, type: 'order.paid' as const, data: after }] : []),
        ]);
        if (paid && updated.checkout_session_id && deps.checkoutPaid)
          await deps.checkoutPaid(tx, updated.checkout_session_id, updated.id);
        return updated;
      });
    } catch (error) {
      // Rolled back: the general path decides (another payment's capture of the order included).
      if (error instanceof NotSettledHere || isUniqueViolation(error, 'payments_one_captured_per_order'))
        return undefined;
      throw error;
    }
  }

  return settleChoice;
}
