import type { Queryable } from '../../db/db.js';
import type { Mode } from '../../domain/principal.js';

export interface EventRow {
  id: string;
  account_id: string;
  mode: Mode;
  type: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

const COLUMNS = 'id, account_id, mode, type, payload, created_at';

export function createEventsRepo() {
  return {
    async insert(
      tx: Queryable,
      event: { id: string; accountId: string; mode: Mode; type: string; payload: object; createdAt: Date },
    ): Promise<EventRow> {
      const [row] = await tx.query<EventRow>(
        `INSERT INTO events (id, account_id, mode, type, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
        [event.id, event.accountId, event.mode, event.type, event.payload, event.createdAt],
      );
      return row!;
    },

    async find(db: Queryable, accountId: string, mode: Mode, id: string): Promise<EventRow | undefined> {
      const [row] = await db.query<EventRow>(
        `SELECT ${COLUMNS} FROM events WHERE id = $1 AND account_id = $2 AND mode = $3`,
        [id, accountId, mode],
      );
      return row;
    },
  };
}

export type EventsRepo = ReturnType<typeof createEventsRepo>;
