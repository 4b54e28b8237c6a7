import type { Queryable } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import type { IdGenerator } from '../../domain/ids.js';
import type { Mode } from '../../domain/principal.js';
import type { EventRow, EventsRepo } from './events.repo.js';

export type EventType =
  | 'payment.pending'
  | 'payment.captured'
  | 'payment.failed'
  | 'order.paid'
  | `merchant.${string}`;

/**
 * Events are the transactional outbox: `record` must be called with the transaction that makes the
 * change it reports, so an event exists exactly when its change was committed. Delivery happens later,
 * outside that transaction.
 */
export function createEventsService(deps: { repo: EventsRepo; ids: IdGenerator; clock: Clock }) {
  const { repo, ids, clock } = deps;
  return {
    async record(
      tx: Queryable,
      event: { accountId: string; mode: Mode; type: EventType; data: Record<string, unknown> },
    ): Promise<EventRow> {
      return repo.insert(tx, {
        id: ids.next('evt'),
        accountId: event.accountId,
        mode: event.mode,
        type: event.type,
        payload: event.data,
        createdAt: clock.now(),
      });
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
