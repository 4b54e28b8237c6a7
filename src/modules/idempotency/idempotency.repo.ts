import type { Queryable } from '../../db/db.js';
import type { Mode } from '../../domain/principal.js';

/** A completed response as it is stored and replayed: status, the headers the handler set, exact body bytes. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface IdempotencyRow extends StoredResponse {
  fingerprint: Buffer;
}

export function createIdempotencyRepo() {
  return {
    /** The live (not yet expired) record of a key, if its request completed. */
    async find(
      db: Queryable,
      scope: { accountId: string; mode: Mode; key: string },
      now: Date,
    ): Promise<IdempotencyRow | undefined> {
      const [row] = await db.query<IdempotencyRow>(
        `SELECT fingerprint, status, headers, body FROM idempotency_keys
          WHERE account_id = $1 AND mode = $2 AND key = $3 AND expires_at > $4`,
        [scope.accountId, scope.mode, scope.key, now],
      );
      return row;
    },

    /**
     * Stores a completed response. An expired row of the same key (not purged yet) is replaced;
     * a live one cannot exist here because the caller holds the key's lock and looked first.
     */
    async save(
      db: Queryable,
      record: {
        accountId: string;
        mode: Mode;
        key: string;
        fingerprint: Buffer;
        response: StoredResponse;
        createdAt: Date;
        expiresAt: Date;
      },
    ): Promise<boolean> {
      const rows = await db.query(
        `INSERT INTO idempotency_keys (account_id, mode, key, fingerprint, status, headers, body, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (account_id, mode, key) DO UPDATE
           SET fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, headers = EXCLUDED.headers,
               body = EXCLUDED.body, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
           WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
         RETURNING key`,
        [
          record.accountId,
          record.mode,
          record.key,
          record.fingerprint,
          record.response.status,
          record.response.headers,
          record.response.body,
          record.createdAt,
          record.expiresAt,
        ],
      );
      return rows.length === 1;
    },

    /** Deletes up to `limit` expired records; several processes may purge at once (SKIP LOCKED). */
    async purgeExpired(db: Queryable, now: Date, limit: number): Promise<number> {
      const rows = await db.query(
        `DELETE FROM idempotency_keys WHERE (account_id, mode, key) IN (
           SELECT account_id, mode, key FROM idempotency_keys
            WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING 1 AS deleted`,
        [now, limit],
      );
      return rows.length;
    },
  };
}

export type IdempotencyRepo = ReturnType<typeof createIdempotencyRepo>;
