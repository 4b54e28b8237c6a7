/**
 * The delivery policy as data. A delivery is tried once at once, then once after each delay below;
 * when the last retry fails too, the delivery is marked failed (and can still be redelivered by API).
 */
const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export const RETRY_DELAYS_MS: readonly number[] = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
];

/** Attempts in all: the first try and one per retry delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** Each delay is spread by up to ±20 % so endpoints recovering from an outage are not hit in lockstep. */
export const JITTER_RATIO = 0.2;

/** A receiver's `Retry-After` may postpone a retry, but never by more than this. */
export const MAX_RETRY_AFTER_MS = 10 * HOUR;

/** An endpoint whose attempts have all failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * HOUR;

/** How long a claimed delivery belongs to its worker; longer than the request timeout. */
export const DEFAULT_LEASE_MS = 60 * SECOND;

/**
 * The wait before the next attempt after `attemptsMade` failed attempts, or undefined when none are
 * left. `Retry-After` can only lengthen the wait (a receiver asking for 1 s must not burn the whole
 * schedule in a minute), and is clamped to MAX_RETRY_AFTER_MS.
 */
export function nextRetryDelayMs(
  attemptsMade: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  const base = RETRY_DELAYS_MS[attemptsMade - 1];
  if (base === undefined) return undefined;
  const jittered = Math.round(base * (1 + JITTER_RATIO * (2 * random() - 1)));
  if (retryAfterMs === undefined) return jittered;
  return Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/** Reads `Retry-After` as seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | undefined, now: Date): number | undefined {
  if (!header) return undefined;
  const value = header.trim();
  if (/^\d{1,10}$/.test(value)) return Number(value) * SECOND;
  // An HTTP date names its weekday or month; anything else (such as "-5") is not one.
  if (!/[a-z]{3}/i.test(value)) return undefined;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now.getTime());
}
