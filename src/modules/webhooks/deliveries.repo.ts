import type { Queryable } from '../../db/db.js';
import type { PageRequest } from '../../domain/pagination.js';
import type { Mode } from '../../domain/scope.js';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface DeliveryRow {
  id: string;
  account_id: string;
  mode: Mode;
  event_id: string;
  endpoint_id: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  created_at: Date;
}

export interface AttemptRow {
  id: string;
  delivery_id: string;
  attempted_at: Date;
  url: string;
  status_code: number | null;
  latency_ms: number;
  response_body: string | null;
  error: string | null;
  succeeded: boolean;
}

/** A claimed delivery with everything needed to send it without another query. */
export interface ClaimedDelivery {
  id: string;
  lease_token: string;
  account_id: string;
  mode: Mode;
  attempt_count: number;
  event_id: string;
  event_type: string;
  event_created_at: Date;
  payload: Record<string, unknown>;
  endpoint_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

const DELIVERY_COLUMNS =
  'id, account_id, mode, event_id, endpoint_id, status, attempt_count, next_attempt_at, last_attempt_at, created_at';

export function createDeliveriesRepo() {
  return {
    /**
     * One pending delivery per matching enabled endpoint for each of `eventIds` (taken from the
     * events' fan-out queue in the caller's transaction), made in id order, which is the order the
     * events were written (event ids count up within a millisecond, see domain/ids.ts).
     */
    async fanOut(tx: Queryable, eventIds: string[], newId: () => string, now: Date): Promise<void> {
      const pairs = await tx.query<{ event_id: string; endpoint_id: string }>(
        {
          name: 'deliveries_fan_out_pairs',
          text: `SELECT ev.id AS event_id, ep.id AS endpoint_id
                   FROM events ev JOIN webhook_endpoints ep
                     ON ep.account_id = ev.account_id AND ep.mode = ev.mode AND ep.enabled AND ep.deleted_at IS NULL
                    AND (ep.enabled_events ? '*' OR ep.enabled_events ? ev.type)
                  WHERE ev.id = ANY($1::text[])
                  ORDER BY ev.id, ep.id`,
        },
        [eventIds],
      );
      if (pairs.length === 0) return;
      await tx.query(
        `INSERT INTO webhook_deliveries (id, account_id, mode, event_id, endpoint_id, status, next_attempt_at, created_at, updated_at)
         SELECT d.id, ev.account_id, ev.mode, ev.id, d.endpoint_id, 'pending', $4, $4, $4
           FROM unnest($1::text[], $2::text[], $3::text[]) AS d(id, event_id, endpoint_id)
           JOIN events ev ON ev.id = d.event_id
         ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
        [
          pairs.map(() => newId()),
          pairs.map((pair) => pair.event_id),
          pairs.map((pair) => pair.endpoint_id),
          now,
        ],
      );
    },

    /**
     * Claims due deliveries of enabled endpoints by giving them a lease; the caller commits at once
     * and sends outside any transaction. A lease that runs out (the worker died) makes the delivery
     * claimable again. Deliveries due at the same time are claimed, and returned, in event order.
     */
    async claimDue(
      tx: Queryable,
      limit: number,
      leaseToken: string,
      now: Date,
      leaseEnds: Date,
      /** Accounts whose deliveries are not claimed now (they hold their share of the sender). */
      skipAccounts: string[] = [],
    ): Promise<ClaimedDelivery[]> {
      return tx.query<ClaimedDelivery>(
        `WITH due AS (
           SELECT d.id FROM webhook_deliveries d
             JOIN webhook_endpoints ep ON ep.id = d.endpoint_id AND ep.enabled
            WHERE d.status = 'pending' AND d.next_attempt_at <= $2
              AND (d.locked_until IS NULL OR d.locked_until <= $2)
              AND d.account_id <> ALL($5::text[])
            ORDER BY d.next_attempt_at, d.event_id, d.endpoint_id LIMIT $1
            FOR UPDATE OF d SKIP LOCKED),
         claimed AS (
           UPDATE webhook_deliveries d SET locked_until = $3, lease_token = $4, updated_at = $2
             FROM due WHERE d.id = due.id
           RETURNING d.id, d.lease_token, d.account_id, d.mode, d.attempt_count, d.event_id, d.endpoint_id, d.next_attempt_at)
         SELECT c.id, c.lease_token, c.account_id, c.mode, c.attempt_count, c.event_id, ev.type AS event_type,
                ev.created_at AS event_created_at, ev.payload, c.endpoint_id, ep.url, ep.secret,
                ep.previous_secret, ep.previous_secret_expires_at
           FROM claimed c JOIN events ev ON ev.id = c.event_id JOIN webhook_endpoints ep ON ep.id = c.endpoint_id
          ORDER BY c.next_attempt_at, c.event_id, c.endpoint_id`,
        [limit, now, leaseEnds, leaseToken, skipAccounts],
      );
    },

    /** Gives claimed deliveries back untouched (graceful shutdown before sending). */
    async release(db: Queryable, ids: string[], leaseToken: string): Promise<void> {
      await db.query(
        `UPDATE webhook_deliveries SET locked_until = NULL, lease_token = NULL
          WHERE id = ANY($1::text[]) AND lease_token = $2`,
        [ids, leaseToken],
      );
    },

    async insertAttempt(
      tx: Queryable,
      attempt: Omit<AttemptRow, 'delivery_id'> & { deliveryId: string },
    ): Promise<void> {
      await tx.query(
        `INSERT INTO webhook_attempts (id, delivery_id, account_id, mode, attempted_at, url, status_code, latency_ms, response_body, error, succeeded)
         SELECT $1, d.id, d.account_id, d.mode, $3, $4, $5, $6, $7, $8, $9 FROM webhook_deliveries d WHERE d.id = $2`,
        [
          attempt.id,
          attempt.deliveryId,
          attempt.attempted_at,
          attempt.url,
          attempt.status_code,
          attempt.latency_ms,
          attempt.response_body,
          attempt.error,
          attempt.succeeded,
        ],
      );
    },

    /**
     * Records the outcome of an attempt. Compare-and-set on the lease: a worker whose lease ran out
     * and was taken over does not overwrite the newer owner's state.
     */
    async recordOutcome(
      tx: Queryable,
      id: string,
      leaseToken: string,
      outcome: { status: DeliveryStatus; nextAttemptAt: Date | null; attemptedAt: Date },
    ): Promise<boolean> {
      const rows = await tx.query(
        `UPDATE webhook_deliveries SET status = $3, next_attempt_at = $4, last_attempt_at = $5,
                attempt_count = attempt_count + 1, locked_until = NULL, lease_token = NULL, updated_at = $5
          WHERE id = $1 AND lease_token = $2 RETURNING id`,
        [id, leaseToken, outcome.status, outcome.nextAttemptAt, outcome.attemptedAt],
      );
      return rows.length > 0;
    },

    /**
     * A disabled or deleted endpoint gets nothing more: its pending deliveries fail (redeliverable).
     * Their leases go too: the outcome of a request in flight then finds no lease to record on, and
     * cannot make a failed delivery pending again.
     */
    async failPendingForEndpoint(tx: Queryable, endpointId: string, now: Date): Promise<void> {
      await tx.query(
        `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, locked_until = NULL,
                lease_token = NULL, updated_at = $2
          WHERE endpoint_id = $1 AND status = 'pending'`,
        [endpointId, now],
      );
    },

    /**
     * Schedules the event again for each endpoint: a fresh retry schedule (whatever the delivery's
     * state), the same webhook-id. A request in flight loses its lease, so its outcome cannot
     * overwrite the new schedule.
     */
    async redeliver(
      tx: Queryable,
      event: { id: string; accountId: string; mode: Mode },
      endpointIds: string[],
      newId: () => string,
      now: Date,
    ): Promise<void> {
      await tx.query(
        `INSERT INTO webhook_deliveries (id, account_id, mode, event_id, endpoint_id, status, next_attempt_at, created_at, updated_at)
         SELECT d.id, $3, $4, $5, d.endpoint_id, 'pending', $6, $6, $6
           FROM unnest($1::text[], $2::text[]) AS d(id, endpoint_id)
         ON CONFLICT (event_id, endpoint_id) DO UPDATE SET
           status = 'pending', next_attempt_at = $6, updated_at = $6, attempt_count = 0,
           locked_until = NULL, lease_token = NULL`,
        [endpointIds.map(() => newId()), endpointIds, event.accountId, event.mode, event.id, now],
      );
    },

    /** One page of the event's deliveries (one per endpoint, without a fixed bound), newest first. */
    async listForEvent(
      db: Queryable,
      accountId: string,
      mode: Mode,
      eventId: string,
      page: PageRequest,
    ): Promise<DeliveryRow[]> {
      return db.query<DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
          WHERE event_id = $1 AND account_id = $2 AND mode = $3 AND ($4::text IS NULL OR id < $4)
          ORDER BY id DESC LIMIT $5`,
        [eventId, accountId, mode, page.cursor ?? null, page.limit + 1],
      );
    },

    /**
     * The latest `limit` deliveries of each endpoint (or each event), newest first, in one statement:
     * a page lists many endpoints or events and must not ask once per row.
     */
    async latestFor(
      db: Queryable,
      accountId: string,
      mode: Mode,
      by: 'endpoint_id' | 'event_id',
      ids: string[],
      limit: number,
    ): Promise<DeliveryRow[]> {
      if (ids.length === 0) return [];
      return db.query<DeliveryRow>(
        `SELECT d.* FROM unnest($1::text[]) AS wanted(id) CROSS JOIN LATERAL (
           SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
            WHERE ${by} = wanted.id AND account_id = $2 AND mode = $3 ORDER BY id DESC LIMIT $4) d`,
        [ids, accountId, mode, limit],
      );
    },

    async attemptsFor(
      db: Queryable,
      accountId: string,
      mode: Mode,
      deliveryIds: string[],
    ): Promise<AttemptRow[]> {
      if (deliveryIds.length === 0) return [];
      return db.query<AttemptRow>(
        `SELECT id, delivery_id, attempted_at, url, status_code, latency_ms, response_body, error, succeeded
           FROM webhook_attempts WHERE delivery_id = ANY($1::text[]) AND account_id = $2 AND mode = $3
          ORDER BY attempted_at, id`,
        [deliveryIds, accountId, mode],
      );
    },
  };
}

export type DeliveriesRepo = ReturnType<typeof createDeliveriesRepo>;
