import { describe, expect, it } from 'vitest';
import {
  JITTER_RATIO,
  MAX_ATTEMPTS,
  MAX_RETRY_AFTER_MS,
  nextRetryDelayMs,
  parseRetryAfter,
  RETRY_DELAYS_MS,
} from '../../src/modules/webhooks/retry-schedule.js';

const S = 1_000;
const M = 60 * S;
const H = 60 * M;

describe('retry schedule', () => {
  it('is about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: eight attempts in all', () => {
    expect(RETRY_DELAYS_MS).toEqual([5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H]);
    expect(MAX_ATTEMPTS).toBe(8);
  });

  it('jitters every delay within ±20 % and gives none after the last attempt', () => {
    RETRY_DELAYS_MS.forEach((base, index) => {
      const attempts = index + 1;
      expect(nextRetryDelayMs(attempts, undefined, () => 0)).toBe(Math.round(base * (1 - JITTER_RATIO)));
      expect(nextRetryDelayMs(attempts, undefined, () => 0.5)).toBe(base);
      expect(nextRetryDelayMs(attempts, undefined, () => 1)).toBe(Math.round(base * (1 + JITTER_RATIO)));
    });
    expect(nextRetryDelayMs(MAX_ATTEMPTS, undefined)).toBeUndefined();
    expect(nextRetryDelayMs(0, undefined)).toBeUndefined();
  });

  it('lets Retry-After lengthen a wait up to 10 hours, never shorten it', () => {
    const half = () => 0.5;
    expect(nextRetryDelayMs(1, 60 * S, half)).toBe(60 * S);
    expect(nextRetryDelayMs(1, 1 * S, half)).toBe(5 * S);
    expect(nextRetryDelayMs(1, 100 * H, half)).toBe(MAX_RETRY_AFTER_MS);
    expect(nextRetryDelayMs(7, 100 * H, half)).toBe(10 * H);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120 * S);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:10:00 GMT', now)).toBe(10 * M);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
  });
});
