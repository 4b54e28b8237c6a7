import type { ConnectorDirectory } from '../../connectors/directory.js';
import type { Db, Queryable } from '../../db/db.js';
import type { Mode } from '../../domain/scope.js';
import { TtlCache } from '../../domain/ttl-cache.js';
import { catalogueMethods, emptyMethods, type MethodsConfig, offerable } from './methods.js';
import type { MethodsRepo } from './methods.repo.js';

/**
 * Per-account, per-mode methods configuration. Reads are cached briefly (`KOSH_METHODS_CACHE_TTL_MS`).
 * A change drops the entry in this process at once and, on commit, in every process listening on
 * `METHODS_CHANNEL` (PostgreSQL `NOTIFY`); the TTL bounds staleness only while a listener is down.
 */
export type MethodsCache = TtlCache<MethodsConfig>;

/** The channel on which processes tell each other to drop an account's cached methods (`<account>:<mode>`). */
export const METHODS_CHANNEL = 'kosh_methods';

/** One per process, shared by every wiring of the service (see `wireServices`). */
export function createMethodsCache(ttlMs: number): MethodsCache {
  return new TtlCache<MethodsConfig>(ttlMs, 10_000);
}

/** A stored row as the rest of Kosh sees it: never chosen (null) is the whole Kosh catalogue. */
function inEffect(stored: MethodsConfig | null | undefined): MethodsConfig {
  if (stored === undefined) return emptyMethods();
  return stored ?? catalogueMethods();
}

export function createMethodsService(deps: {
  db: Db;
  repo: MethodsRepo;
  cache: MethodsCache;
  connectors: Pick<ConnectorDirectory, 'forLive'>;
}) {
  const { db, repo, cache, connectors } = deps;
  const cacheKey = (accountId: string, mode: Mode) => `${accountId}:${mode}`;

  /** Drops the entry here, and everywhere once the caller's transaction commits. */
  async function forget(tx: Queryable, accountId: string, mode: Mode): Promise<void> {
    const key = cacheKey(accountId, mode);
    cache.delete(key);
    await tx.query(`SELECT pg_notify('${METHODS_CHANNEL}', $1)`, [key]);
  }

  /** The account's methods of the mode; `on` joins a caller's transaction. */
  async function get(accountId: string, mode: Mode, on: Queryable = db): Promise<MethodsConfig> {
    const key = cacheKey(accountId, mode);
    const cached = cache.get(key);
    if (cached) return cached;
    const methods = inEffect(await repo.find(on, accountId, mode));
    cache.set(key, methods);
    return methods;
  }

  return {
    /**
     * New merchants: the sandbox catalogue in test mode. In live mode nothing is chosen (null): the
     * merchant offers every bank and wallet of the catalogue its connector takes until its partner
     * chooses.
     */
    async initialise(tx: Queryable, accountId: string): Promise<void> {
      await repo.insertInitial(tx, accountId, catalogueMethods(), null);
    },

    /**
     * The methods enabled for the account in the mode: the stored choice, or in live mode, while
     * the partner never chose, the whole Kosh catalogue (see `offered` for what a connector takes).
     */
    get,

    /**
     * What the account can offer customers now: in test mode its methods; in live mode those its
     * connector takes (none without a connector account).
     */
    async offered(accountId: string, mode: Mode): Promise<MethodsConfig> {
      const enabled = await get(accountId, mode);
      if (mode === 'test') return enabled;
      return offerable(enabled, (await connectors.forLive(accountId))?.connector);
    },

    /**
     * Read-modify-write inside the caller's transaction: the row is locked, so two concurrent
     * changes to one account's methods are applied one after the other, never lost. A live choice
     * made for the first time starts from the whole catalogue, as test mode does.
     */
    async update(
      tx: Queryable,
      accountId: string,
      mode: Mode,
      change: (current: MethodsConfig) => MethodsConfig,
    ): Promise<MethodsConfig> {
      const next = change(inEffect(await repo.find(tx, accountId, mode, true)));
      await repo.upsert(tx, accountId, mode, next);
      await forget(tx, accountId, mode);
      return next;
    },

    /** Replaces the configuration; callers build the new object from the current one. */
    async set(tx: Queryable, accountId: string, mode: Mode, methods: MethodsConfig): Promise<void> {
      await repo.upsert(tx, accountId, mode, methods);
      await forget(tx, accountId, mode);
    },
  };
}

export type MethodsService = ReturnType<typeof createMethodsService>;
