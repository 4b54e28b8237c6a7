import { describe, expect, it } from 'vitest';
import { KoshError } from '../../src/domain/errors.js';
import { FailureThrottle, TokenBuckets } from '../../src/domain/rate-limiter.js';
import { canonicalJson } from '../../src/http/canonical-json.js';

describe('TokenBuckets', () => {
  it('allows a burst, then refills at the sustained rate', () => {
    const buckets = new TokenBuckets();
    const taken = Array.from({ length: 4 }, () => buckets.take('k', 0, 2, 3));
    expect(taken.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(taken.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    expect(taken[3]).toMatchObject({ limit: 3, retryAfterSeconds: 1, resetSeconds: 2 });
    expect(buckets.take('k', 500, 2, 3).allowed).toBe(true);
    expect(buckets.take('k', 500, 2, 3).allowed).toBe(false);
    expect(buckets.take('other', 500, 2, 3).remaining).toBe(2);
  });

  it('forgets the least recently used keys beyond its size', () => {
    const buckets = new TokenBuckets(2);
    buckets.take('a', 0, 1, 1);
    buckets.take('b', 0, 1, 1);
    buckets.take('c', 0, 1, 1);
    // 'a' was forgotten: it starts with a full bucket again.
    expect(buckets.take('a', 0, 1, 1).allowed).toBe(true);
    expect(buckets.take('c', 0, 1, 1).allowed).toBe(false);
  });
});

describe('FailureThrottle', () => {
  it('blocks after the limit until the window ends; 0 turns it off', () => {
    const throttle = new FailureThrottle(2, 60_000);
    throttle.recordFailure('ip', 0);
    expect(throttle.blockedFor('ip', 1)).toBe(0);
    throttle.recordFailure('ip', 1_000);
    expect(throttle.blockedFor('ip', 1_000)).toBe(59);
    expect(throttle.blockedFor('other', 1_000)).toBe(0);
    expect(throttle.blockedFor('ip', 60_000)).toBe(0);
    const off = new FailureThrottle(0, 60_000);
    for (let i = 0; i < 100; i++) off.recordFailure('ip', 0);
    expect(off.blockedFor('ip', 0)).toBe(0);
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
    expect(canonicalJson({ a: 1, b: undefined })).toBe(canonicalJson({ a: 1 }));
  });

  it('refuses hostile nesting with a KoshError instead of exhausting the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(() => canonicalJson(deep)).toThrow(KoshError);
  });
});
