import { type Db, isCheckViolation, type Queryable } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { KoshError, notFound } from '../../domain/errors.js';
import type { IdGenerator } from '../../domain/ids.js';
import type { AccountKind, Mode } from '../../domain/scope.js';
import { shownNameProblem } from '../../domain/text.js';
import { TtlCache } from '../../domain/ttl-cache.js';
import type { MethodsService } from '../methods/methods.service.js';
import type { AccountStatus } from './accounts.model.js';
import type { AccountRow, AccountsRepo, ApiKeyRow, KeyRow } from './accounts.repo.js';
import {
  hashSecret,
  modeOfApiKey,
  newApiKey,
  newSecretKey,
  secretMatches,
  verifiedSecret,
  verifiedSecretMatches,
} from './credentials.js';
import type { Principal } from './principal.js';

export interface Credentials {
  account_id: string;
  api_key: string;
  secret_key: string;
  mode: Mode;
}

export interface NewAccount {
  kind: AccountKind;
  name: string;
  status?: AccountStatus;
  partnerId?: string | null;
  sandbox?: boolean;
}

/**
 * Verified key rows with the secret that was verified against the row's HMAC: a cached request
 * compares the presented secret with it in constant time instead of recomputing the HMAC. The
 * secret stays only in this process's memory, for at most the cache's TTL (the process holds each
 * secret anyway while it handles a request that presents it); the database keeps only the HMAC.
 */
export type KeyCache = TtlCache<{ row: KeyRow; secret: Buffer }>;

/** The channel on which processes tell each other to drop cached keys ('*': all of them). */
export const KEY_CHANNEL = 'kosh_keys';

/** One per process, shared by every wiring of the service (see `wireServices`). */
export function createKeyCache(ttlMs: number): KeyCache {
  return new TtlCache(ttlMs, 10_000);
}

/**
 * Account rows by id, for the pages and checks that read them on every request (the merchant's
 * name on a payment page). Dropped with the keys: every account write says '*' on KEY_CHANNEL.
 */
export type AccountCache = TtlCache<AccountRow>;

export function createAccountCache(ttlMs: number): AccountCache {
  return new TtlCache(ttlMs, 10_000);
}

/** The principal of a key whose secret matched; undefined when the key no longer works. */
function principalOf(row: KeyRow, now: Date): Principal | undefined {
  if (row.revoked_at !== null) return undefined;
  // A rolled key works until the end of the overlap its owner chose.
  if (row.expires_at !== null && row.expires_at <= now) return undefined;
  if (row.account_status === 'suspended') {
    throw new KoshError('account_not_activated', 'The account is suspended.');
  }
  if (row.mode === 'live' && row.account_status !== 'activated') {
    throw new KoshError('account_not_activated');
  }
  return {
    accountId: row.account_id,
    accountKind: row.account_kind,
    accountName: row.account_name,
    mode: row.mode,
    apiKey: row.api_key,
  };
}

/** Arbitrary constant: the advisory lock that makes first-start bootstrapping happen once. */
const BOOTSTRAP_LOCK_ID = 4_242_002;

export function createAccountsService(deps: {
  db: Db;
  repo: AccountsRepo;
  ids: IdGenerator;
  methods: MethodsService;
  pepper: string;
  keyCache: KeyCache;
  accountCache: AccountCache;
  clock: Clock;
}) {
  const { db, repo, ids, methods, pepper, clock } = deps;
  const { keyCache, accountCache } = deps;

  async function createAccount(tx: Queryable, input: NewAccount): Promise<AccountRow> {
    // However the account is made (the api-portal's display_name, `kosh merchant create --name`),
    // its name is shown to customers and operators: the API's rule for display_name holds for all.
    const name = input.name.trim();
    if (shownNameProblem(name, 2, 100) !== null) {
      throw new KoshError(
        'invalid_field',
        'An account name must be 2 to 100 characters besides spaces, without control characters (line breaks, tabs, escapes) or direction marks.',
        'name',
      );
    }
    if (input.partnerId !== undefined && input.partnerId !== null) {
      const partner = await repo.findAccount(tx, input.partnerId);
      if (partner?.kind !== 'partner') throw notFound('partner', input.partnerId);
    }
    const account = await repo.insertAccount(tx, {
      id: ids.next(input.kind === 'merchant' ? 'mid' : 'ptr'),
      kind: input.kind,
      name,
      status: input.status ?? (input.kind === 'partner' ? 'activated' : 'created'),
      partnerId: input.partnerId ?? null,
      sandbox: input.sandbox ?? false,
    });
    if (account.kind === 'merchant') await methods.initialise(tx, account.id);
    return account;
  }

  async function createKey(tx: Queryable, accountId: string, mode: Mode): Promise<Credentials> {
    const account = await repo.findAccount(tx, accountId);
    if (!account) throw notFound('account', accountId);
    if (mode === 'live' && account.status !== 'activated') {
      throw new KoshError(
        'account_not_activated',
        `Live keys are issued only to activated accounts; ${accountId} is ${account.status}.`,
      );
    }
    const apiKey = newApiKey(mode);
    const secretKey = newSecretKey(mode);
    try {
      await repo.insertKey(tx, { apiKey, accountId, mode, secretHash: hashSecret(pepper, secretKey) });
    } catch (error) {
      // The database's rules: a merchant onboarded in test mode (migration 0022) and the sandbox's
      // own accounts (0024) hold no live key.
      if (isCheckViolation(error, 'api_keys_live_only_for_live_merchants')) {
        throw new KoshError(
          'account_not_activated',
          `${accountId} was onboarded in test mode and can hold only test keys; a live merchant is onboarded with a live partner key.`,
        );
      }
      if (isCheckViolation(error, 'api_keys_test_only_for_sandbox_accounts')) {
        throw new KoshError(
          'account_not_activated',
          `${accountId} is a sandbox account and can hold only test keys; live payments are taken by an account created for them (kosh partner create, kosh merchant create).`,
        );
      }
      throw error;
    }
    return { account_id: accountId, api_key: apiKey, secret_key: secretKey, mode };
  }

  /**
   * Drops a key (or, with '*', every key) from this process's cache and tells the other processes
   * to do the same (PostgreSQL `NOTIFY`, the container listens on it); in a transaction, the others hear
   * it when it commits.
   */
  async function forgetKeys(apiKey: string, handle: Queryable = db): Promise<void> {
    if (apiKey === '*') {
      keyCache.clear();
      accountCache.clear();
    } else keyCache.delete(apiKey);
    await handle.query(`SELECT pg_notify('${KEY_CHANNEL}', $1)`, [apiKey]);
  }

  /**
   * `authenticate` without waiting, for a key in the cache (or credentials refused by their shape
   * alone); `'miss'` when the database must be asked.
   */
  function authenticateCached(apiKey: string, secret: string): Principal | undefined | 'miss' {
    if (!modeOfApiKey(apiKey) || apiKey.length > 64 || secret.length > 256) return undefined;
    const cached = keyCache.get(apiKey);
    if (!cached) return 'miss';
    if (!verifiedSecretMatches(secret, cached.secret)) return undefined;
    return principalOf(cached.row, clock.now());
  }

  return {
    createAccount,
    createKey,

    /** An account and its first test key, in one transaction. */
    async createAccountWithTestKey(
      input: NewAccount,
    ): Promise<{ account: AccountRow; credentials: Credentials }> {
      return db.transaction(async (tx) => {
        const account = await createAccount(tx, input);
        return { account, credentials: await createKey(tx, account.id, 'test') };
      });
    },

    async issueKey(accountId: string, mode: Mode): Promise<Credentials> {
      return db.transaction((tx) => createKey(tx, accountId, mode));
    },

    /** An account's keys of one mode, newest first. */
    listKeys: (accountId: string, mode: Mode) => repo.listKeys(db, accountId, mode),

    /**
     * Revokes one of the account's keys (of `mode`, when given): it stops at once in this process
     * and, through the database's notifications, in every other (docs/api.md). Answers the key as it
     * is afterwards (one revoked earlier stays as it was); undefined when there is no such key.
     */
    async revokeKey(
      accountId: string,
      apiKey: string,
      mode?: Mode,
      on: Db = db,
    ): Promise<ApiKeyRow | undefined> {
      const key = await repo.findAccountKey(on, accountId, apiKey);
      if (!key || (mode && key.mode !== mode)) return undefined;
      const revoked = await repo.revokeKey(on, accountId, apiKey);
      await forgetKeys(apiKey, on);
      return revoked ?? key;
    },

    /**
     * A new key of the same mode, and the old one working `overlapSeconds` longer (0: it stops at
     * once), so the owner can deploy the new one first. Undefined when there is no such key (of
     * `mode`, when given); `state_conflict` when it was revoked or rolled already.
     */
    async rollKey(
      accountId: string,
      apiKey: string,
      overlapSeconds: number,
      mode?: Mode,
      on: Db = db,
    ): Promise<{ credentials: Credentials; previous: ApiKeyRow } | undefined> {
      const rolled = await on.transaction(async (tx) => {
        const current = await repo.findAccountKey(tx, accountId, apiKey);
        if (!current || (mode && current.mode !== mode)) return undefined;
        const expiresAt = new Date(clock.now().getTime() + overlapSeconds * 1000);
        const previous = await repo.expireKey(tx, accountId, apiKey, expiresAt);
        if (!previous) {
          throw new KoshError('state_conflict', `The key ${apiKey} was revoked or rolled already.`);
        }
        return { credentials: await createKey(tx, accountId, current.mode), previous };
      });
      if (rolled) await forgetKeys(apiKey, on);
      return rolled;
    },

    /** The account with this id, read in `q` (a caller's transaction), or undefined when there is none. */
    findAccount(q: Queryable, accountId: string): Promise<AccountRow | undefined> {
      return repo.findAccount(q, accountId);
    },

    async getAccount(accountId: string): Promise<AccountRow> {
      const cached = accountCache.get(accountId);
      if (cached) return cached;
      const account = await repo.findAccount(db, accountId);
      if (!account) throw notFound('account', accountId);
      accountCache.set(accountId, account);
      return account;
    },

    async setStatus(tx: Queryable, accountId: string, status: AccountStatus): Promise<AccountRow> {
      const account = await repo.setStatus(tx, accountId, status);
      if (!account) throw notFound('account', accountId);
      await forgetKeys('*', tx);
      return account;
    },

    /**
     * Compare-and-set of the status inside the caller's transaction: throws `state_conflict` when
     * the account is no longer in `from`. Cached keys are dropped so a suspension takes effect at once.
     */
    async transitionStatus(
      tx: Queryable,
      accountId: string,
      from: AccountStatus,
      to: AccountStatus,
    ): Promise<AccountRow> {
      const account = await repo.compareAndSetStatus(tx, accountId, from, to);
      if (!account) throw new KoshError('state_conflict', `The account ${accountId} is no longer ${from}.`);
      await forgetKeys('*', tx);
      return account;
    },

    /**
     * Resolves Basic credentials to a principal, or undefined when they do not match a usable key.
     * Verified key rows are cached for a short time; the secret is checked on every request, cached
     * or not: against the stored HMAC on a miss, against the verified secret on a hit (both
     * in constant time).
     */
    async authenticate(apiKey: string, secret: string): Promise<Principal | undefined> {
      const cached = authenticateCached(apiKey, secret);
      if (cached !== 'miss') return cached;
      const row = await repo.findKey(db, apiKey);
      if (!row || !secretMatches(pepper, secret, row.secret_hash)) return undefined;
      keyCache.set(apiKey, { row, secret: verifiedSecret(secret) });
      return principalOf(row, clock.now());
    },

    authenticateCached,

    /** Whether the database holds any account yet (a first start creates the sandbox's). */
    async hasAccounts(): Promise<boolean> {
      return (await repo.countAccounts(db)) > 0;
    },

    /**
     * The sandbox's partner and merchant with a test key each, on an empty database only; `extra`
     * runs in the same transaction (the sandbox's dashboard users), so a crash leaves all or none.
     */
    async bootstrapSandbox(
      extra?: (tx: Queryable, accounts: { merchantId: string; partnerId: string }) => Promise<void>,
    ): Promise<{ merchant: Credentials; partner: Credentials } | undefined> {
      return db.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_ID]);
        if ((await repo.countAccounts(tx)) > 0) return undefined;
        const partner = await createAccount(tx, { kind: 'partner', name: 'Sandbox Partner', sandbox: true });
        const merchant = await createAccount(tx, {
          kind: 'merchant',
          name: 'Sandbox Merchant',
          partnerId: partner.id,
          sandbox: true,
        });
        await extra?.(tx, { merchantId: merchant.id, partnerId: partner.id });
        return {
          merchant: await createKey(tx, merchant.id, 'test'),
          partner: await createKey(tx, partner.id, 'test'),
        };
      });
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
