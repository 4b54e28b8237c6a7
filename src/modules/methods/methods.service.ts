import type { Db, Queryable } from '../../db/db.js';
import type { Mode } from '../../domain/scope.js';
import { TtlCache } from '../../domain/ttl-cache.js';
import { emptyMethods, type MethodsConfig, sandboxMethods } from './methods.js';
import type { MethodsRepo } from './methods.repo.js';

/**
 * Per-account, per-mode methods configuration. Reads are cached briefly (`KOSH_METHODS_CACHE_TTL_MS`);
 * a change made in this process is visible at once, one made in another process within the TTL.
 */
export type MethodsCache = TtlCache<MethodsConfig>;

/** One per process, shared by every wiring of the service (see `wireServices`). */
export function createMethodsCache(ttlMs: number): MethodsCache {
  return new TtlCache<MethodsConfig>(ttlMs, 10_000);
}

export function createMethodsService(deps: { db: Db; repo: MethodsRepo; cache: MethodsCache }) {
  const { db, repo, cache } = deps;
  const cacheKey = (accountId: string, mode: Mode) => `${accountId}:${mode}`;

  return {
    /** New merchants: the sandbox catalogue in test mode; nothing in live mode until a connector is configured. */
    async initialise(tx: Queryable, accountId: string): Promise<void> {
      await repo.insertInitial(tx, accountId, sandboxMethods(), emptyMethods());
    },

    async get(accountId: string, mode: Mode): Promise<MethodsConfig> {
      const key = cacheKey(accountId, mode);
      const cached = cache.get(key);
      if (cached) return cached;
      const methods = (await repo.find(db, accountId, mode)) ?? emptyMethods();
      cache.set(key, methods);
      return methods;
    },

    /**
     * Read-modify-write inside the caller's transaction: the row is locked, so two concurrent
     * changes to one account's methods are applied one after the other, never lost.
     */
    async update(
      tx: Queryable,
      accountId: string,
      mode: Mode,
      change: (current: MethodsConfig) => MethodsConfig,
    ): Promise<MethodsConfig> {
      const next = change((await repo.find(tx, accountId, mode, true)) ?? emptyMethods());
      await repo.upsert(tx, accountId, mode, next);
      cache.delete(cacheKey(accountId, mode));
      return next;
    },

    /** Replaces the configuration; callers build the new object from the current one. */
    async set(tx: Queryable, accountId: string, mode: Mode, methods: MethodsConfig): Promise<void> {
      await repo.upsert(tx, accountId, mode, methods);
      cache.delete(cacheKey(accountId, mode));
    },
  };
}

export type MethodsService = ReturnType<typeof createMethodsService>;
