import type { Queryable } from '../../db/db.js';
import type { AccountKind, Mode } from '../../domain/scope.js';
import type { AccountStatus } from './accounts.model.js';

export interface AccountRow {
  id: string;
  kind: AccountKind;
  name: string;
  status: AccountStatus;
  partner_id: string | null;
  sandbox: boolean;
  created_at: Date;
}

export interface KeyRow {
  api_key: string;
  account_id: string;
  mode: Mode;
  secret_hash: Buffer;
  revoked_at: Date | null;
  expires_at: Date | null;
  account_kind: AccountKind;
  account_name: string;
  account_status: AccountStatus;
}

/** A key as its owner sees it. */
export interface ApiKeyRow {
  api_key: string;
  account_id: string;
  mode: Mode;
  created_at: Date;
  revoked_at: Date | null;
  expires_at: Date | null;
}

export function createAccountsRepo() {
  return {
    async insertAccount(
      db: Queryable,
      account: {
        id: string;
        kind: AccountKind;
        name: string;
        status: AccountStatus;
        partnerId: string | null;
        sandbox: boolean;
      },
    ): Promise<AccountRow> {
      const [row] = await db.query<AccountRow>(
        `INSERT INTO accounts (id, kind, name, status, partner_id, sandbox) VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING id, kind, name, status, partner_id, sandbox, created_at`,
        [account.id, account.kind, account.name, account.status, account.partnerId, account.sandbox],
      );
      return row!;
    },

    async findAccount(db: Queryable, id: string): Promise<AccountRow | undefined> {
      const [row] = await db.query<AccountRow>(
        'SELECT id, kind, name, status, partner_id, sandbox, created_at FROM accounts WHERE id = $1',
        [id],
      );
      return row;
    },

    async countAccounts(db: Queryable): Promise<number> {
      const [row] = await db.query<{ count: string }>('SELECT count(*) AS count FROM accounts');
      return Number(row!.count);
    },

    async setStatus(db: Queryable, id: string, status: AccountStatus): Promise<AccountRow | undefined> {
      const [row] = await db.query<AccountRow>(
        `UPDATE accounts SET status = $2, updated_at = now() WHERE id = $1
         RETURNING id, kind, name, status, partner_id, sandbox, created_at`,
        [id, status],
      );
      return row;
    },

    /** Compare-and-set: changes the status only if it is still `from`; undefined when it was not. */
    async compareAndSetStatus(
      db: Queryable,
      id: string,
      from: AccountStatus,
      to: AccountStatus,
    ): Promise<AccountRow | undefined> {
      const [row] = await db.query<AccountRow>(
        `UPDATE accounts SET status = $3, updated_at = now() WHERE id = $1 AND status = $2
         RETURNING id, kind, name, status, partner_id, sandbox, created_at`,
        [id, from, to],
      );
      return row;
    },

    async insertKey(
      db: Queryable,
      key: { apiKey: string; accountId: string; mode: Mode; secretHash: Buffer },
    ): Promise<void> {
      await db.query(
        'INSERT INTO api_keys (api_key, account_id, mode, secret_hash) VALUES ($1, $2, $3, $4)',
        [key.apiKey, key.accountId, key.mode, key.secretHash],
      );
    },

    async findKey(db: Queryable, apiKey: string): Promise<KeyRow | undefined> {
      const [row] = await db.query<KeyRow>(
        `SELECT k.api_key, k.account_id, k.mode, k.secret_hash, k.revoked_at, k.expires_at,
                a.kind AS account_kind, a.name AS account_name, a.status AS account_status
           FROM api_keys k JOIN accounts a ON a.id = k.account_id
          WHERE k.api_key = $1`,
        [apiKey],
      );
      return row;
    },

    /** An account's keys of one mode, newest first (no secret: only its HMAC is stored anyway). */
    async listKeys(db: Queryable, accountId: string, mode: Mode): Promise<ApiKeyRow[]> {
      return db.query<ApiKeyRow>(
        `SELECT api_key, account_id, mode, created_at, revoked_at, expires_at FROM api_keys
          WHERE account_id = $1 AND mode = $2 ORDER BY created_at DESC, api_key`,
        [accountId, mode],
      );
    },

    async findAccountKey(db: Queryable, accountId: string, apiKey: string): Promise<ApiKeyRow | undefined> {
      const [row] = await db.query<ApiKeyRow>(
        `SELECT api_key, account_id, mode, created_at, revoked_at, expires_at FROM api_keys
          WHERE api_key = $1 AND account_id = $2`,
        [apiKey, accountId],
      );
      return row;
    },

    /** A working key stops at `at` (compare-and-set: not revoked, not already rolled). */
    async expireKey(
      db: Queryable,
      accountId: string,
      apiKey: string,
      at: Date,
    ): Promise<ApiKeyRow | undefined> {
      const [row] = await db.query<ApiKeyRow>(
        `UPDATE api_keys SET expires_at = $3
          WHERE api_key = $1 AND account_id = $2 AND revoked_at IS NULL AND expires_at IS NULL
          RETURNING api_key, account_id, mode, created_at, revoked_at, expires_at`,
        [apiKey, accountId, at],
      );
      return row;
    },

    /** Revokes a working key (compare-and-set); undefined when it was not working (or is not there). */
    async revokeKey(db: Queryable, accountId: string, apiKey: string): Promise<ApiKeyRow | undefined> {
      const [row] = await db.query<ApiKeyRow>(
        `UPDATE api_keys SET revoked_at = now() WHERE api_key = $1 AND account_id = $2 AND revoked_at IS NULL
          RETURNING api_key, account_id, mode, created_at, revoked_at, expires_at`,
        [apiKey, accountId],
      );
      return row;
    },

    /** The pepper generated on first start when none is configured; the first writer wins. */
    async pepperSetting(db: Queryable, candidate: string): Promise<string> {
      await db.query(
        `INSERT INTO settings (name, value) VALUES ('api_secret_pepper', $1) ON CONFLICT (name) DO NOTHING`,
        [candidate],
      );
      const [row] = await db.query<{ value: string }>(
        `SELECT value FROM settings WHERE name = 'api_secret_pepper'`,
      );
      return row!.value;
    },
  };
}

export type AccountsRepo = ReturnType<typeof createAccountsRepo>;
