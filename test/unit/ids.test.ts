import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createIdGenerator, looksLikeId, MONOTONIC_PREFIXES } from '../../src/domain/ids.js';

const MS = 1_700_000_000_000;

/** The 80-bit random part of an id as a number, to check "previous + 1" exactly. */
function randomPart(id: string): bigint {
  const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
  const chars = id.slice(id.indexOf('_') + 11);
  expect(chars).toHaveLength(16);
  let value = 0n;
  for (const char of chars) value = value * 32n + BigInt(ALPHABET.indexOf(char));
  return value;
}

function timePart(id: string): string {
  return id.slice(id.indexOf('_') + 1, id.indexOf('_') + 11);
}

function isStrictlyAscending(values: string[]): boolean {
  return values.every((value, index) => index === 0 || values[index - 1]! < value);
}

describe('event ids', () => {
  it('are the only monotonic prefix', () => {
    expect([...MONOTONIC_PREFIXES]).toEqual(['evt']);
  });

  it('sort in the order they were made within one millisecond, counting up from a random start', () => {
    const ids = createIdGenerator(() => MS);
    const made = Array.from({ length: 1_000 }, () => ids.next('evt'));
    expect(made.every((id) => looksLikeId('evt', id))).toBe(true);
    expect(new Set(made.map(timePart)).size).toBe(1);
    expect(isStrictlyAscending(made)).toBe(true);
    for (let i = 1; i < made.length; i++) {
      expect(randomPart(made[i]!)).toBe(randomPart(made[i - 1]!) + 1n);
    }
    // Sorting newest first (the events list) gives exactly the reverse of the writing order.
    expect([...made].sort().reverse()).toEqual([...made].reverse());
  });

  it('draw a fresh random part in a new millisecond and still sort after the older ones', () => {
    let now = MS;
    // A new millisecond's draw may be far below the previous random part; the time part keeps order.
    const draws = [Buffer.alloc(10, 0xff), Buffer.alloc(10, 0x00)];
    const ids = createIdGenerator(
      () => now,
      () => draws.shift() ?? randomBytes(10),
    );
    const first = ids.next('evt');
    now += 1;
    const second = ids.next('evt');
    expect(randomPart(first)).toBe((1n << 80n) - 1n);
    expect(randomPart(second)).toBe(0n);
    expect(timePart(second) > timePart(first)).toBe(true);
    expect(second > first).toBe(true);
  });

  it('keep increasing when the clock steps back', () => {
    let now = MS;
    const ids = createIdGenerator(() => now);
    const made = [ids.next('evt')];
    now -= 5_000;
    made.push(ids.next('evt'), ids.next('evt'));
    now = MS + 1;
    made.push(ids.next('evt'));
    expect(isStrictlyAscending(made)).toBe(true);
    expect(timePart(made[1]!)).toBe(timePart(made[0]!));
  });

  it('move to the next millisecond instead of wrapping when the 80-bit part is exhausted', () => {
    const ids = createIdGenerator(
      () => MS,
      () => Buffer.alloc(10, 0xff),
    );
    const first = ids.next('evt');
    const second = ids.next('evt');
    const third = ids.next('evt');
    expect(isStrictlyAscending([first, second, third])).toBe(true);
    expect(timePart(second) > timePart(first)).toBe(true);
    expect(looksLikeId('evt', second)).toBe(true);
  });

  it('do not make the other prefixes predictable', () => {
    const ids = createIdGenerator(() => MS);
    // Interleaving with events must not turn payment ids into a counter either.
    const payments: string[] = [];
    for (let i = 0; i < 200; i++) {
      payments.push(ids.next('pay'));
      ids.next('evt');
    }
    expect(new Set(payments.map(timePart)).size).toBe(1);
    // 200 random suffixes in ascending order by chance: 1 in 200!.
    expect(isStrictlyAscending(payments)).toBe(false);
    const steps = payments.slice(1).map((id, i) => randomPart(id) - randomPart(payments[i]!));
    expect(steps.filter((step) => step === 1n)).toHaveLength(0);
  });

  it('count separately per generator, so a test container starts from a fresh draw', () => {
    const first = createIdGenerator(() => MS);
    const second = createIdGenerator(() => MS);
    const a = first.next('evt');
    const b = second.next('evt');
    expect(randomPart(first.next('evt'))).toBe(randomPart(a) + 1n);
    expect(randomPart(second.next('evt'))).toBe(randomPart(b) + 1n);
  });
});
