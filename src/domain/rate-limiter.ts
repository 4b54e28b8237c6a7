/**
 * In-process limiters: the whole count on the embedded database (one process), and a process's
 * own count on PostgreSQL only while the shared store cannot be asked
 * (src/modules/limits/limits.service.ts, docs/rate-limits.md).
 */

/** A Map that forgets its least recently touched entries beyond `maxEntries`. */
export class BoundedMap<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly maxEntries: number) {}

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, value);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

export interface Decision {
  allowed: boolean;
  /** The bucket size, sent as RateLimit-Limit. */
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again (RateLimit-Reset). */
  resetSeconds: number;
  /** Seconds until the next request would be allowed (Retry-After), when refused. */
  retryAfterSeconds: number;
}

/** A token bucket per key: `burst` requests at once, refilled at `perSecond`. */
export class TokenBuckets {
  private readonly buckets: BoundedMap<{ tokens: number; at: number }>;

  constructor(maxKeys = 100_000) {
    this.buckets = new BoundedMap(maxKeys);
  }

  take(key: string, nowMs: number, perSecond: number, burst: number): Decision {
    const bucket = this.buckets.get(key) ?? { tokens: burst, at: nowMs };
    const elapsed = Math.max(0, nowMs - bucket.at) / 1000;
    let tokens = Math.min(burst, bucket.tokens + elapsed * perSecond);
    const allowed = tokens >= 1;
    if (allowed) tokens -= 1;
    this.buckets.set(key, { tokens, at: nowMs });
    return {
      allowed,
      limit: burst,
      remaining: Math.floor(tokens),
      resetSeconds: Math.ceil((burst - tokens) / perSecond),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond)),
    };
  }
}

/** Counts failures per key in fixed windows; a key over `limit` is blocked until its window ends. */
export class FailureThrottle {
  private readonly windows: BoundedMap<{ count: number; endsAt: number }>;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    maxKeys = 100_000,
  ) {
    this.windows = new BoundedMap(maxKeys);
  }

  /** Seconds the key must wait, or 0 when it may try. */
  blockedFor(key: string, nowMs: number): number {
    if (this.limit <= 0) return 0;
    const window = this.windows.get(key);
    if (!window || window.endsAt <= nowMs || window.count < this.limit) return 0;
    return Math.max(1, Math.ceil((window.endsAt - nowMs) / 1000));
  }

  recordFailure(key: string, nowMs: number): void {
    if (this.limit <= 0) return;
    const window = this.windows.get(key);
    if (!window || window.endsAt <= nowMs) this.windows.set(key, { count: 1, endsAt: nowMs + this.windowMs });
    else window.count += 1;
  }
}
