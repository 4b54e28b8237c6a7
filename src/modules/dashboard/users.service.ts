import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DashboardSettings } from '../../config.js';
import type { Db, Queryable } from '../../db/db.js';
import { isUniqueViolation } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { KoshError } from '../../domain/errors.js';
import type { IdGenerator } from '../../domain/ids.js';
import type { AccountKind, Mode } from '../../domain/scope.js';
import type { Principal } from '../accounts/principal.js';
import {
  decoyHash,
  hashPassword,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  passwordMatches,
} from './passwords.js';

export interface DashboardUser {
  id: string;
  account_id: string;
  email: string;
  created_at: Date;
}

/** A signed-in dashboard user, as a page sees them. */
export interface DashboardSession {
  user: DashboardUser;
  accountKind: AccountKind;
  accountName: string;
  mode: Mode;
  /** The token every state-changing request must carry (a form field): derived from the session's. */
  csrfToken: string;
  /** The services' view of the caller: the same scoping as an API key of that account and mode. */
  principal: Principal;
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}\.[^\s@]{1,63}$/;

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

function tokenHash(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

function csrfFor(token: string): string {
  return createHmac('sha256', token).update('kosh-dashboard-csrf').digest('base64url');
}

interface SessionRow {
  user_id: string;
  account_id: string;
  email: string;
  user_created_at: Date;
  mode: Mode;
  account_kind: AccountKind;
  account_name: string;
  account_status: string;
}

/**
 * Dashboard users, their sessions and the login throttle. Sessions are stored as the SHA-256 of a
 * 256-bit random token (the cookie), expire when idle and at a maximum age, and carry the mode the
 * user is looking at; the CSRF token is an HMAC of the session token, so it needs no storage and
 * changes with every session.
 */
export function createDashboardUsers(deps: {
  db: Db;
  ids: IdGenerator;
  clock: Clock;
  settings: DashboardSettings;
}) {
  const { db, ids, clock, settings } = deps;

  async function createUser(
    input: { accountId: string; email: string; password: string },
    tx: Queryable = db,
  ): Promise<DashboardUser> {
    const email = normaliseEmail(input.email);
    if (!EMAIL.test(email) || email.length > 254) {
      throw new KoshError('invalid_field', 'email must be an email address.', 'email');
    }
    if (input.password.length < PASSWORD_MIN_LENGTH || input.password.length > PASSWORD_MAX_LENGTH) {
      throw new KoshError(
        'invalid_field',
        `password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters long.`,
        'password',
      );
    }
    const passwordHash = await hashPassword(input.password, settings.passwordLog2Cost);
    try {
      const [row] = await tx.query<DashboardUser>(
        `INSERT INTO dashboard_users (id, account_id, email, password_hash)
         SELECT $1, id, $3, $4 FROM accounts WHERE id = $2
         RETURNING id, account_id, email, created_at`,
        [ids.next('usr'), input.accountId, email, passwordHash],
      );
      if (!row) throw new KoshError('resource_not_found', `No account ${input.accountId}.`, 'account');
      return row;
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new KoshError('invalid_field', `A dashboard user ${email} already exists.`, 'email');
      }
      throw error;
    }
  }

  /** Failed logins from `address` within the throttle window. */
  async function recentFailures(address: string): Promise<number> {
    const [row] = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM dashboard_login_failures
        WHERE address = $1 AND failed_at > $2::timestamptz - make_interval(secs => $3)`,
      [address, clock.now(), settings.throttleWindowSeconds],
    );
    return Number(row!.n);
  }

  /**
   * Checks an email and password and opens a session in `mode` 'test'. Throttled per address: after
   * `throttleFailures` failures in the window every attempt is refused, right password or not.
   * Returns the session token (the cookie's value).
   */
  async function login(input: { email: string; password: string; address: string }): Promise<string> {
    if ((await recentFailures(input.address)) >= settings.throttleFailures) {
      throw new KoshError(
        'rate_limit_exceeded',
        'Too many failed logins from this address; try again later.',
      );
    }
    const email = normaliseEmail(input.email);
    const [user] = await db.query<{ id: string; password_hash: string }>(
      `SELECT u.id, u.password_hash FROM dashboard_users u JOIN accounts a ON a.id = u.account_id
        WHERE u.email = $1 AND a.status <> 'suspended'`,
      [email],
    );
    const password = input.password.slice(0, PASSWORD_MAX_LENGTH + 1);
    const matches = await passwordMatches(
      password,
      user?.password_hash ?? (await decoyHash(settings.passwordLog2Cost)),
    );
    if (!user || !matches) {
      await db.query('INSERT INTO dashboard_login_failures (address, failed_at) VALUES ($1, $2)', [
        input.address,
        clock.now(),
      ]);
      throw new KoshError('invalid_credentials', 'The email or the password is wrong.');
    }
    const token = randomBytes(32).toString('base64url');
    await db.query(
      `INSERT INTO dashboard_sessions (token_hash, user_id, mode, created_at, last_seen_at)
       VALUES ($1, $2, 'test', $3, $3)`,
      [tokenHash(token), user.id, clock.now()],
    );
    return token;
  }

  /** The live session for a cookie's token, touched (idle expiry restarts), or undefined. */
  async function session(token: string | undefined): Promise<DashboardSession | undefined> {
    if (!token || token.length > 100) return undefined;
    const now = clock.now();
    const [row] = await db.query<SessionRow>(
      `UPDATE dashboard_sessions s SET last_seen_at = $2
         FROM dashboard_users u JOIN accounts a ON a.id = u.account_id
        WHERE s.token_hash = $1 AND u.id = s.user_id AND a.status <> 'suspended'
          AND s.last_seen_at > $2::timestamptz - make_interval(secs => $3)
          AND s.created_at > $2::timestamptz - make_interval(secs => $4)
        RETURNING u.id AS user_id, u.account_id, u.email, u.created_at AS user_created_at, s.mode,
                  a.kind AS account_kind, a.name AS account_name, a.status AS account_status`,
      [tokenHash(token), now, settings.idleSeconds, settings.maxAgeSeconds],
    );
    if (!row) return undefined;
    return {
      user: {
        id: row.user_id,
        account_id: row.account_id,
        email: row.email,
        created_at: row.user_created_at,
      },
      accountKind: row.account_kind,
      accountName: row.account_name,
      mode: row.mode,
      csrfToken: csrfFor(token),
      principal: {
        accountId: row.account_id,
        accountKind: row.account_kind,
        accountName: row.account_name,
        mode: row.mode,
        apiKey: `dashboard:${row.user_id}`,
      },
    };
  }

  return {
    createUser,
    login,
    session,

    csrfMatches(token: string, presented: unknown): boolean {
      if (typeof presented !== 'string') return false;
      const expected = Buffer.from(csrfFor(token));
      const given = Buffer.from(presented);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },

    async setMode(token: string, mode: Mode): Promise<void> {
      await db.query('UPDATE dashboard_sessions SET mode = $2 WHERE token_hash = $1', [
        tokenHash(token),
        mode,
      ]);
    },

    async logout(token: string): Promise<void> {
      await db.query('DELETE FROM dashboard_sessions WHERE token_hash = $1', [tokenHash(token)]);
    },
  };
}

export type DashboardUsers = ReturnType<typeof createDashboardUsers>;
