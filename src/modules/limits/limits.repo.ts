import type { Queryable } from '../../db/db.js';

/** A lease from a key's shared bucket: the tokens granted and what the bucket holds after it. */
export interface LeaseRow {
  granted: number;
  tokens: number;
}

/**
 * The bucket's tokens refilled up to `$2` at `$3` a second, never above `$4`. It reads the row the
 * conflict locked (not a snapshot taken before it), so two leases racing for one key serialise.
 */
const REFILLED = `least($4::float8, b.tokens + greatest(0, extract(epoch FROM ($2::timestamptz - b.refilled_at)))::float8 * $3::float8)`;

/**
 * The shared buckets and failure windows (migration 0019), this module's tables alone. Every
 * statement is one round trip and atomic on its own: the refill, the grant and the new count are
 * computed from the row as the update finds it, so concurrent leases never hand out a token twice.
 */
export function createLimitsRepo() {
  return {
    /**
     * Refills the key's bucket for the time since it was last touched (never above `burst`), then
     * takes up to `lease` whole tokens from it. A key never seen starts full.
     */
    async lease(
      db: Queryable,
      key: string,
      at: Date,
      perSecond: number,
      burst: number,
      lease: number,
    ): Promise<LeaseRow> {
      const [row] = await db.query<LeaseRow>(
        {
          name: 'rate_limit_lease',
          text: `INSERT INTO rate_limit_buckets AS b (key, tokens, granted, refilled_at)
                 VALUES ($1, $4::float8 - least($5::int, floor($4::float8)), least($5::int, floor($4::float8))::int, $2)
                 ON CONFLICT (key) DO UPDATE
                   SET granted = least($5::int, floor(${REFILLED}))::int,
                       tokens = ${REFILLED} - least($5::int, floor(${REFILLED})),
                       refilled_at = greatest(b.refilled_at, $2)
                 RETURNING granted, tokens`,
        },
        [key, at, perSecond, burst, lease],
      );
      return { granted: Number(row!.granted), tokens: Number(row!.tokens) };
    },

    /** Counts a failure in the address's window (a new window when the last one ended). */
    async recordFailure(
      db: Queryable,
      address: string,
      at: Date,
      windowMs: number,
    ): Promise<{ failures: number; endsAt: Date }> {
      const [row] = await db.query<{ failures: number; ends_at: Date }>(
        {
          name: 'auth_failure_record',
          text: `INSERT INTO auth_failure_windows AS w (address, failures, ends_at)
                 VALUES ($1, 1, $2::timestamptz + make_interval(secs => $3::float8 / 1000))
                 ON CONFLICT (address) DO UPDATE
                   SET failures = CASE WHEN w.ends_at <= $2 THEN 1 ELSE w.failures + 1 END,
                       ends_at = CASE WHEN w.ends_at <= $2 THEN EXCLUDED.ends_at ELSE w.ends_at END
                 RETURNING failures, ends_at`,
        },
        [address, at, windowMs],
      );
      return { failures: Number(row!.failures), endsAt: new Date(row!.ends_at) };
    },

    /**
     * Deletes up to `limit` buckets untouched since `before` (full again by then) and ended windows.
     * Several processes may purge at once (SKIP LOCKED), and a row a lease or a failure touched
     * after the batch was chosen is kept: the condition is checked again on the row it finds.
     */
    async purge(db: Queryable, at: Date, before: Date, limit: number): Promise<number> {
      const buckets = await db.query(
        `DELETE FROM rate_limit_buckets WHERE refilled_at < $1 AND key IN
           (SELECT key FROM rate_limit_buckets WHERE refilled_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING 1`,
        [before, limit],
      );
      const windows = await db.query(
        `DELETE FROM auth_failure_windows WHERE ends_at <= $1 AND address IN
           (SELECT address FROM auth_failure_windows WHERE ends_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING 1`,
        [at, limit],
      );
      return buckets.length + windows.length;
    },
  };
}

export type LimitsRepo = ReturnType<typeof createLimitsRepo>;
