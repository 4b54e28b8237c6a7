import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { ERROR_CATALOGUE, KoshError } from '../../domain/errors.js';
import type { Failpoints } from '../../domain/failpoints.js';
import { type IdGenerator, seededIds } from '../../domain/ids.js';
import type { Scope } from '../../domain/scope.js';
import type { Job } from '../../jobs/runner.js';
import type { KeyRing } from '../../security/keyring.js';
import type { Claim, IdempotencyRepo, KeyScope, StoredResponse } from './idempotency.repo.js';

/** 1–255 printable ASCII characters (IETF draft-ietf-httpapi-idempotency-key-header; Stripe-style raw value). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export function isValidIdempotencyKey(key: unknown): key is string {
  return typeof key === 'string' && KEY_PATTERN.test(key);
}

export interface IdempotentResult {
  replayed: boolean;
  response: StoredResponse;
}

/**
 * How a keyed request's work runs once its key is claimed:
 * - `atomic`: in one transaction with the stored response (work that touches only the database);
 *   a crash rolls both back, and a retry runs the work again from nothing.
 * - `phased`: in the work's own transactions, with calls outside the database between them; the
 *   response is stored in a short transaction at the end. A retry after a crash resumes: the ids
 *   the work creates come from the claim's seed, so it finds what the dead attempt committed.
 */
export type IdempotencyMode = 'atomic' | 'phased';

/** What a keyed request's look-up found: a stored answer, a refusal, or the key claimed for its work. */
type LookUp = { replay: StoredResponse } | { refused: KoshError } | { claimed: true };

/** A keyed request this process is handling, as a duplicate of it sees it. */
interface InProcess {
  fingerprint: Buffer;
  found: Promise<LookUp>;
}

export interface KeyedWork {
  /** The handle the work runs on: the transaction (atomic) or the database (phased). */
  db: Db;
  /** Ids for the objects the request creates: the same on every attempt of this key. */
  ids: IdGenerator;
  /** True when an earlier attempt of this key died and this one takes over from it. */
  resumed: boolean;
}

function isRefusal(error: unknown): boolean {
  return error instanceof KoshError && ERROR_CATALOGUE[error.code].status < 500;
}

export function createIdempotencyService(deps: {
  db: Db;
  repo: IdempotencyRepo;
  clock: Clock;
  ttlSeconds: number;
  /** How long an attempt holds its key; after that, a retry may take over (the attempt died). */
  lockSeconds: number;
  /** Stored answers are encrypted: some carry a secret shown once (an API secret, a signing secret). */
  keyring: KeyRing;
  failpoints?: Failpoints;
}) {
  const { db, repo, clock, ttlSeconds, lockSeconds, keyring } = deps;
  const contextOf = (scope: KeyScope) => `idempotency:${scope.accountId}:${scope.mode}:${scope.key}`;
  /** The answer as it is stored: its body encrypted and bound to the key's scope. */
  const seal = (scope: KeyScope, response: StoredResponse): StoredResponse => ({
    ...response,
    body: Buffer.from(keyring.encrypt(response.body, contextOf(scope)), 'utf8'),
  });
  const open = (scope: KeyScope, stored: StoredResponse): StoredResponse => {
    const text = stored.body.toString('utf8');
    return keyring.isEncrypted(text) ? { ...stored, body: keyring.decrypt(text, contextOf(scope)) } : stored;
  };
  /**
   * The keys this process is working on: each with its fingerprint and what its look-up found. A
   * duplicate that arrives here is answered from them, without waiting for a database connection (on
   * the embedded database the one connection may be held by the first request's own transaction):
   * it shares the first's answer when that was a replay or a refusal, and gets `409` when the first
   * claimed the key and is doing its work.
   */
  const running = new Map<string, InProcess>();

  /** Claims the key, takes over a dead attempt's claim, or answers what the key already holds. */
  async function claimOrAnswer(
    scope: KeyScope,
    fingerprint: Buffer,
    keepSeconds: number,
  ): Promise<{ claim: Claim; resumed: boolean } | { replay: StoredResponse }> {
    for (let round = 0; round < 3; round++) {
      const now = clock.now();
      const lockedUntil = new Date(now.getTime() + lockSeconds * 1000);
      const attempt = randomBytes(12).toString('hex');
      const claim = await repo.claim(db, scope, {
        fingerprint,
        attempt,
        seed: randomBytes(16),
        now,
        lockedUntil,
        expiresAt: new Date(now.getTime() + keepSeconds * 1000),
      });
      if (claim) return { claim, resumed: false };
      const existing = await repo.find(db, scope, now);
      if (!existing) continue; // expired or released between the two statements: claim again
      if (!existing.fingerprint.equals(fingerprint)) throw new KoshError('idempotency_key_reused');
      if (existing.state === 'completed') {
        return {
          replay: open(scope, { status: existing.status, headers: existing.headers, body: existing.body }),
        };
      }
      if (existing.locked_until > now) throw new KoshError('idempotency_key_in_use');
      const taken = await repo.takeOver(db, scope, { from: existing.attempt, attempt, now, lockedUntil });
      if (taken) return { claim: taken, resumed: true };
    }
    throw new KoshError('idempotency_key_in_use');
  }

  return {
    /**
     * Runs `work` at most once per key (docs/idempotency.md). The key is claimed first, in a
     * statement committed on its own, so a duplicate arriving while the work runs gets `409`
     * whatever the database; the same key with another request gets `422`; a completed key replays.
     * A refused request (4xx) changes nothing and frees the key; any other failure keeps the claim
     * and ends its lock, so a retry resumes it. `options.retainSeconds` keeps this key longer than
     * the retention (`ttlSeconds`) when its caller can send it again for longer (a dashboard form
     * can be posted as long as its session lives).
     */
    async execute(
      owner: Scope,
      key: string,
      fingerprint: Buffer,
      mode: IdempotencyMode,
      work: (context: KeyedWork) => Promise<StoredResponse>,
      options: { retainSeconds?: number } = {},
    ): Promise<IdempotentResult> {
      const scope = { accountId: owner.accountId, mode: owner.mode, key };
      const local = `${scope.accountId}\0${scope.mode}\0${key}`;
      const inProcess = running.get(local);
      const keepSeconds = Math.max(ttlSeconds, options.retainSeconds ?? 0);
      if (inProcess) {
        const found = await inProcess.found;
        const refused = 'refused' in found ? found.refused : undefined;
        if (!inProcess.fingerprint.equals(fingerprint)) {
          // The key holds the other request's body, unless that one was refused: then ask the database.
          if (!refused) throw new KoshError('idempotency_key_reused');
          return run(scope, fingerprint, mode, work, keepSeconds, () => {});
        }
        if ('replay' in found) return { replayed: true, response: found.replay };
        throw new KoshError(refused?.code ?? 'idempotency_key_in_use', refused?.message, refused?.field);
      }
      let settle: (found: LookUp) => void = () => {};
      running.set(local, { fingerprint, found: new Promise<LookUp>((resolve) => (settle = resolve)) });
      try {
        return await run(scope, fingerprint, mode, work, keepSeconds, settle);
      } finally {
        settle({ claimed: true });
        running.delete(local);
      }
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

  async function run(
    scope: KeyScope,
    fingerprint: Buffer,
    mode: IdempotencyMode,
    work: (context: KeyedWork) => Promise<StoredResponse>,
    keepSeconds: number,
    settle: (found: LookUp) => void,
  ): Promise<IdempotentResult> {
    let claimed: Awaited<ReturnType<typeof claimOrAnswer>>;
    try {
      claimed = await claimOrAnswer(scope, fingerprint, keepSeconds);
    } catch (error) {
      if (error instanceof KoshError) settle({ refused: error });
      throw error;
    }
    settle('replay' in claimed ? claimed : { claimed: true });
    if ('replay' in claimed) return { replayed: true, response: claimed.replay };
    const { claim, resumed } = claimed;
    const ids = seededIds(claim.seed, claim.createdAt);
    try {
      const response =
        mode === 'atomic'
          ? await db.transaction(async (tx) => {
              const result = await work({ db: tx, ids, resumed });
              // A claim taken over meanwhile (this attempt outlived its lock) must not commit twice.
              if (!(await repo.complete(tx, scope, claim.attempt, seal(scope, result)))) {
                throw new KoshError('idempotency_key_in_use');
              }
              return result;
            })
          : await work({ db, ids, resumed });
      deps.failpoints?.failpoint('idempotency-before-store');
      if (mode === 'phased' && !(await repo.complete(db, scope, claim.attempt, seal(scope, response)))) {
        throw new KoshError('idempotency_key_in_use');
      }
      return { replayed: false, response };
    } catch (error) {
      // Atomic work rolled back: nothing changed, whatever the error. Phased work may have
      // committed steps; only a refusal is known to have changed nothing.
      const free = mode === 'atomic' || isRefusal(error);
      await (free
        ? repo.release(db, scope, claim.attempt)
        : repo.unlock(db, scope, claim.attempt, clock.now())
      ).catch(() => {});
      throw error;
    }
  }
}

export type IdempotencyService = ReturnType<typeof createIdempotencyService>;
