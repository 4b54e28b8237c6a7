import { describe, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';

const LIMITS = {
  KOSH_RATE_LIMIT_TEST_PER_SECOND: '2',
  KOSH_RATE_LIMIT_TEST_BURST: '3',
  KOSH_RATE_LIMIT_LIVE_PER_SECOND: '5',
  KOSH_RATE_LIMIT_LIVE_BURST: '7',
  KOSH_AUTH_FAILURE_LIMIT: '3',
  KOSH_AUTH_FAILURE_WINDOW_SECONDS: '60',
};

describeEachDatabase(
  'rate limits',
  (harness) => {
    function fromAddress(address: string, account: TestAccount | string | undefined, url = '/v1/orders/') {
      const authorization = typeof account === 'string' ? account : account?.auth;
      return harness().app.inject({
        method: 'GET',
        url,
        remoteAddress: address,
        headers: authorization ? { authorization } : {},
      });
    }

    describe('per API key', () => {
      it('sends RateLimit-* on every authenticated response and 429 with Retry-After past the burst', async () => {
        const merchant = await harness().merchant('Limited');
        const replies = [
          await harness().request('GET', '/v1/orders/', { auth: merchant }),
          await harness().request('POST', '/v1/orders/', {
            auth: merchant,
            json: { amount: 5000, currency: 'INR' },
          }),
          // A validation error is an authenticated response too, and it counts.
          await harness().request('POST', '/v1/orders/', { auth: merchant, json: { ammount: 1 } }),
        ];
        expect(replies.map((reply) => reply.statusCode)).toEqual([200, 200, 400]);
        replies.forEach((reply, index) => {
          expect(reply.headers['ratelimit-limit']).toBe('3');
          expect(reply.headers['ratelimit-remaining']).toBe(String(2 - index));
          expect(Number(reply.headers['ratelimit-reset'])).toBeGreaterThan(0);
        });

        const refused = await harness().request('POST', '/v1/orders/', {
          auth: merchant,
          json: { amount: 5000, currency: 'INR' },
        });
        expect(refused.statusCode).toBe(429);
        expect(refused.headers['retry-after']).toBe('1');
        expect(refused.headers['ratelimit-remaining']).toBe('0');
        expect(refused.json().error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
        const [count] = await harness().container.db.query<{ count: string }>(
          'SELECT count(*) AS count FROM orders WHERE account_id = $1',
          [merchant.id],
        );
        expect(Number(count?.count)).toBe(1);

        harness().clock.advance(1_000);
        const later = await harness().request('GET', '/v1/orders/', { auth: merchant });
        expect(later.statusCode).toBe(200);
        expect(later.headers['ratelimit-remaining']).toBe('1');
      });

      it('keeps one bucket per key and uses the live limits for live keys', async () => {
        const busy = await harness().merchant('Busy');
        const calm = await harness().merchant('Calm');
        for (let i = 0; i < 3; i++) await harness().request('GET', '/v1/orders/', { auth: busy });
        expect((await harness().request('GET', '/v1/orders/', { auth: busy })).statusCode).toBe(429);
        const other = await harness().request('GET', '/v1/orders/', { auth: calm });
        expect(other.statusCode).toBe(200);
        const live = await harness().liveKey(busy);
        const liveReply = await harness().request('GET', '/v1/orders/', { auth: live });
        expect(liveReply.statusCode).toBe(200);
        expect(liveReply.headers['ratelimit-limit']).toBe('7');
        expect(liveReply.headers['ratelimit-remaining']).toBe('6');
      });

      it('adds no RateLimit-* headers where no key was authenticated', async () => {
        const anonymous = await harness().request('GET', '/v1/orders/');
        expect(anonymous.statusCode).toBe(401);
        expect(anonymous.headers['ratelimit-limit']).toBeUndefined();
        const health = await harness().request('GET', '/healthz');
        expect(health.headers['ratelimit-limit']).toBeUndefined();
      });
    });

    describe('failed authentications per client address', () => {
      it('answers 429 even to right credentials after too many failures, until the window ends', async () => {
        const merchant = await harness().merchant('Victim');
        const wrong = `Basic ${Buffer.from(`${merchant.credentials.api_key}:sk_test_wrong`).toString('base64')}`;
        for (let i = 0; i < 3; i++) {
          expect((await fromAddress('10.9.0.1', wrong)).statusCode).toBe(401);
        }
        const blocked = await fromAddress('10.9.0.1', merchant);
        expect(blocked.statusCode).toBe(429);
        expect(blocked.json().error.code).toBe('rate_limit_exceeded');
        expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
        expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(60);
        // Malformed credentials count as failures and are refused as well.
        expect((await fromAddress('10.9.0.1', 'Basic !!!')).statusCode).toBe(429);

        expect((await fromAddress('10.9.0.2', merchant)).statusCode).toBe(200);
        harness().clock.advance(61_000);
        expect((await fromAddress('10.9.0.1', merchant)).statusCode).toBe(200);
      });

      it('does not count requests without credentials or with right ones', async () => {
        const merchant = await harness().merchant('Honest');
        for (let i = 0; i < 5; i++) await fromAddress('10.9.0.3', undefined);
        harness().clock.advance(10_000);
        for (let i = 0; i < 5; i++) {
          // Spaced out so the key's own bucket never runs dry: only the address throttle is tested.
          harness().clock.advance(1_000);
          expect((await fromAddress('10.9.0.3', merchant)).statusCode).toBe(200);
        }
      });
    });
  },
  LIMITS,
);
