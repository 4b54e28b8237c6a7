import type { FastifyInstance, FastifyRequest } from 'fastify';
import qs from 'qs';
import { KoshError } from '../domain/errors.js';

const FORM_TYPE = 'application/x-www-form-urlencoded';

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
    try {
      const parsed = qs.parse(body as string, {
        depth: 1,
        parameterLimit: 1_000,
        arrayLimit: 0,
        allowPrototypes: false,
        strictDepth: true,
        throwOnLimitExceeded: true,
      });
      done(null, parsed);
    } catch {
      done(
        new KoshError('invalid_body', 'The form body could not be parsed (too deep or too many fields).'),
        undefined,
      );
    }
  });
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

/** Form and query values arrive as strings: coerce the top-level ones the schema declares as integer or boolean. */
function coerceObject(target: unknown, schema: SchemaLike | undefined): void {
  if (!target || typeof target !== 'object' || !schema?.properties) return;
  const record = target as Record<string, unknown>;
  for (const [key, value] of Object.entries(record)) {
    record[key] = coerceValue(value, schema.properties[key]);
  }
}

export function coerceToSchema(request: FastifyRequest): void {
  const schema = request.routeOptions.schema as { body?: SchemaLike; querystring?: SchemaLike } | undefined;
  if (!schema) return;
  coerceObject(request.query, schema.querystring);
  if (request.headers['content-type']?.startsWith(FORM_TYPE)) coerceObject(request.body, schema.body);
}
