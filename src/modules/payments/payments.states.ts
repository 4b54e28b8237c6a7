import type { StatusResult } from '../../connectors/connector.js';
import type { Queryable } from '../../db/db.js';
import { isUniqueViolation } from '../../db/db.js';
import { KoshError } from '../../domain/errors.js';
import type { EventsService } from '../events/events.service.js';
import type { OrderRow } from '../orders/orders.model.js';
import { toOrder } from '../orders/orders.service.js';
import { type PaymentTrigger, paymentTransition } from './payment.transitions.js';
import {
  factsOf,
  matches,
  ORDER_PAID_BEFORE_AUTHORISING,
  ORDER_PAID_ELSEWHERE,
  triggerFor,
} from './payment-answers.js';
import { toPayment } from './payments.model.js';
import type { MoveOptions, PaymentRow, ProviderFacts, StatusChange } from './payments.row.js';
import { createSettleChoice, type PaymentStatesDeps, payOrderBy } from './payments.settle-choice.js';
import { nextSyncAt } from './sync-schedule.js';

export type { MoveOptions } from './payments.row.js';

export interface ApplyOptions {
  /** The answer came from asking the provider (`status`), which counts towards the backoff. */
  asked: boolean;
  /** The payment as the caller last read it: lets a capture lock its order in the same round trip. */
  seen?: PaymentRow;
  /**
   * The payment and its order as this transaction already holds them under their row locks
   * (`recordChoice`): nothing is read again.
   */
  locked?: { payment: PaymentRow; order: OrderRow | undefined };
}

/**
 * Every payment state change goes through `move`: the transition table decides the target, one
 * compare-and-set UPDATE applies it, the order follows, and the events are recorded — all in the
 * caller's transaction. Undefined means the payment was no longer in the expected state.
 *
 * `apply` turns what a provider said (a status answer, a verified return or webhook, the sandbox's
 * recorded choice) into the move it implies, records the provider's facts and when to ask next.
 */
export function createPaymentStates(deps: PaymentStatesDeps) {
  const { db, repo, orders, events, clock, deadlines } = deps;

  /** The events of a capture, then its checkout session's completion (and that event). */
  async function recordCapture(
    tx: Queryable,
    payment: PaymentRow,
    event: Parameters<typeof recordEvents>[2][number],
    order: OrderRow,
  ) {
    await recordEvents(tx, payment, [event, 'order.paid'], order);
    if (payment.checkout_session_id && deps.checkoutPaid)
      await deps.checkoutPaid(tx, payment.checkout_session_id, payment.id);
  }

  async function recordEvents(
    tx: Queryable,
    payment: PaymentRow,
    types: Parameters<EventsService['record']>[1]['type'][],
    order?: OrderRow,
  ) {
    const current =
      order ?? (await orders.findForPayment(tx, payment.account_id, payment.mode, payment.order_id, false));
    const data = { payment: toPayment(payment), order: current ? toOrder(current) : null };
    await events.recordAll(
      tx,
      types.map((type) => ({ accountId: payment.account_id, mode: payment.mode, type, data })),
    );
  }

  /**
   * The bank took money that Kosh cannot capture: another payment paid the order first. The payment
   * fails (or stays failed) with `order_already_paid`, the authorisation, the money owed back and
   * the provider's facts (bank reference, fee…) are recorded on it, then its late event. Authorised
   * at the same time as the payment that paid the order, it fails first (with its own event).
   */
  async function refuseAuthorisation(tx: Queryable, payment: PaymentRow, facts?: ProviderFacts) {
    const failed =
      payment.status === 'failed' ? payment : await move(tx, payment, 'declined', ORDER_PAID_ELSEWHERE);
    const at = clock.now();
    let noted = failed && (await repo.recordRefusedAuthorisation(tx, failed.id, ORDER_PAID_ELSEWHERE, at));
    // Nothing is left to ask of a payment whose money is owed back.
    const schedule = { nextSyncAt: null, asked: false };
    if (noted && facts)
      noted = (await repo.recordProviderFacts(tx, noted.id, noted.status, facts, schedule, at)) ?? noted;
    if (noted) await recordEvents(tx, noted, ['payment.late_authorisation']);
    return noted;
  }

  async function move(
    tx: Queryable,
    payment: PaymentRow,
    trigger: PaymentTrigger,
    options: MoveOptions = {},
  ): Promise<PaymentRow | undefined> {
    return (await moveRecording(tx, payment, trigger, options)).row;
  }

  /** The order paid by `payment` (a failure rolls the capture back). */
  async function markPaid(tx: Queryable, order: OrderRow, payment: PaymentRow): Promise<OrderRow> {
    const paid = await payOrderBy(orders, tx, order, payment, Number(order.amount));
    if (!paid) throw new KoshError('state_conflict', `Order ${order.id} could not be marked paid.`);
    return paid;
  }

  /**
   * `move`, saying whether its update also recorded `options.facts`, and (for a move that does not
   * pay the order) the order it read for the event, under its row lock with `options.lockOrder`.
   * `lockedOrder`: the payment's order, already read under its row lock in this transaction
   * (`applyIn` takes both locks in one round trip when the answer captures).
   */
  async function moveRecording(
    tx: Queryable,
    payment: PaymentRow,
    trigger: PaymentTrigger,
    options: MoveOptions,
    lockedOrder?: OrderRow,
  ): Promise<{ row: PaymentRow | undefined; factsRecorded: boolean; order?: OrderRow }> {
    const transition = paymentTransition(payment.status, trigger);
    if (!transition) {
      throw new KoshError('state_conflict', `A ${payment.status} payment cannot move on '${trigger}'.`);
    }
    let order: OrderRow | undefined;
    if (transition.capturesOrder) {
      // The order's row lock makes captures on one order take turns; the unique index is the backstop.
      order =
        lockedOrder ??
        (await orders.findForPayment(tx, payment.account_id, payment.mode, payment.order_id, true));
      if (!order) throw new KoshError('state_conflict', 'The payment has no order.');
      if (order.status === 'paid')
        return { row: await refuseAuthorisation(tx, payment, options.facts?.facts), factsRecorded: false };
    }
    const failed = transition.to === 'failed';
    const at = clock.now();
    const errorCode = failed ? (options.errorCode ?? 'payment_failed') : null;
    const change: StatusChange = {
      id: payment.id,
      from: transition.from,
      to: transition.to,
      errorCode,
      errorReason: failed ? (options.errorReason ?? 'The payment failed.') : null,
      at,
      tokenHash: options.tokenHash,
      providerData: options.providerData,
      nextSyncAt: options.nextSyncAt,
    };
    if (options.facts) {
      // The schedule of the payment as this update leaves it (what recordProviderFacts would see).
      const moved = {
        ...payment,
        status: transition.to,
        error_code: errorCode,
        pending_at: transition.to === 'pending' ? at : payment.pending_at,
      };
      change.facts = options.facts;
      change.nextSyncAt = nextSyncAt(moved, options.facts.attempts, at, deadlines);
    }
    if (order && lockedOrder) {
      // This transaction holds both rows' locks (`applyIn`), so the payment's compare-and-set cannot
      // miss: the order is marked paid in the same round trip, from payment fields the update keeps.
      const paying = order;
      const [updated, paid] = await tx.together(() =>
        Promise.all([repo.changeStatus(tx, change), markPaid(tx, paying, payment)]),
      );
      if (!updated) throw new KoshError('state_conflict', `Payment ${payment.id} moved while locked.`);
      await recordCapture(tx, updated, transition.event, paid);
      return { row: updated, factsRecorded: options.facts !== undefined };
    }
    // A move that does not pay the order reads it for its event in the same round trip as the update.
    const [updated, current] = await tx.together(() =>
      Promise.all([
        repo.changeStatus(tx, change),
        order ??
          orders.findForPayment(
            tx,
            payment.account_id,
            payment.mode,
            payment.order_id,
            options.lockOrder === true,
          ),
      ]),
    );
    if (!updated) return { row: undefined, factsRecorded: false };
    if (order) {
      order = await markPaid(tx, order, updated);
      await recordCapture(tx, updated, transition.event, order);
    } else await recordEvents(tx, updated, [transition.event], current);
    return { row: updated, factsRecorded: options.facts !== undefined, order: order ?? current };
  }

  /**
   * The payment under its row lock; with `seen` (the payment as the caller last read it) and an
   * answer that captures, its order under its lock too, in the same round trip and the same order
   * of locks (payment, then order) as a capture that reads them one by one.
   */
  async function lockForAnswer(
    tx: Queryable,
    paymentId: string,
    answer: StatusResult,
    seen: PaymentRow | undefined,
  ): Promise<[PaymentRow | undefined, OrderRow | undefined]> {
    if (!seen || answer.outcome !== 'captured') return [await repo.findById(tx, paymentId, true), undefined];
    return tx.together(() =>
      Promise.all([
        repo.findById(tx, paymentId, true),
        orders.findForPayment(tx, seen.account_id, seen.mode, seen.order_id, true),
      ]),
    );
  }

  /**
   * Money taken for something other than this payment (an offer or a surcharge set up at the
   * provider, another currency, another provider payment): Kosh does not capture it, and nothing
   * the customer or the merchant sees would tell anyone. The operator must: an error each time a
   * provider answer says so (a status answer, a return, a webhook).
   */
  function reportForeignCapture(payment: PaymentRow, answer: StatusResult): void {
    deps.log?.error(
      {
        payment_id: payment.id,
        connector: payment.connector,
        amount: Number(payment.amount),
        currency: payment.currency,
        provider_amount: answer.amount,
        provider_currency: answer.currency,
        provider_reference: answer.reference,
      },
      'the provider says money was taken for this payment, but not for its amount, currency or provider payment: Kosh leaves it uncaptured; settle it with the provider',
    );
  }

  async function applyIn(
    tx: Queryable,
    paymentId: string,
    answer: StatusResult,
    options: ApplyOptions,
  ): Promise<PaymentRow | undefined> {
    const [payment, lockedOrder] = options.locked
      ? [options.locked.payment, options.locked.order]
      : await lockForAnswer(tx, paymentId, answer, options.seen);
    if (!payment) return undefined;
    const now = clock.now();
    // An answer about another amount, currency or provider payment is not trusted: ask again later.
    const trusted = matches(payment, answer);
    const result: StatusResult = trusted ? answer : { outcome: 'unknown', reason: 'mismatch' };
    if (!trusted && answer.outcome === 'captured') reportForeignCapture(payment, answer);
    const decided = triggerFor(payment, result, now, deadlines);
    const attempts = payment.sync_attempts + (options.asked ? 1 : 0);
    const facts = factsOf(result);
    let current = payment;
    if (decided) {
      const moved = await moveRecording(
        tx,
        payment,
        decided.trigger,
        { ...decided.options, facts: { facts, asked: options.asked, attempts } },
        lockedOrder?.id === payment.order_id ? lockedOrder : undefined,
      );
      // The move's own update recorded the facts, unless the order was paid by another payment
      // (refused: moved without them) or the payment had moved on.
      if (moved.factsRecorded) return moved.row;
      current = moved.row ?? payment;
    }
    const noted = await repo.recordProviderFacts(
      tx,
      current.id,
      current.status,
      facts,
      { nextSyncAt: nextSyncAt(current, attempts, now, deadlines), asked: options.asked },
      now,
    );
    return noted ?? current;
  }

  const settleChoice = createSettleChoice(deps);

  /** Runs `work` in a transaction, once more if a concurrent capture of the order refused it. */
  async function capturing<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    try {
      return await db.transaction(work);
    } catch (error) {
      // Two payments of one order authorised at once: the unique index refused the second capture.
      if (!isUniqueViolation(error, 'payments_one_captured_per_order')) throw error;
      return db.transaction(work);
    }
  }

  return {
    move,
    settleChoice,

    /**
     * Applies a provider's answer about a payment in its own transaction, under the payment's row
     * lock, so answers arriving at once (a webhook, the browser's return, the reconciler) take turns
     * and a repeated one changes nothing. `asked`: the answer came from asking (`status`), which
     * counts towards the backoff. Returns the payment as it is afterwards.
     */
    async apply(
      paymentId: string,
      result: StatusResult,
      options: ApplyOptions,
    ): Promise<PaymentRow | undefined> {
      return capturing((tx) => applyIn(tx, paymentId, result, options));
    },

    /**
     * A payment still waiting for its customer whose order another payment has paid: it fails
     * before the customer reaches the bank, so no second debit is made (and none is to be refunded).
     * Undefined when the order is not paid or the payment is no longer `created`.
     */
    async stopIfOrderPaid(payment: PaymentRow): Promise<PaymentRow | undefined> {
      if (payment.status !== 'created') return undefined;
      const order = await orders.findForPayment(
        db,
        payment.account_id,
        payment.mode,
        payment.order_id,
        false,
      );
      if (order?.status !== 'paid') return undefined;
      return db.transaction((tx) => move(tx, payment, 'declined', ORDER_PAID_BEFORE_AUTHORISING));
    },

    /**
     * The customer's choice at a connector that never leaves the process (the sandbox), and that
     * connector's answer to it, in one transaction: created → pending with the choice (using the
     * page's token up), then the answer applied as `apply` would. `answer` was asked for the
     * payment as the choice leaves it; a local connector's answer is a function of that row, so
     * nothing is called here and there is no moment at which the choice is recorded without its
     * outcome. When the answer captures, the move to pending reads the order under its row lock
     * (payment, then order: the order of locks of every capture). Undefined: the payment was no
     * longer `created` or the token did not match; nothing changed. An answer that settles the
     * payment is first tried as one update (`settleChoice`).
     */
    async recordChoice(
      payment: PaymentRow,
      choice: MoveOptions,
      answer: StatusResult,
    ): Promise<PaymentRow | undefined> {
      const settled = await settleChoice(payment, choice, answer);
      if (settled) return settled;
      return capturing(async (tx) => {
        const acted = await moveRecording(tx, payment, 'customer_acted', {
          ...choice,
          lockOrder: answer.outcome === 'captured',
        });
        if (!acted.row) return undefined;
        const locked = { payment: acted.row, order: answer.outcome === 'captured' ? acted.order : undefined };
        return (await applyIn(tx, payment.id, answer, { asked: false, locked })) ?? acted.row;
      });
    },
  };
}

export type PaymentStates = ReturnType<typeof createPaymentStates>;
