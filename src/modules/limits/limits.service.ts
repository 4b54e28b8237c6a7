import type { Logger } from 'pino';
import type { RateLimits } from '../../config.js';
import type { Db } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { BoundedMap, type Decision, FailureThrottle, TokenBuckets } from '../../domain/rate-limiter.js';
import type { Job } from '../../jobs/runner.js';
import type { LimitsRepo } from './limits.repo.js';

/**
 * Where the per-key buckets and the failed-authentication windows are counted (docs/rate-limits.md).
 * `take` answers synchronously while this process holds tokens of the key, and with a promise
 * when it must ask the shared store.
 */
export interface LimitsService {
  take(key: string, perSecond: number, burst: number): Decision | Promise<Decision>;
  /** Seconds the address must wait, or 0 when it may try. */
  blockedFor(address: string): number;
  /** Counts a failure; resolves (never rejects) once the count is recorded everywhere it is kept. */
  recordFailure(address: string): Promise<void>;
  purgeJob(): Job | undefined;
}

/** How long a lease's unspent tokens may be spent: they were taken from the shared bucket already. */
const LEASE_MS = 1_000;

/**
 * After the shared store could not be asked, how long this process counts alone before asking it
 * again: in an outage each question would wait for the connection timeout (5 s by default) and log
 * a line, on every request a lease would have covered.
 */
export const ALONE_MS = 5_000;

/** A tenth of a second's tokens (and of the burst) per lease: few round trips, little held back. */
export function leaseSize(perSecond: number, burst: number): number {
  return Math.max(1, Math.min(Math.ceil(perSecond / 10), Math.floor(burst / 10)));
}

interface Lease {
  /** Tokens of the lease this process has not spent yet. */
  tokens: number;
  /** What the shared bucket held after the lease (for RateLimit-Remaining). */
  shared: number;
  expiresAt: number;
  /** Set when the shared bucket had no whole token: refused locally until it has one again. */
  refusedUntil: number;
}

function answer(allowed: boolean, held: number, perSecond: number, burst: number, waitMs = 0): Decision {
  return {
    allowed,
    limit: burst,
    remaining: Math.max(0, Math.floor(held)),
    resetSeconds: Math.max(0, Math.ceil((burst - held) / perSecond)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(waitMs / 1000)),
  };
}

/** One process (the embedded database): the counters in memory are the whole deployment's. */
export function createLocalLimits(limits: RateLimits, clock: Clock): LimitsService {
  const buckets = new TokenBuckets();
  const failures = new FailureThrottle(limits.authFailures, limits.authFailureWindowSeconds * 1000);
  return {
    take: (key, perSecond, burst) => buckets.take(key, clock.now().getTime(), perSecond, burst),
    blockedFor: (address) => failures.blockedFor(address, clock.now().getTime()),
    recordFailure: async (address) => failures.recordFailure(address, clock.now().getTime()),
    purgeJob: () => undefined,
  };
}

/**
 * Every process on every host (PostgreSQL): a key's bucket lives in `rate_limit_buckets`, and a
 * process takes a lease of `leaseSize` tokens at a time with one atomic statement, then spends it
 * without asking again. The sum over all processes can never pass what the shared bucket grants;
 * tokens a lease still holds when it lapses are lost, which only makes the limit slightly stricter.
 * If the database cannot be asked, this process falls back to its own buckets and failure counts
 * for `ALONE_MS` before it asks again, and says so once (the request's own work fails on such a
 * database anyway).
 */
export function createSharedLimits(deps: {
  db: Db;
  repo: LimitsRepo;
  limits: RateLimits;
  clock: Clock;
  log: Logger;
}): LimitsService {
  const { db, repo, limits, clock, log } = deps;
  const leases = new BoundedMap<Lease>(100_000);
  const renewing = new Map<string, Promise<void>>();
  // This process's own counts: what it falls back to while the shared store cannot be asked, and
  // the failures it saw itself (which block an address before the shared count comes back).
  const own = createLocalLimits(limits, clock);
  const blocked = new BoundedMap<number>(100_000);
  const windowMs = limits.authFailureWindowSeconds * 1000;
  /** Until when this process counts alone (the shared store failed); 0 while it answers. */
  let aloneUntil = 0;
  function storeFailed(error: unknown): void {
    const now = clock.now().getTime();
    if (aloneUntil === 0) {
      log.warn(
        { err: error, retry_in_ms: ALONE_MS },
        'the shared rate limits could not be read; this process counts alone until they can',
      );
    }
    aloneUntil = now + ALONE_MS;
  }
  function storeAnswered(): void {
    if (aloneUntil === 0) return;
    aloneUntil = 0;
    log.info('the shared rate limits answer again; this process no longer counts alone');
  }
  const alone = () => aloneUntil > 0 && clock.now().getTime() < aloneUntil;
  const fullAfterMs = Math.max(
    3_600_000,
    ...(['test', 'live'] as const).map((mode) =>
      limits.perSecond[mode] > 0 ? (limits.burst[mode] / limits.perSecond[mode]) * 1000 : 0,
    ),
  );

  function renew(key: string, perSecond: number, burst: number): Promise<void> {
    const running = renewing.get(key);
    if (running) return running;
    const at = clock.now();
    const renewal = repo
      .lease(db, key, at, perSecond, burst, leaseSize(perSecond, burst))
      .then(({ granted, tokens }) => {
        storeAnswered();
        const now = at.getTime();
        leases.set(key, {
          tokens: granted,
          shared: tokens,
          expiresAt: now + LEASE_MS,
          refusedUntil: granted >= 1 ? 0 : now + Math.ceil(((1 - tokens) / perSecond) * 1000),
        });
      });
    const settled = renewal.finally(() => renewing.delete(key));
    renewing.set(key, settled);
    return settled;
  }

  function take(key: string, perSecond: number, burst: number): Decision | Promise<Decision> {
    const now = clock.now().getTime();
    const lease = leases.get(key);
    if (lease && now < lease.expiresAt) {
      if (lease.tokens >= 1) {
        lease.tokens -= 1;
        return answer(true, lease.shared + lease.tokens, perSecond, burst);
      }
      if (now < lease.refusedUntil) {
        return answer(false, lease.shared, perSecond, burst, lease.refusedUntil - now);
      }
    }
    if (alone()) return own.take(key, perSecond, burst);
    return renew(key, perSecond, burst).then(
      () => take(key, perSecond, burst),
      (error: unknown) => {
        storeFailed(error);
        return own.take(key, perSecond, burst);
      },
    );
  }

  return {
    take,
    blockedFor(address) {
      const now = clock.now().getTime();
      const until = blocked.get(address) ?? 0;
      const shared = until > now ? Math.max(1, Math.ceil((until - now) / 1000)) : 0;
      return Math.max(shared, own.blockedFor(address));
    },
    async recordFailure(address) {
      const at = clock.now();
      await own.recordFailure(address);
      if (limits.authFailures <= 0 || alone()) return;
      // Failures are rare: each is counted for the whole deployment before it is answered, and the
      // count tells this process when the address has used up its window on every host together.
      await repo.recordFailure(db, address, at, windowMs).then(({ failures, endsAt }) => {
        storeAnswered();
        if (failures >= limits.authFailures) blocked.set(address, endsAt.getTime());
      }, storeFailed);
    },
    purgeJob: () => ({
      name: 'rate-limit-purge',
      idleIntervalMs: 60_000,
      run: async () => {
        const now = clock.now();
        // A bucket untouched for longer than it takes to fill is full again: forgetting it
        // changes nothing (a key never seen starts full).
        return repo.purge(db, now, new Date(now.getTime() - fullAfterMs), 1_000);
      },
    }),
  };
}
