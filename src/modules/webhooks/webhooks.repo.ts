import type { Queryable } from '../../db/db.js';
import type { PageRequest } from '../../domain/pagination.js';
import type { Mode } from '../../domain/scope.js';

export interface EndpointRow {
  id: string;
  account_id: string;
  mode: Mode;
  url: string;
  description: string | null;
  enabled_events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  'id, account_id, mode, url, description, enabled_events, enabled, disabled_reason, secret, previous_secret, previous_secret_expires_at, failing_since, created_at, updated_at';

export interface EndpointChanges {
  url?: string;
  description?: string | null;
  enabledEvents?: string[];
  enabled?: boolean;
}

/** Endpoint SQL. Every query is tenant-scoped and ignores deleted endpoints. */
export function createWebhooksRepo() {
  return {
    async insert(
      db: Queryable,
      endpoint: {
        id: string;
        accountId: string;
        mode: Mode;
        url: string;
        description: string | null;
        enabledEvents: string[];
        secret: string;
        now: Date;
      },
    ): Promise<EndpointRow | undefined> {
      // An endpoint of this id exists only when a keyed request resumes: nothing is written then.
      const [row] = await db.query<EndpointRow>(
        `INSERT INTO webhook_endpoints (id, account_id, mode, url, description, enabled_events, secret, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}`,
        [
          endpoint.id,
          endpoint.accountId,
          endpoint.mode,
          endpoint.url,
          endpoint.description,
          JSON.stringify(endpoint.enabledEvents),
          endpoint.secret,
          endpoint.now,
        ],
      );
      return row;
    },

    /**
     * Gives an endpoint a new signing secret with no overlap: for an endpoint whose creation answer
     * (and so its secret) never reached the caller.
     */
    async replaceSecret(
      db: Queryable,
      id: string,
      secret: string,
      now: Date,
    ): Promise<EndpointRow | undefined> {
      const [row] = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints SET secret = $2, previous_secret = NULL, previous_secret_expires_at = NULL, updated_at = $3
          WHERE id = $1 AND deleted_at IS NULL RETURNING ${COLUMNS}`,
        [id, secret, now],
      );
      return row;
    },

    async find(
      db: Queryable,
      accountId: string,
      mode: Mode,
      id: string,
      forUpdate = false,
    ): Promise<EndpointRow | undefined> {
      const [row] = await db.query<EndpointRow>(
        `SELECT ${COLUMNS} FROM webhook_endpoints
          WHERE id = $1 AND account_id = $2 AND mode = $3 AND deleted_at IS NULL${forUpdate ? ' FOR UPDATE' : ''}`,
        [id, accountId, mode],
      );
      return row;
    },

    async list(db: Queryable, accountId: string, mode: Mode, page: PageRequest): Promise<EndpointRow[]> {
      return db.query<EndpointRow>(
        `SELECT ${COLUMNS} FROM webhook_endpoints
          WHERE account_id = $1 AND mode = $2 AND deleted_at IS NULL AND ($3::text IS NULL OR id < $3)
          ORDER BY id DESC LIMIT $4`,
        [accountId, mode, page.cursor ?? null, page.limit + 1],
      );
    },

    /** Endpoints of the tenant that take this event type, for redelivery. */
    async listMatching(db: Queryable, accountId: string, mode: Mode, type: string): Promise<EndpointRow[]> {
      return db.query<EndpointRow>(
        `SELECT ${COLUMNS} FROM webhook_endpoints
          WHERE account_id = $1 AND mode = $2 AND deleted_at IS NULL AND enabled
            AND (enabled_events ? '*' OR enabled_events ? $3)
          ORDER BY id`,
        [accountId, mode, type],
      );
    },

    async update(db: Queryable, id: string, changes: EndpointChanges, now: Date): Promise<EndpointRow> {
      const [row] = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints SET
           url = COALESCE($2, url),
           description = CASE WHEN $3::boolean THEN $4 ELSE description END,
           enabled_events = COALESCE($5::jsonb, enabled_events),
           enabled = COALESCE($6, enabled),
           disabled_reason = CASE WHEN $6 IS NULL THEN disabled_reason WHEN $6 THEN NULL ELSE 'disabled_by_user' END,
           failing_since = CASE WHEN $6 THEN NULL ELSE failing_since END,
           updated_at = $7
         WHERE id = $1 AND deleted_at IS NULL RETURNING ${COLUMNS}`,
        [
          id,
          changes.url ?? null,
          changes.description !== undefined,
          changes.description ?? null,
          changes.enabledEvents ? JSON.stringify(changes.enabledEvents) : null,
          changes.enabled ?? null,
          now,
        ],
      );
      return row!;
    },

    async rotateSecret(
      db: Queryable,
      id: string,
      secret: string,
      overlapEndsAt: Date,
      now: Date,
    ): Promise<EndpointRow> {
      const [row] = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = $3, secret = $2, updated_at = $4
          WHERE id = $1 AND deleted_at IS NULL RETURNING ${COLUMNS}`,
        [id, secret, overlapEndsAt, now],
      );
      return row!;
    },

    async softDelete(db: Queryable, id: string, now: Date): Promise<void> {
      await db.query(
        `UPDATE webhook_endpoints SET deleted_at = $2, enabled = false, disabled_reason = 'deleted', updated_at = $2
          WHERE id = $1 AND deleted_at IS NULL`,
        [id, now],
      );
    },

    /** Compare-and-set: only an enabled endpoint is disabled, so the reason of the first cause stays. */
    async disable(db: Queryable, id: string, reason: string, now: Date): Promise<boolean> {
      const rows = await db.query(
        `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, updated_at = $3
          WHERE id = $1 AND enabled RETURNING id`,
        [id, reason, now],
      );
      return rows.length > 0;
    },

    /** Notes a failed attempt; returns since when the endpoint has been failing without a success. */
    async markFailing(db: Queryable, id: string, now: Date): Promise<Date> {
      const [row] = await db.query<{ failing_since: Date }>(
        `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $2)
          WHERE id = $1 RETURNING failing_since`,
        [id, now],
      );
      return row?.failing_since ?? now;
    },

    async markHealthy(db: Queryable, id: string): Promise<void> {
      await db.query(
        'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL',
        [id],
      );
    },
  };
}

export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>;
