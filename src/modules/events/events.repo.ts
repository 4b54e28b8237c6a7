import type { Queryable } from '../../db/db.js';
import type { PageRequest } from '../../domain/pagination.js';
import type { Mode } from '../../domain/scope.js';

export interface EventRow {
  id: string;
  account_id: string;
  mode: Mode;
  type: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

const COLUMNS = 'id, account_id, mode, type, payload, created_at';

export interface NewEvent {
  id: string;
  accountId: string;
  mode: Mode;
  type: string;
  payload: object;
  createdAt: Date;
}

export function createEventsRepo() {
  return {
    /**
     * The events in one statement, in the order given (their ids ascend in that order), written
     * with the caller's COMMIT (`atCommit`): atomically with the change they record, and in the
     * same round trip as its commit. A trigger on events queues each id for the webhook fan-out
     * (`event_fan_out`, migration 0020), whatever writes them. Returns the rows as written.
     */
    async insert(tx: Queryable, events: NewEvent[]): Promise<EventRow[]> {
      const rows = events.map(
        (_, at) =>
          `($${at * 6 + 1}, $${at * 6 + 2}, $${at * 6 + 3}, $${at * 6 + 4}, $${at * 6 + 5}, $${at * 6 + 6})`,
      );
      await tx.atCommit(
        {
          name: `events_insert_${events.length}`,
          text: `INSERT INTO events (id, account_id, mode, type, payload, created_at) VALUES ${rows.join(', ')}`,
        },
        events.flatMap((event) => [
          event.id,
          event.accountId,
          event.mode,
          event.type,
          event.payload,
          event.createdAt,
        ]),
      );
      return events.map((event) => ({
        id: event.id,
        account_id: event.accountId,
        mode: event.mode,
        type: event.type,
        payload: event.payload as Record<string, unknown>,
        created_at: event.createdAt,
      }));
    },

    /**
     * Takes up to `limit` events waiting for the fan-out, oldest first, in the caller's transaction:
     * they leave the queue when it commits and stay when it rolls back. SKIP LOCKED lets several
     * processes take batches at once, each a different one.
     */
    async takeForFanOut(tx: Queryable, limit: number): Promise<string[]> {
      const rows = await tx.query<{ event_id: string }>(
        {
          name: 'events_take_for_fan_out',
          text: `DELETE FROM event_fan_out WHERE event_id IN (
                   SELECT event_id FROM event_fan_out ORDER BY event_id LIMIT $1 FOR UPDATE SKIP LOCKED)
                 RETURNING event_id`,
        },
        [limit],
      );
      return rows.map((row) => row.event_id).sort();
    },

    async find(db: Queryable, accountId: string, mode: Mode, id: string): Promise<EventRow | undefined> {
      const [row] = await db.query<EventRow>(
        `SELECT ${COLUMNS} FROM events WHERE id = $1 AND account_id = $2 AND mode = $3`,
        [id, accountId, mode],
      );
      return row;
    },

    /**
     * Newest first, tenant-scoped. `deliverySuccess` false: events with a delivery not (yet) succeeded;
     * true: events whose deliveries all succeeded. The webhook_deliveries table belongs to the
     * webhooks module; reading it here keeps the filter in one indexed query.
     */
    /** The events that carry a payment (its own, its order's, its refunds'), oldest first. */
    async forPayment(
      db: Queryable,
      accountId: string,
      mode: Mode,
      paymentId: string,
      limit: number,
    ): Promise<EventRow[]> {
      return db.query<EventRow>(
        `SELECT ${COLUMNS} FROM events
          WHERE account_id = $1 AND mode = $2 AND payload ? 'payment' AND payload #>> '{payment,id}' = $3
          ORDER BY id LIMIT $4`,
        [accountId, mode, paymentId, limit],
      );
    },

    async list(
      db: Queryable,
      accountId: string,
      mode: Mode,
      page: PageRequest,
      filter: { type?: string | undefined; deliverySuccess?: boolean | undefined },
    ): Promise<EventRow[]> {
      const unsuccessful =
        "EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id AND d.status <> 'succeeded')";
      const anyDelivery = 'EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id)';
      const deliveryClause =
        filter.deliverySuccess === undefined
          ? ''
          : filter.deliverySuccess
            ? ` AND ${anyDelivery} AND NOT ${unsuccessful}`
            : ` AND ${unsuccessful}`;
      return db.query<EventRow>(
        `SELECT ${COLUMNS} FROM events
          WHERE account_id = $1 AND mode = $2 AND ($3::text IS NULL OR id < $3) AND ($4::text IS NULL OR type = $4)${deliveryClause}
          ORDER BY id DESC LIMIT $5`,
        [accountId, mode, page.cursor ?? null, filter.type ?? null, page.limit + 1],
      );
    },
  };
}

export type EventsRepo = ReturnType<typeof createEventsRepo>;
