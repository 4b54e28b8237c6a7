import type { Config } from './config.js';
import type { Db } from './db/db.js';
import {
  type AccountCache,
  createAccountCache,
  createKeyCache,
  KEY_CHANNEL,
  type KeyCache,
} from './modules/accounts/accounts.service.js';
import { createMethodsCache, METHODS_CHANNEL, type MethodsCache } from './modules/methods/methods.service.js';

/** The per-process caches every wiring of the services shares (docs/configuration.md). */
export interface Caches {
  methods: MethodsCache;
  keys: KeyCache;
  accounts: AccountCache;
}

export function createCaches(config: Pick<Config, 'methodsCacheTtlMs' | 'keyCacheTtlMs'>): Caches {
  return {
    methods: createMethodsCache(config.methodsCacheTtlMs),
    keys: createKeyCache(config.keyCacheTtlMs),
    accounts: createAccountCache(config.keyCacheTtlMs),
  };
}

/**
 * Changes made by other processes (other workers, other hosts, an admin command) drop this
 * process's entries when they commit, through PostgreSQL `LISTEN/NOTIFY`: a key revoked or rolled
 * (that key), an account's status ('*': every key and account), an account's methods. A lost
 * listening connection may have missed some, so the cache it feeds is dropped whole when it
 * listens again. Returns what stops listening; nothing to do on the embedded database (one process).
 */
export async function listenForChanges(db: Db, caches: Caches): Promise<() => Promise<void>> {
  const { keys, accounts, methods } = caches;
  const forgetAll = () => {
    keys.clear();
    accounts.clear();
  };
  const stopKeys = await db.listen?.(KEY_CHANNEL, {
    message: (apiKey) => (apiKey === '*' ? forgetAll() : keys.delete(apiKey)),
    reconnected: forgetAll,
  });
  const stopMethods = await db.listen?.(METHODS_CHANNEL, {
    message: (key) => methods.delete(key),
    reconnected: () => methods.clear(),
  });
  return async () => {
    await stopKeys?.();
    await stopMethods?.();
  };
}
