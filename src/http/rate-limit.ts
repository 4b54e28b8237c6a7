import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimits } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { KoshError } from '../domain/errors.js';
import { FailureThrottle, TokenBuckets } from '../domain/rate-limiter.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false` exempts an authenticated route from the per-key limit (no RateLimit-* headers). */
    rateLimit?: boolean;
  }
}

export interface RateLimiter {
  /** Called by authentication once the key is known: takes a token from the key's bucket (429 when empty). */
  limitKey(request: FastifyRequest, reply: FastifyReply): void;
  /** Throws 429 when the client address has failed authentication too often. */
  checkAddress(request: FastifyRequest, reply: FastifyReply): void;
  recordAuthFailure(request: FastifyRequest): void;
}

export function createRateLimiter(limits: RateLimits, clock: Clock): RateLimiter {
  const buckets = new TokenBuckets();
  const failures = new FailureThrottle(limits.authFailures, limits.authFailureWindowSeconds * 1000);

  return {
    limitKey(request, reply) {
      const principal = request.principal;
      if (!principal || request.routeOptions.config.rateLimit === false) return;
      const perSecond = limits.perSecond[principal.mode];
      if (perSecond <= 0) return;
      const decision = buckets.take(
        principal.apiKey,
        clock.now().getTime(),
        perSecond,
        limits.burst[principal.mode],
      );
      reply.header('RateLimit-Limit', decision.limit);
      reply.header('RateLimit-Remaining', decision.remaining);
      reply.header('RateLimit-Reset', decision.resetSeconds);
      if (!decision.allowed) {
        reply.header('Retry-After', decision.retryAfterSeconds);
        throw new KoshError(
          'rate_limit_exceeded',
          `Too many requests for this API key (${perSecond} per second, bursts of ${decision.limit}); retry after ${decision.retryAfterSeconds} s.`,
        );
      }
    },

    checkAddress(request, reply) {
      const wait = failures.blockedFor(request.ip, clock.now().getTime());
      if (wait > 0) {
        reply.header('Retry-After', wait);
        throw new KoshError(
          'rate_limit_exceeded',
          `Too many failed authentications from this address; retry after ${wait} s.`,
        );
      }
    },

    recordAuthFailure(request) {
      failures.recordFailure(request.ip, clock.now().getTime());
    },
  };
}
