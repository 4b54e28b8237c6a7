import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import qs from 'qs';
import { KoshError } from '../domain/errors.js';
import { sentMoreThanOnce } from './headers.js';
import {
  keyCount,
  keyEndsIn,
  pathOfLiteral,
  prototypeKeyPath,
  repeatedKeyPath,
  wholeNumberWrittenOtherwise,
} from './json-text.js';

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
  // qs keeps a value whose escapes are not UTF-8 (`caf%E9`, `%ZZ`) as its undecoded text; stored,
  // that is text the caller never sent. Such a value is refused instead.
  decoder(text: string) {
    try {
      return decodeURIComponent(text.replace(/\+/g, ' '));
    } catch {
      throw new MalformedEscape('malformed percent-escape');
    }
  },
} as const satisfies qs.IParseOptions;

/**
 * What the checks below read of the request's route. Fastify's `request.routeOptions` builds a new
 * object at each read, so the hook that runs them reads it once and hands it to each.
 */
export type RouteFacts = Pick<FastifyRequest['routeOptions'], 'schema' | 'url'>;

/** A form field or value whose percent-escapes do not decode to UTF-8. */
class MalformedEscape extends Error {}

/**
 * JSON bodies as Fastify reads them, with two refusals made clear instead of silent or vague:
 * bytes that are not UTF-8 (JSON's encoding; decoding them would turn them into U+FFFD and store
 * that) are `invalid_json`, and a `__proto__` or `constructor.prototype` key (refused wherever it
 * stands, as an object built from it could change a prototype) is `invalid_field` naming where.
 */
function registerJsonParser(app: FastifyInstance): void {
  // Fastify's own JSON parser (secure-json-parse), refusing `__proto__` and `constructor.prototype` keys.
  const parseSecureJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const encoded = encodingRefusal(request);
    if (encoded) {
      done(encoded);
      return;
    }
    const bytes = body as Buffer;
    // No body at all, whatever the header says, is no body (a POST whose body is optional, sent by a
    // client that labels every request JSON): the route's schema then names anything required.
    if (bytes.length === 0) {
      done(null, undefined);
      return;
    }
    if (!isUtf8(bytes)) {
      done(new KoshError('invalid_json', 'The request body is not valid UTF-8; send JSON encoded as UTF-8.'));
      return;
    }
    const text = bytes.toString('utf8');
    parseSecureJson(request, text, (error: Error | null, value?: unknown) => {
      if (!error) {
        // A key sent twice is read as its last value by JSON.parse: which one the caller meant is a
        // guess, so it is refused. Counting is cheap; the exact search runs only when the text has
        // more key-like `":` than the value has keys (a repeat, or a `":` inside a string).
        const repeated = keyEndsIn(text) > keyCount(value, 0) ? repeatedKeyPath(text) : undefined;
        if (repeated !== undefined) {
          done(repeatedField(repeated), undefined);
          return;
        }
        const written = wholeNumberWrittenOtherwise(text);
        if (written !== undefined) {
          const field = pathOfLiteral(text, written);
          done(
            new KoshError(
              'invalid_field',
              `${field || 'A number'} is written ${written}, which reads as the whole number ${Number(written)}: write whole numbers without a fraction or exponent (5000, not 5000.0 or 5e3).`,
              field || undefined,
            ),
            undefined,
          );
          return;
        }
        done(null, value);
        return;
      }
      const field = prototypeKeyPath(text);
      done(
        field === undefined
          ? error
          : new KoshError(
              'invalid_field',
              `The key '${field}' is not allowed: Kosh refuses '__proto__' and 'constructor.prototype' keys anywhere in a body.`,
              field,
            ),
      );
    });
  });
}

/**
 * Form bodies with bracket nesting (`metadata[k]=v`), at most one level deep. `qs` ignores
 * `__proto__`-style keys. Values stay strings; `coerceToSchema` turns exact integer strings into
 * integers for the fields whose schema says integer.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  registerJsonParser(app);
  // Only JSON and forms are API bodies; Fastify's built-in text/plain parser would turn a stray
  // text body into a confusing schema error instead of a clear 415.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser(FORM_TYPE, { parseAs: 'buffer' }, (request, bytes, done) => {
    const encoded = encodingRefusal(request);
    if (encoded) {
      done(encoded, undefined);
      return;
    }
    // Read as text, bytes that are not UTF-8 would become U+FFFD and be stored so: refused, as in JSON.
    if (!isUtf8(bytes as Buffer)) {
      done(
        new KoshError('invalid_body', 'The form body is not valid UTF-8; send it encoded as UTF-8.'),
        undefined,
      );
      return;
    }
    const body = (bytes as Buffer).toString('utf8');
    if (/^\s*[[{]/.test(body)) {
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
    const problem = formKeyProblem(body);
    if (problem) {
      done(
        problem.kind === 'prototype'
          ? new KoshError('unknown_field', `Unknown field '${problem.field}'.`, problem.field)
          : repeatedField(problem.field),
        undefined,
      );
      return;
    }
    try {
      const parsed = qs.parse(body, FORM_PARSE_OPTIONS);
      done(null, parsed);
    } catch (error) {
      if (error instanceof MalformedEscape) {
        // The text itself is not repeated: it may be a value the caller would not want in an answer.
        done(
          new KoshError(
            'invalid_body',
            'The form body has a percent-escape that is not UTF-8 (such as %E9 or %ZZ): encode each character as its UTF-8 bytes (é is %C3%A9).',
          ),
          undefined,
        );
        return;
      }
      done(
        new KoshError(
          'invalid_body',
          'The form body could not be read: a field is given both as a value and as an object or list ' +
            '(metadata=x with metadata[a]=y, or metadata[]=x), nested too deeply, or there are too many fields.',
        ),
        undefined,
      );
    }
  });
}

/**
 * What a body's headers say that Kosh will not read as sent: a compressed body (any
 * Content-Encoding but identity; never read as if it were text), a charset other than UTF-8, and a
 * Content-Type given twice.
 */
export function encodingRefusal(request: FastifyRequest): KoshError | undefined {
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined && !/^\s*identity\s*$/i.test(encoding)) {
    return new KoshError(
      'unsupported_media_type',
      `Content-Encoding '${clipped(encoding)}' is not accepted: send the body uncompressed.`,
    );
  }
  const type = request.headers['content-type'];
  const charset = type?.includes('charset') ? CHARSET.exec(type)?.[1] : undefined;
  // ASCII is UTF-8's first 128 characters: a body labelled so reads the same.
  if (charset !== undefined && !/^(utf-?8|us-ascii)$/i.test(charset)) {
    return new KoshError(
      'unsupported_media_type',
      `The charset '${clipped(charset)}' is not accepted: send the body as UTF-8 (charset=utf-8).`,
    );
  }
  // Node keeps the first of several; a proxy in front may have read another.
  if (sentMoreThanOnce(request.raw.rawHeaders, 'content-type')) {
    return new KoshError('invalid_body', 'Content-Type is given more than once; send it once.');
  }
  return undefined;
}

/** A Content-Type's charset parameter, quoted or not. */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

const clipped = (text: string) => (text.length > 40 ? `${text.slice(0, 40)}…` : text);

/**
 * An API route that declares no body refuses one, as a route that declares a body refuses the fields
 * it does not declare: `DELETE /v1/keys/…/` with `{"dry_run": true}` must not revoke the key while
 * ignoring what the caller thought it asked. An empty body, or an empty JSON object, is no body.
 */
export function refuseUndeclaredBody(request: FastifyRequest, route: RouteFacts): void {
  if (request.principal === undefined || (route.schema as { body?: unknown } | undefined)?.body) return;
  const body = request.body;
  if (body === undefined) {
    // A body Fastify read and found empty is no body. GET and HEAD bodies are not read at all: any
    // byte of one is refused.
    if (request.method !== 'GET' && request.method !== 'HEAD') return;
    const headers = request.headers;
    if (headers['transfer-encoding'] === undefined && Number(headers['content-length'] ?? 0) === 0) return;
    throw new KoshError('invalid_body', `${request.method} ${route.url} takes no request body.`);
  }
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const [name] = Object.keys(body);
    if (name === undefined) return;
    throw new KoshError(
      'unknown_field',
      `Unknown field '${name}': ${request.method} ${route.url} takes no request body.`,
      name,
    );
  }
  throw new KoshError('invalid_body', `${request.method} ${route.url} takes no request body.`);
}

/**
 * What qs would not read as sent: a `__proto__`-style key (qs drops it silently; Kosh refuses it like
 * any unknown field) or a field sent twice (which one counts would be a guess).
 */
function formKeyProblem(body: string): { kind: 'prototype' | 'repeated'; field: string } | undefined {
  const seen = new Set<string>();
  for (const pair of body.split('&')) {
    if (pair === '') continue;
    const raw = (pair.split('=')[0] ?? '').replace(/\+/g, ' ');
    let key: string;
    try {
      key = decodeURIComponent(raw);
    } catch {
      key = raw;
    }
    const field = key.replace(/\[/g, '.').replace(/\]/g, '');
    if (key.includes('__proto__')) return { kind: 'prototype', field };
    if (seen.has(field)) return { kind: 'repeated', field };
    seen.add(field);
  }
  return undefined;
}

function repeatedField(field: string): KoshError {
  return new KoshError(
    'invalid_field',
    `The field '${field}' appears more than once in the body; send it once.`,
    field,
  );
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

/**
 * An API route that declares no query parameters refuses any, as list routes refuse the ones they
 * do not declare: a parameter a caller thinks does something (`?expand=…`, `?amount=…` on a create)
 * must not be dropped silently. A parameter given twice (`?limit=1&limit=50`) is refused by name, as
 * a body field given twice is: no API parameter takes a list, and picking one would be a guess.
 * Only requests authenticated with a key are API requests; the customer's pages and providers'
 * returns keep their own rules.
 */
export function refuseUndeclaredQuery(request: FastifyRequest, route: RouteFacts): void {
  if (request.principal === undefined) return;
  const url = request.url;
  const start = url.indexOf('?');
  // A fragment is never sent to a server; Fastify would read what follows '#' as a query.
  if (url.includes('#')) {
    throw new KoshError('invalid_url', "The request's URL holds '#': send the path and the query only.");
  }
  if (start === -1) return;
  try {
    decodeURIComponent(url.slice(start + 1));
  } catch {
    throw new KoshError(
      'invalid_url',
      "The query string holds a '%' that is not the escape of UTF-8 bytes (write '%25' for a '%').",
    );
  }
  const query = request.query as Record<string, unknown>;
  if ((route.schema as { querystring?: unknown } | undefined)?.querystring) {
    for (const name in query) {
      if (Array.isArray(query[name])) {
        throw new KoshError('invalid_field', `The query parameter '${name}' is given more than once.`, name);
      }
    }
    return;
  }
  const [name] = Object.keys(query);
  if (name !== undefined) {
    throw new KoshError(
      'unknown_field',
      `Unknown query parameter '${name}'; this endpoint takes none.`,
      name,
    );
  }
}

interface SchemaLike {
  type?: string | string[];
  properties?: Record<string, SchemaLike>;
  /** A record's values (`Type.Record`): `netbanking[HDFC]=false`. */
  patternProperties?: Record<string, SchemaLike>;
  anyOf?: SchemaLike[];
}

/** The schema of one key of an object: a declared property, or the values of a record whose pattern it matches. */
function propertyOf(schema: SchemaLike, key: string): SchemaLike | undefined {
  if (schema.properties && Object.hasOwn(schema.properties, key)) return schema.properties[key];
  for (const pattern in schema.patternProperties) {
    if (new RegExp(pattern, 'u').test(key)) return schema.patternProperties[pattern];
  }
  return undefined;
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
  if (!target || typeof target !== 'object' || !(schema?.properties || schema?.patternProperties)) return;
  const record = target as Record<string, unknown>;
  for (const [key, value] of Object.entries(record)) {
    const property = propertyOf(schema, key);
    if (depth === 0 && value && typeof value === 'object') coerceObject(value, property, depth + 1);
    else record[key] = coerceValue(value, property);
  }
}

export function coerceToSchema(request: FastifyRequest, route: RouteFacts): void {
  const schema = route.schema as { body?: SchemaLike; querystring?: SchemaLike } | undefined;
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
