import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimits } from '../config.js';
import { KoshError } from '../domain/errors.js';
import type { Decision } from '../domain/rate-limiter.js';
import type { LimitsService } from '../modules/limits/limits.service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false` exempts an authenticated route from the per-key limit (no RateLimit-* headers). */
    rateLimit?: boolean;
  }
}

export interface RateLimiter {
  /**
   * Called by authentication once the key is known, unless the route opts out (`rateLimit: false`):
   * takes a token from the key's bucket (429 when empty). Synchronous while this process holds
   * tokens of the key; a promise when it must ask.
   */
  limitKey(request: FastifyRequest, reply: FastifyReply): void | Promise<void>;
  /** Throws 429 when the client address has failed authentication too often. */
  checkAddress(request: FastifyRequest, reply: FastifyReply): void;
  /** Counts a failed authentication of the request's address; resolves once it is counted. */
  recordAuthFailure(request: FastifyRequest): Promise<void>;
}

export function createRateLimiter(limits: RateLimits, store: LimitsService): RateLimiter {
  function apply(reply: FastifyReply, decision: Decision, perSecond: number): void {
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
  }

  return {
    limitKey(request, reply) {
      const principal = request.principal;
      if (!principal) return;
      const perSecond = limits.perSecond[principal.mode];
      if (perSecond <= 0) return;
      const decision = store.take(principal.apiKey, perSecond, limits.burst[principal.mode]);
      if (decision instanceof Promise) return decision.then((taken) => apply(reply, taken, perSecond));
      apply(reply, decision, perSecond);
    },

    checkAddress(request, reply) {
      const wait = store.blockedFor(request.ip);
      if (wait > 0) {
        reply.header('Retry-After', wait);
        throw new KoshError(
          'rate_limit_exceeded',
          `Too many failed authentications from this address; retry after ${wait} s.`,
        );
      }
    },

    recordAuthFailure(request) {
      return store.recordFailure(request.ip);
    },
  };
}
