import type { Db, Queryable } from '../../db/db.js';
import { isUniqueViolation } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { KoshError } from '../../domain/errors.js';
import type { EventsService } from '../events/events.service.js';
import type { OrderRow } from '../orders/orders.repo.js';
import type { OrdersService } from '../orders/orders.service.js';
import { toOrder } from '../orders/orders.service.js';
import { orderTransition, type PaymentTrigger, paymentTransition } from './payment.transitions.js';
import { bankDetailsOf, toPayment } from './payments.model.js';
import type { PaymentRow, PaymentsRepo } from './payments.repo.js';

export interface MoveOptions {
  errorCode?: string;
  errorReason?: string;
  /** The authentication page's single-use token: the move happens only if it matches, and uses it up. */
  tokenHash?: Buffer;
}

const ORDER_PAID_ELSEWHERE = {
  errorCode: 'order_already_paid',
  errorReason: 'The order was paid by another payment; this payment was not captured.',
};

/**
 * Every payment state change goes through `move`: the transition table decides the target, one
 * compare-and-set UPDATE applies it, the order follows, and the events are recorded — all in the
 * caller's transaction. Undefined means the payment was no longer in the expected state.
 */
export function createPaymentStates(deps: {
  db: Db;
  repo: PaymentsRepo;
  orders: OrdersService;
  events: EventsService;
  clock: Clock;
}) {
  const { db, repo, orders, events, clock } = deps;

  async function move(
    tx: Queryable,
    payment: PaymentRow,
    trigger: PaymentTrigger,
    options: MoveOptions = {},
  ): Promise<PaymentRow | undefined> {
    const transition = paymentTransition(payment.status, trigger);
    if (!transition) {
      throw new KoshError('state_conflict', `A ${payment.status} payment cannot move on '${trigger}'.`);
    }
    let order: OrderRow | undefined;
    if (transition.capturesOrder) {
      // The order's row lock makes captures on one order take turns; the unique index is the backstop.
      order = await orders.findForPayment(tx, payment.account_id, payment.mode, payment.order_id, true);
      if (!order) throw new KoshError('state_conflict', 'The payment has no order.');
      if (order.status === 'paid') {
        // Another payment captured the order first: an authorisation here is declined, a late one ignored.
        return trigger === 'authorised' ? move(tx, payment, 'declined', ORDER_PAID_ELSEWHERE) : undefined;
      }
    }
    const failed = transition.to === 'failed';
    const updated = await repo.changeStatus(tx, {
      id: payment.id,
      from: transition.from,
      to: transition.to,
      errorCode: failed ? (options.errorCode ?? 'payment_failed') : null,
      errorReason: failed ? (options.errorReason ?? 'The payment failed.') : null,
      at: clock.now(),
      tokenHash: options.tokenHash,
    });
    if (!updated) return undefined;

    if (order) {
      const to = orderTransition(order.status, 'paid');
      const paid = to
        ? await orders.changeStatus(tx, order, {
            to,
            amountPaid: Number(order.amount),
            returnUrl: updated.return_url,
            bankDetails: bankDetailsOf(updated),
          })
        : undefined;
      if (!paid) throw new KoshError('state_conflict', `Order ${order.id} could not be marked paid.`);
      order = paid;
    } else {
      order = await orders.findForPayment(tx, payment.account_id, payment.mode, payment.order_id, false);
    }
    const data = { payment: toPayment(updated), order: order ? toOrder(order) : null };
    const scope = { accountId: updated.account_id, mode: updated.mode };
    await events.record(tx, { ...scope, type: transition.event, data });
    if (transition.capturesOrder) await events.record(tx, { ...scope, type: 'order.paid', data });
    return updated;
  }

  return {
    move,

    /**
     * Applies a bank's answer to a pending (or, for a late authorisation, failed) payment in its own
     * transaction. Should the unique index refuse a second capture, the payment fails instead.
     */
    async settle(
      payment: PaymentRow,
      outcome: { status: 'captured' } | { status: 'failed'; errorCode: string; errorReason: string },
    ): Promise<PaymentRow | undefined> {
      const trigger: PaymentTrigger =
        outcome.status === 'failed'
          ? 'declined'
          : payment.status === 'failed'
            ? 'late_authorisation'
            : 'authorised';
      const options = outcome.status === 'failed' ? outcome : {};
      try {
        return await db.transaction((tx) => move(tx, payment, trigger, options));
      } catch (error) {
        if (!isUniqueViolation(error, 'payments_one_captured_per_order') || trigger !== 'authorised')
          throw error;
        return db.transaction((tx) => move(tx, payment, 'declined', ORDER_PAID_ELSEWHERE));
      }
    },
  };
}

export type PaymentStates = ReturnType<typeof createPaymentStates>;
