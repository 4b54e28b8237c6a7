import { type Db, isUniqueViolation } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { KoshError, notFound } from '../../domain/errors.js';
import type { IdGenerator } from '../../domain/ids.js';
import { type Page, pageRequest, toPage } from '../../domain/pagination.js';
import type { Scope } from '../../domain/scope.js';
import type { EventsService } from '../events/events.service.js';
import type { PaymentsLedger } from '../payments/payments.ledger.js';
import { type PaymentRow, toPayment } from '../payments/payments.model.js';
import type { RefundExecution } from './refund-execution.js';
import { type CreateRefund, type Refund, type RefundListFilter, toRefund } from './refunds.model.js';
import type { NewRefund, RefundRow, RefundsRepo } from './refunds.repo.js';

export interface CreateRefundOptions {
  /** A keyed request's seeded ids: a retry after a crash finds the refund the dead attempt recorded. */
  ids?: IdGenerator;
}

/** What a refund is asked to be; the rest (account, order, currency, connector) comes from its payment. */
type RefundRequest = Pick<NewRefund, 'id' | 'amount' | 'speed' | 'receipt' | 'metadata' | 'automatic'>;

function paymentNotCaptured(payment: PaymentRow): KoshError {
  return new KoshError(
    'payment_not_captured',
    `Payment ${payment.id} is ${payment.status}; only a captured payment (or one whose money is owed back) can be refunded.`,
  );
}

/** `amountGiven`: false for a refund of what was left, which another refund made meanwhile took. */
function exceedsCaptured(payment: PaymentRow, amount: number, amountGiven: boolean): KoshError {
  const refundable = Number(payment.amount) - Number(payment.amount_refunded);
  const message =
    refundable === 0
      ? `Payment ${payment.id} is refunded in full; nothing is left to refund.`
      : amountGiven
        ? `amount ${amount} is more than the ${refundable} still refundable on payment ${payment.id} (captured ${payment.amount}, refunded or being refunded ${payment.amount_refunded}).`
        : `Another refund of payment ${payment.id} was made meanwhile; ${refundable} is still refundable: send it as amount.`;
  return new KoshError('refund_exceeds_captured', message, amountGiven ? 'amount' : undefined);
}

/**
 * Refunds (docs/refunds.md): recorded `pending` with their amount counted on the payment in one
 * transaction (a compare-and-set on the payment's refunded sum, so no mix of concurrent refunds can
 * pass the captured amount), then sent to the provider once that is committed.
 */
export function createRefundsService(deps: {
  db: Db;
  repo: RefundsRepo;
  payments: PaymentsLedger;
  events: EventsService;
  execution: RefundExecution;
  ids: IdGenerator;
  clock: Clock;
  /** How long a refund is left to the request that made it before the reconciler sends it (KOSH_SYNC_LEASE_MS). */
  leaseMs: number;
}) {
  const { db, repo, payments, events, execution, ids, clock } = deps;

  /** Records a refund and counts its amount on the payment, with its refund.created event; undefined if it does not fit. */
  async function record(
    payment: PaymentRow,
    refund: RefundRequest,
    owedBack: boolean,
  ): Promise<RefundRow | undefined> {
    const at = clock.now();
    try {
      return await db.transaction(async (tx) => {
        const reserved = await payments.reserveRefund(tx, {
          id: payment.id,
          accountId: payment.account_id,
          mode: payment.mode,
          amount: refund.amount,
          owedBack,
          at,
        });
        if (!reserved) return undefined;
        const row = await repo.insert(tx, {
          ...refund,
          accountId: payment.account_id,
          mode: payment.mode,
          paymentId: payment.id,
          orderId: payment.order_id,
          currency: payment.currency,
          connector: payment.connector,
          connectorAccountId: payment.connector_account_id,
          // The request that made it sends it; the reconciler takes over if that request dies.
          nextSyncAt: new Date(at.getTime() + deps.leaseMs),
          at,
        });
        await events.record(tx, {
          accountId: row.account_id,
          mode: row.mode,
          type: 'refund.created',
          data: { refund: toRefund(row), payment: toPayment(reserved) },
        });
        return row;
      });
    } catch (error) {
      if (isUniqueViolation(error, 'refunds_receipt_key')) {
        throw new KoshError(
          'refund_receipt_in_use',
          `Another refund of this account already has receipt '${refund.receipt}'.`,
          'receipt',
        );
      }
      throw error;
    }
  }

  return {
    /**
     * Refunds (part of) a captured payment: checks it, records the refund, then sends it to the
     * provider. A keyed request resumed after a crash carries on with the refund it recorded.
     */
    async create(
      scope: Scope,
      paymentId: string,
      input: CreateRefund,
      options: CreateRefundOptions = {},
    ): Promise<Refund> {
      const id = (options.ids ?? ids).next('rfnd');
      const resumed = options.ids ? await repo.find(db, scope.accountId, scope.mode, id) : undefined;
      if (resumed) {
        const sent = resumed.submitted_at || resumed.status !== 'pending';
        return toRefund(sent ? resumed : await execution.submit(resumed, false));
      }
      const payment = await payments.find(db, scope.accountId, scope.mode, paymentId);
      if (!payment) throw notFound('payment', paymentId);
      // Money the bank took for a payment that could not pay its order (owed back) is refunded like
      // a captured payment's: the automatic refunds the provider refused leave it to the merchant.
      const owedBack = payment.status !== 'captured' && payment.refund_due;
      if (payment.status !== 'captured' && !owedBack) throw paymentNotCaptured(payment);
      const amount = input.amount ?? Number(payment.amount) - Number(payment.amount_refunded);
      if (amount < 1) throw exceedsCaptured(payment, amount, input.amount !== undefined);
      const refund = await record(
        payment,
        {
          id,
          amount,
          speed: input.speed ?? 'normal',
          receipt: input.receipt ?? null,
          metadata: input.metadata ?? {},
          automatic: false,
        },
        owedBack,
      );
      if (!refund) {
        // The compare-and-set did not hold: say why, from the payment as it is now.
        const now = await payments.find(db, scope.accountId, scope.mode, paymentId);
        if (!now) throw notFound('payment', paymentId);
        if (now.status !== 'captured' && !now.refund_due) throw paymentNotCaptured(now);
        throw exceedsCaptured(now, amount, input.amount !== undefined);
      }
      return toRefund(await execution.submit(refund, false));
    },

    /**
     * The whole amount of a payment the bank authorised after another payment paid its order goes
     * back, without anyone acting (docs/refunds.md). Undefined when it is already being refunded.
     */
    async refundOwedBack(payment: PaymentRow): Promise<RefundRow | undefined> {
      const amount = Number(payment.amount) - Number(payment.amount_refunded);
      if (amount < 1) return undefined;
      const refund = await record(
        payment,
        { id: ids.next('rfnd'), amount, speed: 'normal', receipt: null, metadata: {}, automatic: true },
        true,
      );
      return refund && execution.submit(refund, false);
    },

    /** A provider's webhook about this refund: the reconciler asks the provider about it at once. */
    async askSoon(connectorAccountId: string, refundId: string): Promise<boolean> {
      return repo.askSoon(db, connectorAccountId, refundId, clock.now());
    },

    async get(scope: Scope, id: string): Promise<Refund> {
      const row = await repo.find(db, scope.accountId, scope.mode, id);
      if (!row) throw notFound('refund', id);
      return toRefund(row);
    },

    /** Newest first; `forPayment` (the payment's own list) answers 404 for a payment not found. */
    async list(scope: Scope, query: RefundListFilter, forPayment?: string): Promise<Page<Refund>> {
      if (forPayment !== undefined) {
        const payment = await payments.find(db, scope.accountId, scope.mode, forPayment);
        if (!payment) throw notFound('payment', forPayment);
      }
      const page = pageRequest('rfnd', query);
      const rows = await repo.list(db, scope.accountId, scope.mode, page, {
        paymentId: forPayment ?? query.payment_id,
        status: query.status,
      });
      return toPage(rows, page.limit, toRefund);
    },
  };
}

export type RefundsService = ReturnType<typeof createRefundsService>;
