import type { FastifyReply, FastifyRequest } from 'fastify';
import { KoshError } from '../domain/errors.js';
import type { AccountKind } from '../domain/scope.js';
import type { AccountsService } from '../modules/accounts/accounts.service.js';
import type { Principal } from '../modules/accounts/principal.js';
import { sentMoreThanOnce } from './headers.js';
import type { RateLimiter } from './rate-limit.js';
import { RequestLogger } from './request-logger.js';
import { fromKoshOrNoPage } from './request-site.js';

/** `any`: both merchant and partner keys (each sees only its own account's data). */
export type AuthRequirement = AccountKind | 'any' | 'none';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
  interface FastifyContextConfig {
    /** Which key kind may call the route; every /v1 route but the public pages needs one. */
    auth?: AuthRequirement;
  }
}

/** Splits `Authorization: Basic base64(api_key:secret_key)`; undefined when absent or malformed. */
export function parseBasic(
  header: string | undefined,
): { apiKey: string; secret: string } | 'missing' | 'malformed' {
  if (!header) return 'missing';
  // RFC 9110: the scheme, then one or more spaces, then the token.
  const match = /^Basic +([A-Za-z0-9+/=]{1,1024})$/i.exec(header.trim());
  if (!match?.[1]) return 'malformed';
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0 || colon === decoded.length - 1) return 'malformed';
  return { apiKey: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new KoshError('authentication_required');
  return request.principal;
}

/**
 * Writes a page of another site sent are refused: a browser that once answered the Basic challenge
 * attaches those credentials by itself, so a form on any site could otherwise write through the API
 * as the merchant (cross-site request forgery). Reads are answered: the other site cannot see them.
 */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Authenticates every route that needs a key, then takes a token from the key's rate limit. An
 * address that failed too often is refused with 429 before its credentials are even looked at
 * (right ones included), so guessing secrets is slow. A key in the cache is checked without
 * waiting for anything, so the hook takes Fastify's callback instead of returning a promise.
 */
export function createAuthHook(accounts: AccountsService, publicUrl: string, limiter?: RateLimiter) {
  const publicOrigin = new URL(publicUrl).origin;
  function admit(
    request: FastifyRequest,
    reply: FastifyReply,
    requirement: AccountKind | 'any',
    principal: Principal | undefined,
    unlimited: boolean,
  ): void | Promise<void> {
    if (!principal) {
      if (!limiter) throw new KoshError('invalid_credentials');
      return limiter.recordAuthFailure(request).then(() => {
        throw new KoshError('invalid_credentials');
      });
    }
    if (requirement !== 'any' && principal.accountKind !== requirement) {
      throw new KoshError(requirement === 'partner' ? 'partner_key_required' : 'merchant_key_required');
    }
    request.principal = principal;
    const bindings = { account_id: principal.accountId, mode: principal.mode };
    if (request.log instanceof RequestLogger) request.log.bind(bindings);
    else request.log = request.log.child(bindings);
    return unlimited ? undefined : limiter?.limitKey(request, reply);
  }

  return function authenticate(
    request: FastifyRequest,
    reply: FastifyReply,
    done: (error?: Error) => void,
  ): void {
    // Read once: Fastify builds `routeOptions` anew at each read.
    const { auth: requirement, rateLimit } = request.routeOptions.config;
    const unlimited = rateLimit === false;
    if (!requirement || requirement === 'none') {
      done();
      return;
    }
    if (!SAFE_METHODS.has(request.method) && !fromKoshOrNoPage(request.headers, publicOrigin)) {
      throw new KoshError('cross_site_request');
    }
    const credentials = sentMoreThanOnce(request.raw.rawHeaders, 'authorization')
      ? 'repeated'
      : parseBasic(request.headers.authorization);
    if (credentials === 'missing') throw new KoshError('authentication_required');
    limiter?.checkAddress(request, reply);
    if (credentials === 'malformed' || credentials === 'repeated') {
      const malformed = new KoshError(
        'invalid_credentials',
        credentials === 'repeated'
          ? 'Send one Authorization header, not several.'
          : 'The Authorization header is not valid HTTP Basic: base64(api_key:secret_key).',
      );
      if (!limiter) throw malformed;
      limiter.recordAuthFailure(request).then(() => done(malformed), done);
      return;
    }
    const cached = accounts.authenticateCached(credentials.apiKey, credentials.secret);
    if (cached !== 'miss') {
      const limited = admit(request, reply, requirement, cached, unlimited);
      if (limited) limited.then(() => done(), done);
      else done();
      return;
    }
    accounts
      .authenticate(credentials.apiKey, credentials.secret)
      .then((principal) => admit(request, reply, requirement, principal, unlimited))
      .then(() => done(), done);
  };
}
