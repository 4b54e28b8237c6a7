import type { Db, Queryable } from '../../db/db.js';
import { type Clock, unixSeconds } from '../../domain/clock.js';
import { notFound } from '../../domain/errors.js';
import { type IdGenerator, looksLikeId } from '../../domain/ids.js';
import { type Page, pageRequest, toPage } from '../../domain/pagination.js';
import type { Mode, Scope } from '../../domain/scope.js';
import type { EventRow, EventsRepo } from './events.repo.js';

export type EventType =
  | 'payment.pending'
  | 'payment.captured'
  | 'payment.failed'
  | 'payment.late_authorisation'
  | 'order.paid'
  | 'refund.created'
  | 'refund.processed'
  | 'refund.failed'
  | 'checkout_session.completed'
  | 'checkout_session.expired'
  | `merchant.${string}`;

/**
 * Events are the transactional outbox: `record` must be called with the transaction that makes the
 * change it reports, so an event exists exactly when its change was committed. Delivery happens later,
 * outside that transaction.
 */
/** The event as the API shows it: exactly the body a webhook delivery carries. */
export interface Event {
  id: string;
  type: string;
  mode: Mode;
  created_at: number;
  data: Record<string, unknown>;
}

export function toEvent(row: EventRow): Event {
  return {
    id: row.id,
    type: row.type,
    mode: row.mode,
    created_at: unixSeconds(row.created_at),
    data: row.payload,
  };
}

type NewEventOf = { accountId: string; mode: Mode; type: EventType; data: Record<string, unknown> };

export function createEventsService(deps: { db: Db; repo: EventsRepo; ids: IdGenerator; clock: Clock }) {
  const { db, repo, ids, clock } = deps;

  /**
   * Several events of one change, in one statement, in the order given, written with the commit of
   * `tx` (`Queryable.atCommit`): statements of the same transaction do not see them.
   */
  async function recordAll(tx: Queryable, events: NewEventOf[]): Promise<EventRow[]> {
    const createdAt = clock.now();
    return repo.insert(
      tx,
      events.map((event) => ({
        id: ids.next('evt'),
        accountId: event.accountId,
        mode: event.mode,
        type: event.type,
        payload: event.data,
        createdAt,
      })),
    );
  }

  return {
    async record(tx: Queryable, event: NewEventOf): Promise<EventRow> {
      const [row] = await recordAll(tx, [event]);
      return row!;
    },

    recordAll,

    /** The ids of up to `limit` events waiting for the webhook fan-out, taken in `tx` (oldest first). */
    takeForFanOut(tx: Queryable, limit: number): Promise<string[]> {
      return repo.takeForFanOut(tx, limit);
    },

    async get(scope: Scope, id: string, on: Queryable = db): Promise<Event> {
      const row = looksLikeId('evt', id) ? await repo.find(on, scope.accountId, scope.mode, id) : undefined;
      if (!row) throw notFound('event', id);
      return toEvent(row);
    },

    /** A payment's timeline: the events that carry it, oldest first (at most 100). */
    async forPayment(scope: Scope, paymentId: string): Promise<Event[]> {
      const rows = await repo.forPayment(db, scope.accountId, scope.mode, paymentId, 100);
      return rows.map(toEvent);
    },

    async list(
      scope: Scope,
      query: { limit?: number; cursor?: string; type?: string; delivery_success?: boolean },
    ): Promise<Page<Event>> {
      const page = pageRequest('evt', query);
      const rows = await repo.list(db, scope.accountId, scope.mode, page, {
        type: query.type,
        deliverySuccess: query.delivery_success,
      });
      return toPage(rows, page.limit, toEvent);
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
