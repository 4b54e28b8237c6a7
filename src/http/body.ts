import type { FastifyInstance, FastifyRequest } from 'fastify';
import qs from 'qs';
import { KoshError } from '../domain/errors.js';

const FORM_TYPE = 'application/x-www-form-urlencoded';

/**
 * How a form body is read: bracket keys one level deep (`metadata[k]=v`), no arrays, at most 1,000
 * fields, and objects without a prototype, so that keys such as `constructor` are plain data, never
 * dropped. Too deep or too many is an error, not a silent cut.
 */
export const FORM_PARSE_OPTIONS = {
  depth: 1,
  parameterLimit: 1_000,
  arrayLimit: 0,
  plainObjects: true,
  allowPrototypes: true,
  strictDepth: true,
  throwOnLimitExceeded: true,
} as const satisfies qs.IParseOptions;

/**
 * Form bodies with bracket nesting (`metadata[k]=v`), at most one level deep. `qs` ignores
 * `__proto__`-style keys. Values stay strings; `coerceToSchema` turns exact integer strings into
 * integers for the fields whose schema says integer.
 */
export function registerFormParser(app: FastifyInstance): void {
  // Only JSON and forms are API bodies; Fastify's built-in text/plain parser would turn a stray
  // text body into a confusing schema error instead of a clear 415.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser(FORM_TYPE, { parseAs: 'string' }, (_request, body, done) => {
    if (/^\s*[[{]/.test(body as string)) {
      done(
        new KoshError(
          'invalid_body',
          'The body looks like JSON but was sent as a form (Content-Type: application/x-www-form-urlencoded, ' +
            "what curl -d sends by default): send it with the header 'Content-Type: application/json'.",
        ),
        undefined,
      );
      return;
    }
    const forbidden = prototypeKey(body as string);
    if (forbidden) {
      done(new KoshError('unknown_field', `Unknown field '${forbidden}'.`, forbidden), undefined);
      return;
    }
    try {
      const parsed = qs.parse(body as string, FORM_PARSE_OPTIONS);
      done(null, parsed);
    } catch {
      done(
        new KoshError('invalid_body', 'The form body could not be parsed (too deep or too many fields).'),
        undefined,
      );
    }
  });
}

/** qs drops `__proto__` keys silently; Kosh refuses them like any unknown field instead. */
function prototypeKey(body: string): string | undefined {
  for (const pair of body.split('&')) {
    const raw = (pair.split('=')[0] ?? '').replace(/\+/g, ' ');
    let key: string;
    try {
      key = decodeURIComponent(raw);
    } catch {
      key = raw;
    }
    if (key.includes('__proto__')) return key.replace(/\[/g, '.').replace(/\]/g, '');
  }
  return undefined;
}

/**
 * NUL cannot be stored in PostgreSQL text or jsonb, and an unpaired UTF-16 surrogate cannot be
 * encoded as UTF-8 (it would turn into U+FFFD): both are refused up front, naming the field,
 * instead of failing in the database or being altered silently.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching NUL is the point.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const MAX_SCAN_DEPTH = 32;

function unstorablePath(value: unknown, path: string[], depth = 0): string[] | undefined {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? path : undefined;
  if (!value || typeof value !== 'object' || depth > MAX_SCAN_DEPTH) return undefined;
  for (const [key, item] of Object.entries(value)) {
    if (UNSTORABLE.test(key)) return path;
    const found = unstorablePath(item, [...path, key], depth + 1);
    if (found) return found;
  }
  return undefined;
}

export function refuseUnstorableText(request: FastifyRequest): void {
  const parts = [
    ['path parameter', request.params],
    ['query parameter', request.query],
    ['field', request.body],
  ] as const;
  for (const [where, value] of parts) {
    const found = unstorablePath(value, []);
    if (found) {
      const field = found.join('.');
      throw new KoshError(
        'invalid_field',
        `The ${where} '${field}' contains a character that is not allowed (NUL or an unpaired surrogate).`,
        field || undefined,
      );
    }
  }
}

interface SchemaLike {
  type?: string | string[];
  properties?: Record<string, SchemaLike>;
  anyOf?: SchemaLike[];
}

function coerceValue(value: unknown, schema: SchemaLike | undefined): unknown {
  if (typeof value !== 'string' || !schema) return value;
  const types = new Set([schema.type, ...(schema.anyOf ?? []).map((s) => s.type)].flat().filter(Boolean));
  if (types.has('string')) return value;
  if ((types.has('integer') || types.has('number')) && /^-?(0|[1-9]\d{0,15})$/.test(value))
    return Number(value);
  if (types.has('boolean') && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

/**
 * Form and query values arrive as strings: coerce the ones the schema declares as integer or
 * boolean, at the top level and one level down (`upi[expiry_minutes]=15`).
 */
function coerceObject(target: unknown, schema: SchemaLike | undefined, depth = 0): void {
  if (!target || typeof target !== 'object' || !schema?.properties) return;
  const record = target as Record<string, unknown>;
  for (const [key, value] of Object.entries(record)) {
    const property = Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
    if (depth === 0 && value && typeof value === 'object') coerceObject(value, property, depth + 1);
    else record[key] = coerceValue(value, property);
  }
}

export function coerceToSchema(request: FastifyRequest): void {
  const schema = request.routeOptions.schema as { body?: SchemaLike; querystring?: SchemaLike } | undefined;
  if (!schema) return;
  coerceObject(request.query, schema.querystring);
  // A POST without any body (e.g. rotate-secret, redeliver) is an empty object, so the schema
  // names what is missing instead of complaining that nothing was sent.
  if (
    request.body === undefined &&
    schema.body &&
    !request.headers['content-type']?.startsWith('multipart/')
  ) {
    request.body = {};
  }
  if (request.headers['content-type']?.startsWith(FORM_TYPE)) coerceObject(request.body, schema.body);
}
