import { createHash } from 'node:crypto';
import type { Db } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { KoshError } from '../../domain/errors.js';
import type { Principal } from '../../domain/principal.js';
import type { Job } from '../../jobs/runner.js';
import type { IdempotencyRepo, StoredResponse } from './idempotency.repo.js';

/** 1–255 printable ASCII characters (IETF draft-ietf-httpapi-idempotency-key-header; Stripe-style raw value). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export function isValidIdempotencyKey(key: unknown): key is string {
  return typeof key === 'string' && KEY_PATTERN.test(key);
}

/** The advisory-lock id of a key: 64 bits of SHA-256 over its scope, as PostgreSQL's signed bigint. */
function lockId(principal: Principal, key: string): string {
  const digest = createHash('sha256').update(`${principal.accountId}\0${principal.mode}\0${key}`).digest();
  return digest.readBigInt64BE(0).toString();
}

export interface IdempotentResult {
  replayed: boolean;
  response: StoredResponse;
}

export function createIdempotencyService(deps: {
  db: Db;
  repo: IdempotencyRepo;
  clock: Clock;
  ttlSeconds: number;
}) {
  const { db, repo, clock, ttlSeconds } = deps;

  return {
    /**
     * Runs `work` at most once per key: in ONE transaction it takes the key's advisory lock
     * (held by another request → 409), replays a completed response with the same fingerprint
     * (another fingerprint → 422), or runs `work` and stores its response. `work` is handed the
     * transaction's handle and must do everything through it (the HTTP wrapper wires the request's
     * services over it), so its changes and the key commit together or not at all; a throw rolls
     * back both and stores nothing.
     */
    async execute(
      principal: Principal,
      key: string,
      fingerprint: Buffer,
      work: (tx: Db) => Promise<StoredResponse>,
    ): Promise<IdempotentResult> {
      const scope = { accountId: principal.accountId, mode: principal.mode, key };
      return db.transaction(async (tx) => {
        const [lock] = await tx.query<{ locked: boolean }>(
          'SELECT pg_try_advisory_xact_lock($1::bigint) AS locked',
          [lockId(principal, key)],
        );
        if (!lock?.locked) throw new KoshError('idempotency_key_in_use');
        const now = clock.now();
        const previous = await repo.find(tx, scope, now);
        if (previous) {
          if (!previous.fingerprint.equals(fingerprint)) throw new KoshError('idempotency_key_reused');
          return {
            replayed: true,
            response: { status: previous.status, headers: previous.headers, body: previous.body },
          };
        }
        const response = await work(tx);
        const saved = await repo.save(tx, {
          ...scope,
          fingerprint,
          response,
          createdAt: now,
          expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
        });
        // Unreachable while the lock is held; refusing keeps "a result without its key" impossible.
        if (!saved) throw new KoshError('idempotency_key_in_use');
        return { replayed: false, response };
      });
    },

    /** The background job deleting records older than the retention time, a batch at a time. */
    purgeJob(batchSize = 1_000): Job {
      return {
        name: 'idempotency-purge',
        idleIntervalMs: 60_000,
        run: () => repo.purgeExpired(db, clock.now(), batchSize),
      };
    },
  };
}

export type IdempotencyService = ReturnType<typeof createIdempotencyService>;
