import { describe, expect, it } from 'vitest';
import { createRandomPool } from '../../src/domain/random.js';

describe('the random pool', () => {
  it('hands out each drawn byte once, across refills, in buffers of their own', () => {
    const draw = createRandomPool(64);
    const seen = new Set<string>();
    const outs: Buffer[] = [];
    for (let i = 0; i < 200; i++) {
      const out = draw(10);
      expect(out).toHaveLength(10);
      outs.push(out);
      seen.add(out.toString('hex'));
    }
    // 80 random bits each: a repeat would mean bytes were handed out twice.
    expect(seen.size).toBe(200);
    // Each buffer is a copy: changing one changes no other, and no later draw.
    const before = outs[1]!.toString('hex');
    outs[0]!.fill(0);
    expect(outs[1]!.toString('hex')).toBe(before);
    expect(draw(10).equals(Buffer.alloc(10))).toBe(false);
  });

  it('draws a request larger than the pool directly', () => {
    const draw = createRandomPool(16);
    const big = draw(100);
    expect(big).toHaveLength(100);
    expect(big.equals(Buffer.alloc(100))).toBe(false);
  });

  it('is not all zeros or constant over many draws (the bytes come from the generator)', () => {
    const draw = createRandomPool(4096);
    const bytes = Buffer.concat(Array.from({ length: 1000 }, () => draw(32)));
    const counts = new Array(256).fill(0);
    for (const byte of bytes) counts[byte]++;
    // 32,000 uniform bytes: every value appears, none wildly over its share of 125.
    expect(Math.min(...counts)).toBeGreaterThan(50);
    expect(Math.max(...counts)).toBeLessThan(250);
  });
});
