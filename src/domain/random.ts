import { randomBytes, randomFillSync } from 'node:crypto';

/**
 * Cryptographically strong random bytes, drawn from the operating system's generator a few KiB at
 * a time instead of once per call: ids and single-use tokens take 10 to 32 bytes each, several
 * times a request, and each draw is a call into OpenSSL that costs far more than the copy. Every
 * byte is handed out once (and the pool's copy wiped), so the output is exactly as unpredictable as
 * `randomBytes`; a request larger than the pool goes to `randomBytes` directly.
 */
export function createRandomPool(poolSize = 4096): (size: number) => Buffer {
  const pool = Buffer.alloc(poolSize);
  let offset = poolSize;
  return (size) => {
    if (size > poolSize) return randomBytes(size);
    if (offset + size > poolSize) {
      randomFillSync(pool);
      offset = 0;
    }
    const out = Buffer.from(pool.subarray(offset, offset + size));
    pool.fill(0, offset, offset + size);
    offset += size;
    return out;
  };
}

/** The process's pool (one per process: cluster workers are processes of their own). */
export const secureRandomBytes = createRandomPool();
