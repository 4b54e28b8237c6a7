import type { Queryable } from '../../db/db.js';
import type { Mode } from '../../domain/scope.js';

/** A completed response as it is stored and replayed: status, the headers the handler set, exact body bytes. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface KeyScope {
  accountId: string;
  mode: Mode;
  key: string;
}

/** A live (unexpired) key as another request finds it. */
export type IdempotencyRow =
  | {
      state: 'started';
      fingerprint: Buffer;
      attempt: string;
      locked_until: Date;
      seed: Buffer;
      created_at: Date;
    }
  | (StoredResponse & { state: 'completed'; fingerprint: Buffer });

/** What an attempt that holds a key knows about it. */
export interface Claim {
  attempt: string;
  seed: Buffer;
  createdAt: Date;
}

const scopeParams = (scope: KeyScope) => [scope.accountId, scope.mode, scope.key];
const WHERE_KEY = 'account_id = $1 AND mode = $2 AND key = $3';

export function createIdempotencyRepo() {
  return {
    /**
     * Claims a key that is new (or whose record expired): one statement, committed on its own.
     * Undefined when a live record of the key exists; `find` says what it is.
     */
    async claim(
      db: Queryable,
      scope: KeyScope,
      claim: {
        fingerprint: Buffer;
        attempt: string;
        seed: Buffer;
        now: Date;
        lockedUntil: Date;
        expiresAt: Date;
      },
    ): Promise<Claim | undefined> {
      const [row] = await db.query<{ seed: Buffer; created_at: Date }>(
        `INSERT INTO idempotency_keys (account_id, mode, key, fingerprint, state, attempt, locked_until, seed, headers, created_at, expires_at)
         VALUES ($1, $2, $3, $4, 'started', $5, $6, $7, '{}', $8, $9)
         ON CONFLICT (account_id, mode, key) DO UPDATE
           SET fingerprint = EXCLUDED.fingerprint, state = 'started', attempt = EXCLUDED.attempt,
               locked_until = EXCLUDED.locked_until, seed = EXCLUDED.seed, status = NULL, headers = '{}',
               body = NULL, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
           WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
         RETURNING seed, created_at`,
        [
          ...scopeParams(scope),
          claim.fingerprint,
          claim.attempt,
          claim.lockedUntil,
          claim.seed,
          claim.now,
          claim.expiresAt,
        ],
      );
      return row ? { attempt: claim.attempt, seed: row.seed, createdAt: row.created_at } : undefined;
    },

    /** The live record of a key: claimed by a running (or dead) attempt, or completed. */
    async find(db: Queryable, scope: KeyScope, now: Date): Promise<IdempotencyRow | undefined> {
      const [row] = await db.query<IdempotencyRow>(
        `SELECT state, fingerprint, attempt, locked_until, seed, created_at, status, headers, body
           FROM idempotency_keys WHERE ${WHERE_KEY} AND expires_at > $4`,
        [...scopeParams(scope), now],
      );
      return row;
    },

    /** Takes over the claim of an attempt whose lock ran out (it died); compare-and-set on that attempt. */
    async takeOver(
      db: Queryable,
      scope: KeyScope,
      change: { from: string; attempt: string; now: Date; lockedUntil: Date },
    ): Promise<Claim | undefined> {
      const [row] = await db.query<{ seed: Buffer; created_at: Date }>(
        `UPDATE idempotency_keys SET attempt = $5, locked_until = $6
          WHERE ${WHERE_KEY} AND state = 'started' AND attempt = $4 AND locked_until <= $7
          RETURNING seed, created_at`,
        [...scopeParams(scope), change.from, change.attempt, change.lockedUntil, change.now],
      );
      return row ? { attempt: change.attempt, seed: row.seed, createdAt: row.created_at } : undefined;
    },

    /** Stores the response; false when this attempt no longer holds the claim. */
    async complete(
      db: Queryable,
      scope: KeyScope,
      attempt: string,
      response: StoredResponse,
    ): Promise<boolean> {
      const rows = await db.query(
        `UPDATE idempotency_keys
            SET state = 'completed', status = $5, headers = $6, body = $7, attempt = NULL, locked_until = NULL
          WHERE ${WHERE_KEY} AND state = 'started' AND attempt = $4
          RETURNING key`,
        [...scopeParams(scope), attempt, response.status, response.headers, response.body],
      );
      return rows.length === 1;
    },

    /** Gives a claim up: the request was refused and changed nothing, so the key is free again. */
    async release(db: Queryable, scope: KeyScope, attempt: string): Promise<void> {
      await db.query(
        `DELETE FROM idempotency_keys WHERE ${WHERE_KEY} AND state = 'started' AND attempt = $4`,
        [...scopeParams(scope), attempt],
      );
    },

    /** Ends an attempt's lock at once, keeping its seed: a retry resumes what it left. */
    async unlock(db: Queryable, scope: KeyScope, attempt: string, now: Date): Promise<void> {
      await db.query(
        `UPDATE idempotency_keys SET locked_until = $5 WHERE ${WHERE_KEY} AND state = 'started' AND attempt = $4`,
        [...scopeParams(scope), attempt, now],
      );
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
