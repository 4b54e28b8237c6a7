import type { Queryable } from '../../db/db.js';
import type { AccountKind, Mode } from '../../domain/scope.js';

export interface DashboardUser {
  id: string;
  account_id: string;
  email: string;
  created_at: Date;
}

/** A live session joined to its user and account. */
export interface SessionRow {
  user_id: string;
  account_id: string;
  email: string;
  user_created_at: Date;
  mode: Mode;
  account_kind: AccountKind;
  account_name: string;
  account_status: string;
}

/** How long a session lives: unused for `idleSeconds`, or `maxAgeSeconds` after its login. */
export interface SessionLifetime {
  idleSeconds: number;
  maxAgeSeconds: number;
}

/** The SQL of dashboard users, their sessions and failed logins; the rules live in users.service.ts. */
export function createDashboardUsersRepo() {
  return {
    /** The new user, or undefined when the account does not exist. */
    async insertUser(
      db: Queryable,
      user: { id: string; accountId: string; email: string; passwordHash: string },
    ): Promise<DashboardUser | undefined> {
      const [row] = await db.query<DashboardUser>(
        `INSERT INTO dashboard_users (id, account_id, email, password_hash)
         SELECT $1, id, $3, $4 FROM accounts WHERE id = $2
         RETURNING id, account_id, email, created_at`,
        [user.id, user.accountId, user.email, user.passwordHash],
      );
      return row;
    },

    /** A user who may log in (their account is not suspended), by email. */
    async findLoginUser(
      db: Queryable,
      email: string,
    ): Promise<{ id: string; password_hash: string } | undefined> {
      const [row] = await db.query<{ id: string; password_hash: string }>(
        `SELECT u.id, u.password_hash FROM dashboard_users u JOIN accounts a ON a.id = u.account_id
          WHERE u.email = $1 AND a.status <> 'suspended'`,
        [email],
      );
      return row;
    },

    /** Failed logins from `address` within `windowSeconds` before `now`. */
    async countRecentFailures(
      db: Queryable,
      address: string,
      now: Date,
      windowSeconds: number,
    ): Promise<number> {
      const [row] = await db.query<{ n: string }>(
        `SELECT count(*) AS n FROM dashboard_login_failures
          WHERE address = $1 AND failed_at > $2::timestamptz - make_interval(secs => $3)`,
        [address, now, windowSeconds],
      );
      return Number(row!.n);
    },

    /**
     * Takes back one attempt recorded at `at` (it turned out right, or was refused unchecked). Rows
     * of the same address and time are alike; concurrent takers each take another (SKIP LOCKED).
     */
    async forgetFailure(db: Queryable, address: string, at: Date): Promise<void> {
      await db.query(
        `DELETE FROM dashboard_login_failures WHERE ctid = (
           SELECT ctid FROM dashboard_login_failures WHERE address = $1 AND failed_at = $2
            LIMIT 1 FOR UPDATE SKIP LOCKED)`,
        [address, at],
      );
    },

    async recordFailure(db: Queryable, address: string, now: Date): Promise<void> {
      await db.query('INSERT INTO dashboard_login_failures (address, failed_at) VALUES ($1, $2)', [
        address,
        now,
      ]);
    },

    async insertSession(db: Queryable, tokenHash: Buffer, userId: string, now: Date): Promise<void> {
      await db.query(
        `INSERT INTO dashboard_sessions (token_hash, user_id, mode, created_at, last_seen_at)
         VALUES ($1, $2, 'test', $3, $3)`,
        [tokenHash, userId, now],
      );
    },

    /** The live session of `tokenHash`, touched (its idle time restarts at `now`), or undefined. */
    async touchSession(
      db: Queryable,
      tokenHash: Buffer,
      now: Date,
      lifetime: SessionLifetime,
    ): Promise<SessionRow | undefined> {
      const [row] = await db.query<SessionRow>(
        `UPDATE dashboard_sessions s SET last_seen_at = $2
           FROM dashboard_users u JOIN accounts a ON a.id = u.account_id
          WHERE s.token_hash = $1 AND u.id = s.user_id AND a.status <> 'suspended'
            AND s.last_seen_at > $2::timestamptz - make_interval(secs => $3)
            AND s.created_at > $2::timestamptz - make_interval(secs => $4)
          RETURNING u.id AS user_id, u.account_id, u.email, u.created_at AS user_created_at, s.mode,
                    a.kind AS account_kind, a.name AS account_name, a.status AS account_status`,
        [tokenHash, now, lifetime.idleSeconds, lifetime.maxAgeSeconds],
      );
      return row;
    },

    async setMode(db: Queryable, tokenHash: Buffer, mode: Mode): Promise<void> {
      await db.query('UPDATE dashboard_sessions SET mode = $2 WHERE token_hash = $1', [tokenHash, mode]);
    },

    async deleteSession(db: Queryable, tokenHash: Buffer): Promise<void> {
      await db.query('DELETE FROM dashboard_sessions WHERE token_hash = $1', [tokenHash]);
    },

    /**
     * Deletes up to `limit` sessions that `touchSession` would no longer accept (idle too long, or
     * older than the maximum age). Several processes may purge at once (SKIP LOCKED).
     */
    async purgeExpiredSessions(
      db: Queryable,
      now: Date,
      lifetime: SessionLifetime,
      limit: number,
    ): Promise<number> {
      const rows = await db.query(
        `DELETE FROM dashboard_sessions WHERE token_hash IN (
           SELECT token_hash FROM dashboard_sessions
            WHERE last_seen_at <= $1::timestamptz - make_interval(secs => $2)
               OR created_at <= $1::timestamptz - make_interval(secs => $3)
            LIMIT $4 FOR UPDATE SKIP LOCKED)
         RETURNING 1 AS deleted`,
        [now, lifetime.idleSeconds, lifetime.maxAgeSeconds, limit],
      );
      return rows.length;
    },

    /** Deletes up to `limit` failed logins that have left the throttle window (they no longer count). */
    async purgeOldFailures(db: Queryable, now: Date, windowSeconds: number, limit: number): Promise<number> {
      const rows = await db.query(
        `DELETE FROM dashboard_login_failures WHERE ctid IN (
           SELECT ctid FROM dashboard_login_failures
            WHERE failed_at <= $1::timestamptz - make_interval(secs => $2)
            LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING 1 AS deleted`,
        [now, windowSeconds, limit],
      );
      return rows.length;
    },
  };
}

export type DashboardUsersRepo = ReturnType<typeof createDashboardUsersRepo>;
