import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DashboardSettings } from '../../config.js';
import type { Db, Queryable } from '../../db/db.js';
import { isUniqueViolation } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { KoshError } from '../../domain/errors.js';
import type { IdGenerator } from '../../domain/ids.js';
import type { AccountKind, Mode, Scope } from '../../domain/scope.js';
import type { Job } from '../../jobs/runner.js';
import {
  decoyHash,
  hashPassword,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  passwordMatches,
} from './passwords.js';
import { createDashboardUsersRepo, type DashboardUser } from './users.repo.js';

export type { DashboardUser } from './users.repo.js';

/** A signed-in dashboard user, as a page sees them. */
export interface DashboardSession {
  user: DashboardUser;
  accountKind: AccountKind;
  accountName: string;
  mode: Mode;
  /** The token every state-changing request must carry (a form field): derived from the session's. */
  csrfToken: string;
  /** Whose data the pages show: the account and mode the user signed in to, as the services take it. */
  scope: Scope;
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
  const repo = createDashboardUsersRepo();
  const lifetime = { idleSeconds: settings.idleSeconds, maxAgeSeconds: settings.maxAgeSeconds };

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
      const row = await repo.insertUser(tx, {
        id: ids.next('usr'),
        accountId: input.accountId,
        email,
        passwordHash,
      });
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
    return repo.countRecentFailures(db, address, clock.now(), settings.throttleWindowSeconds);
  }

  /**
   * Checks an email and password and opens a session in `mode` 'test'. Throttled per address: after
   * `throttleFailures` failures in the window every attempt is refused, right password or not.
   * Returns the session token (the cookie's value).
   */
  async function login(input: { email: string; password: string; address: string }): Promise<string> {
    // The attempt is counted as a failure before the password is checked (and taken back if right):
    // guesses sent all at once each see the others, so no more than the limit are ever checked.
    const at = clock.now();
    await repo.recordFailure(db, input.address, at);
    if ((await recentFailures(input.address)) > settings.throttleFailures) {
      await repo.forgetFailure(db, input.address, at);
      throw new KoshError(
        'rate_limit_exceeded',
        'Too many failed logins from this address; try again later.',
      );
    }
    const email = normaliseEmail(input.email);
    const user = await repo.findLoginUser(db, email);
    const password = input.password.slice(0, PASSWORD_MAX_LENGTH + 1);
    const matches = await passwordMatches(
      password,
      user?.password_hash ?? (await decoyHash(settings.passwordLog2Cost)),
    );
    if (!user || !matches) throw new KoshError('invalid_credentials', 'The email or the password is wrong.');
    await repo.forgetFailure(db, input.address, at);
    const token = randomBytes(32).toString('base64url');
    await repo.insertSession(db, tokenHash(token), user.id, clock.now());
    return token;
  }

  /** The live session for a cookie's token, touched (idle expiry restarts), or undefined. */
  async function session(token: string | undefined): Promise<DashboardSession | undefined> {
    if (!token || token.length > 100) return undefined;
    const row = await repo.touchSession(db, tokenHash(token), clock.now(), lifetime);
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
      scope: { accountId: row.account_id, mode: row.mode },
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
      await repo.setMode(db, tokenHash(token), mode);
    },

    async logout(token: string): Promise<void> {
      await repo.deleteSession(db, tokenHash(token));
    },

    /**
     * Deletes expired sessions and failed logins that have left the throttle window, a bounded
     * batch of each per run; neither could be used again, and without it both tables only grow.
     */
    purgeJob(batchSize = 1_000): Job {
      return {
        name: 'dashboard-purge',
        idleIntervalMs: 60_000,
        run: async () => {
          const now = clock.now();
          const sessions = await repo.purgeExpiredSessions(db, now, lifetime, batchSize);
          const failures = await repo.purgeOldFailures(db, now, settings.throttleWindowSeconds, batchSize);
          return sessions + failures;
        },
      };
    },
  };
}

export type DashboardUsers = ReturnType<typeof createDashboardUsers>;
