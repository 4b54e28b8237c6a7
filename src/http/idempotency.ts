import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Services } from '../container.js';
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

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Idempotency-Key support: on by default for POST, off for other methods. `false` opts a POST
     * route out (the header is then ignored); `true` opts a PATCH/PUT/DELETE route in. `'phased'`
     * runs the handler outside any transaction (it calls something outside the database); it then
     * creates its objects with `request.ids`, so that a retry after a crash resumes them.
     */
    idempotency?: boolean | 'phased';
  }
}

/** Headers that describe this delivery, not the stored result: never stored, never replayed. */
const TRANSIENT_HEADERS = /^(x-request-id|content-length|ratelimit-.*|retry-after|idempotent-replayed)$/i;

declare module 'fastify' {
  interface FastifyRequest {
    /** The ids a phased Idempotency-Key request creates its objects with (the same on every attempt). */
    ids?: IdGenerator;
  }
}

function settingOf(route: Pick<RouteOptions, 'config'>): boolean | 'phased' | undefined {
  return (route.config as { idempotency?: boolean | 'phased' } | undefined)?.idempotency;
}

export function idempotencyApplies(route: Pick<RouteOptions, 'method' | 'config'>): boolean {
  const setting = settingOf(route);
  if (setting !== undefined) return setting !== false;
  return [route.method].flat().includes('POST');
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

type Handler = RouteOptions['handler'];

/**
 * Runs the handler and turns what it produced — a returned value or a `reply.send(...)` — into the
 * exact bytes that will be sent, serialised with the route's response schema as Fastify would.
 */
async function captureResponse(
  handler: Handler,
  context: ThisParameterType<Handler>,
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
    returned = await handler.call(context, request, reply);
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
 * Wraps a route handler with Idempotency-Key semantics. Requests without the header, or without
 * an authenticated principal (the key is scoped to account and mode), run the handler as before.
 * With the header, the handler runs inside the key's transaction with the request's services wired
 * over it (`request.services`, see ./scope.ts). Validation has already passed when the wrapper
 * runs: rejected requests never reach it and are never stored.
 */
export function withIdempotency(
  handler: Handler,
  idempotency: IdempotencyService,
  servicesFor: (tx: Db) => Services,
  mode: IdempotencyMode,
): Handler {
  return async function idempotentHandler(this: ThisParameterType<Handler>, request, reply) {
    const key = request.headers['idempotency-key'];
    if (key === undefined || !request.principal) return handler.call(this, request, reply);
    if (!isValidIdempotencyKey(key)) {
      throw new KoshError(
        'invalid_idempotency_key',
        'The Idempotency-Key header must be 1 to 255 printable ASCII characters.',
      );
    }
    const fingerprint = fingerprintOf(request);
    const result = await idempotency.execute(request.principal, key, fingerprint, mode, async (work) => {
      if (mode === 'atomic') request.services = servicesFor(work.db);
      else request.ids = work.ids;
      try {
        return await captureResponse(handler, this, request, reply);
      } finally {
        request.services = undefined;
        request.ids = undefined;
      }
    });
    const { status, headers, body } = result.response;
    reply.code(status).headers(headers);
    if (result.replayed) reply.header('Idempotent-Replayed', 'true');
    return reply.send(body);
  };
}

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

/** The onRoute hook that gives every applicable route the wrapper; register it before any route. */
export function registerIdempotency(
  app: { addHook(name: 'onRoute', hook: (route: RouteOptions) => void): unknown },
  idempotency: IdempotencyService,
  servicesFor: (tx: Db) => Services,
): void {
  app.addHook('onRoute', (route) => {
    if (!idempotencyApplies(route)) return;
    const mode = settingOf(route) === 'phased' ? 'phased' : 'atomic';
    route.handler = withIdempotency(route.handler, idempotency, servicesFor, mode);
    documentHeader(route);
  });
}
