import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Db } from '../db/db.js';
import { KoshError } from '../domain/errors.js';
import type { IdGenerator } from '../domain/ids.js';
import type { StoredResponse } from '../modules/idempotency/idempotency.repo.js';
import {
  type IdempotencyMode,
  type IdempotencyService,
  isValidIdempotencyKey,
} from '../modules/idempotency/idempotency.service.js';
import { canonicalJson } from './canonical-json.js';
import { sentMoreThanOnce } from './headers.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * How the route treats Idempotency-Key (see `createKeyed`): every POST route declares it, and
     * its handler runs its work through `keyed(…)`; `false` says the route ignores the header.
     */
    idempotency?: IdempotencyMode | false;
  }
}

/** Headers that describe this delivery, not the stored result: never stored, never replayed. */
const TRANSIENT_HEADERS = /^(x-request-id|content-length|ratelimit-.*|retry-after|idempotent-replayed)$/i;

function settingOf(route: Pick<RouteOptions, 'config'>): IdempotencyMode | false | undefined {
  return (route.config as { idempotency?: IdempotencyMode | false } | undefined)?.idempotency;
}

/** Whether the route honours Idempotency-Key: its handler was declared keyed. */
export function idempotencyApplies(route: Pick<RouteOptions, 'method' | 'config'>): boolean {
  const setting = settingOf(route);
  return setting !== undefined && setting !== false;
}

/** SHA-256 of method, path (trailing slash and query ignored) and the canonical parsed body. */
export function requestFingerprint(method: string, url: string, body: unknown): Buffer {
  const path = (url.split('?')[0] ?? '').replace(/\/+$/, '') || '/';
  return createHash('sha256')
    .update(`${method}\n${path}\n${canonicalJson(body ?? null)}`)
    .digest();
}

export function fingerprintOf(request: FastifyRequest): Buffer {
  return requestFingerprint(request.method, request.url, request.body);
}

/**
 * Runs the handler and turns what it produced — a returned value or a `reply.send(...)` — into the
 * exact bytes that will be sent, serialised with the route's response schema as Fastify would.
 */
async function captureResponse(
  run: () => unknown,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<StoredResponse> {
  let sent: { payload: unknown } | undefined;
  const shadow = reply as unknown as { send: (payload?: unknown) => FastifyReply };
  shadow.send = (payload?: unknown) => {
    sent = { payload };
    return reply;
  };
  let returned: unknown;
  try {
    returned = await run();
  } finally {
    delete (shadow as { send?: unknown }).send;
  }
  const payload = sent ? sent.payload : returned;
  let body: Buffer;
  if (payload === undefined) body = Buffer.alloc(0);
  else if (Buffer.isBuffer(payload)) body = payload;
  else if (typeof payload === 'string') body = Buffer.from(payload, 'utf8');
  else if (typeof (payload as { pipe?: unknown }).pipe === 'function') {
    // A stream cannot be stored for replay; such a route must set `config: { idempotency: false }`.
    throw new Error(`${request.method} ${request.routeOptions.url} streams its response; opt it out.`);
  } else {
    const serialized = reply.serialize(payload);
    body =
      typeof serialized === 'string'
        ? Buffer.from(serialized, 'utf8')
        : Buffer.isBuffer(serialized)
          ? serialized
          : Buffer.from(new Uint8Array(serialized));
    if (!reply.hasHeader('content-type')) reply.type('application/json; charset=utf-8');
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value === undefined || TRANSIENT_HEADERS.test(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return { status: reply.statusCode, headers, body };
}

/**
 * What a keyed handler works with. `db` is where its writes go: for an atomic keyed request, the
 * key's transaction, so that the work and the stored response commit together; otherwise the pool.
 * `ids`, only for a phased keyed request: ids derived from the key, so that a retry after a crash
 * resumes the same objects (a service given them first looks for what a dead attempt made).
 */
export interface UnitOfWork {
  db: Db;
  ids?: IdGenerator;
}

/**
 * Runs a route's work under the Idempotency-Key handling its route declares
 * (`config.idempotency`): `'atomic'` runs the work's database writes in the key's transaction (the
 * handler passes `work.db` to the service); `'phased'` runs it outside any transaction (it calls
 * something outside the database) and makes its objects with `work.ids`, so that a retry after a
 * crash resumes them. A request without the header, or without an API key (the key is scoped to
 * account and mode), runs on the pool. Validation has already passed when a handler runs: rejected
 * requests are never stored.
 *
 *     async (request, reply) => keyed(request, reply, (work) => orders.create(scope, body, work.db))
 */
export function createKeyed(deps: { idempotency: IdempotencyService; db: Db }) {
  const plain: UnitOfWork = { db: deps.db };
  return async function keyed<T>(
    request: FastifyRequest,
    reply: FastifyReply,
    work: (unit: UnitOfWork) => Promise<T>,
  ): Promise<T> {
    const mode = settingOf(request.routeOptions);
    if (!mode) throw new Error(`${request.method} ${request.routeOptions.url} declares no idempotency mode.`);
    const key = request.headers['idempotency-key'];
    if (key === undefined || !request.principal) return work(plain);
    if (sentMoreThanOnce(request.raw.rawHeaders, 'idempotency-key')) {
      throw new KoshError('invalid_idempotency_key', 'Send one Idempotency-Key header, not several.');
    }
    if (!isValidIdempotencyKey(key)) {
      throw new KoshError(
        'invalid_idempotency_key',
        'The Idempotency-Key header must be 1 to 255 printable ASCII characters.',
      );
    }
    const fingerprint = fingerprintOf(request);
    const result = await deps.idempotency.execute(request.principal, key, fingerprint, mode, (claimed) => {
      const unit = mode === 'atomic' ? { db: claimed.db } : { db: deps.db, ids: claimed.ids };
      return captureResponse(() => work(unit), request, reply);
    });
    const { status, headers, body } = result.response;
    reply.code(status).headers(headers);
    if (result.replayed) reply.header('Idempotent-Replayed', 'true');
    // Fastify takes a returned reply as already sent.
    return reply.send(body) as unknown as T;
  };
}

export type Keyed = ReturnType<typeof createKeyed>;

/** The header as the OpenAPI document shows it; the value is checked by the wrapper, not the schema. */
const HEADER_SCHEMA = {
  type: 'string',
  description:
    'Optional. 1–255 printable ASCII characters; a retry with the same key and body replays the first response (docs/idempotency.md).',
};

function documentHeader(route: RouteOptions): void {
  route.schema = route.schema ?? {};
  const schema = route.schema as { headers?: { type?: string; properties?: Record<string, unknown> } };
  if (schema.headers && !schema.headers.properties) return; // a custom header schema: leave it alone
  schema.headers = {
    ...schema.headers,
    type: 'object',
    properties: { ...schema.headers?.properties, 'idempotency-key': HEADER_SCHEMA },
  };
}

/**
 * Checks, as each route is registered, that a POST route declares how it treats Idempotency-Key
 * (`config.idempotency`: `'atomic'`, `'phased'` or `false`), and documents the header where it is
 * honoured. Nothing is on by default, and no handler is changed.
 */
export function checkIdempotencyDeclarations(app: {
  addHook(name: 'onRoute', hook: (route: RouteOptions) => void): unknown;
}): void {
  app.addHook('onRoute', (route) => {
    const setting = settingOf(route);
    if (setting === undefined && [route.method].flat().includes('POST')) {
      throw new Error(
        `POST ${route.url} must declare its Idempotency-Key handling: config.idempotency 'atomic', 'phased' or false.`,
      );
    }
    if (setting) documentHeader(route);
  });
}
