import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openPostgres } from '../../src/db/postgres.js';
import { createLogger } from '../../src/log.js';
import { createLimitsRepo } from '../../src/modules/limits/limits.repo.js';
import { ALONE_MS, createSharedLimits } from '../../src/modules/limits/limits.service.js';
import { TestClock } from '../helpers/clock.js';

// PostgreSQL that cannot be reached (nothing listens on port 1): the shared rate limits must fall
// back to this process's own counters without a 500, without waiting for the connection timeout on
// every request, and without a log line per request.
describe('shared rate limits while PostgreSQL cannot be reached', () => {
  it('counts alone for a while, says so once, then asks again', async () => {
    const db = openPostgres('postgres://postgres@127.0.0.1:1/nowhere', {
      poolSize: 2,
      connectTimeoutMs: 500,
      statementTimeoutMs: 1_000,
      transactionGuard: true,
    });
    let logged = '';
    const log = createLogger(
      'info',
      new Writable({
        write(chunk, _encoding, done) {
          logged += chunk.toString();
          done();
        },
      }),
    );
    const clock = new TestClock();
    const config = loadConfig({ KOSH_AUTH_FAILURE_LIMIT: '2' });
    const limits = createSharedLimits({
      db,
      repo: createLimitsRepo(),
      limits: config.rateLimits,
      clock,
      log,
    });
    try {
      const first = limits.take('key_a', 2, 3);
      expect(first).toBeInstanceOf(Promise);
      expect(await first).toMatchObject({ allowed: true, limit: 3, remaining: 2 });
      // Counting alone: answered at once from this process's bucket, which still holds the limit.
      const alone = [limits.take('key_a', 2, 3), limits.take('key_a', 2, 3), limits.take('key_b', 2, 3)];
      for (const decision of alone) expect(decision).not.toBeInstanceOf(Promise);
      expect(alone.map((decision) => (decision as { allowed: boolean }).allowed)).toEqual([true, true, true]);
      expect(limits.take('key_a', 2, 3)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
      // Failed authentications are counted here alone too, and block at the limit.
      await limits.recordFailure('10.0.0.1');
      await limits.recordFailure('10.0.0.1');
      expect(limits.blockedFor('10.0.0.1')).toBeGreaterThan(0);
      expect(logged.match(/counts alone/g)).toHaveLength(1);

      clock.advance(ALONE_MS);
      const again = limits.take('key_c', 2, 3);
      expect(again).toBeInstanceOf(Promise);
      expect(await again).toMatchObject({ allowed: true });
      expect(logged.match(/counts alone/g)).toHaveLength(1);
    } finally {
      await db.close();
    }
  });
});
