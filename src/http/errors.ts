import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CATALOGUE, type ErrorCode, KoshError } from '../domain/errors.js';
import { errorDocUrl } from './error-docs.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The service's public base URL: errors link to their documentation under it. */
    koshPublicUrl: string;
  }
}

/** Fields a client may never set: Kosh owns them. Naming them gets `server_owned_field`, not `unknown_field`. */
export const SERVER_OWNED_FIELDS = new Set([
  'id',
  'entity',
  'status',
  'amount_paid',
  'amount_pending',
  'created_at',
  'updated_at',
  'account_id',
  'mode',
  'payment_id',
  'bank_details',
  'return_method',
  'secret',
  'error_code',
  'error_reason',
  'captured_at',
  'processed_at',
  'amount_refunded',
  'refund_status',
]);

export interface ErrorBody {
  error: {
    type: string;
    code: ErrorCode;
    message: string;
    field: string | null;
    request_id: string;
    doc_url: string;
  };
}

export function errorBody(error: KoshError, requestId: string, publicUrl: string): ErrorBody {
  const entry = ERROR_CATALOGUE[error.code];
  // A 5xx never echoes an internal message, only the catalogue's text.
  const message = entry.status >= 500 && error.code === 'internal_error' ? entry.message : error.message;
  return {
    error: {
      type: entry.type,
      code: error.code,
      message,
      field: error.field ?? null,
      request_id: requestId,
      doc_url: errorDocUrl(publicUrl, error.code),
    },
  };
}

export function sendError(reply: FastifyReply, error: KoshError): FastifyReply {
  const status = ERROR_CATALOGUE[error.code].status;
  if (status === 401) reply.header('WWW-Authenticate', 'Basic realm="kosh", charset="UTF-8"');
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send(errorBody(error, String(reply.request.id), reply.server.koshPublicUrl));
}

interface AjvError {
  keyword: string;
  instancePath: string;
  propertyName?: string;
  message?: string;
  params: Record<string, unknown>;
}

function fieldPath(instancePath: string, extra?: string): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (extra !== undefined) parts.push(extra);
  return parts.join('.');
}

/** What a value that misses a pattern is told, where the pattern has better words than "format". */
const PATTERN_WORDS = new Map<string, string>();

/** Names what a schema pattern accepts, for the error a value that misses it gets. */
export function describePattern(pattern: string, words: string): void {
  PATTERN_WORDS.set(pattern, words);
}

/** Turns the first schema violation into one precise, caller-facing error. */
export function validationError(errors: AjvError[], context: string): KoshError {
  const priority = (error: AjvError) =>
    error.keyword === 'additionalProperties' ? 0 : error.keyword === 'required' ? 1 : 2;
  const first = [...errors].sort((a, b) => priority(a) - priority(b))[0];
  const where =
    context === 'querystring' ? 'query parameter' : context === 'params' ? 'path parameter' : 'field';
  if (!first) return new KoshError('invalid_body');
  if (first.keyword === 'required') {
    const field = fieldPath(first.instancePath, String(first.params.missingProperty));
    return new KoshError('missing_field', `The ${where} '${field}' is required.`, field);
  }
  if (first.keyword === 'additionalProperties') {
    const field = fieldPath(first.instancePath, String(first.params.additionalProperty));
    // Only a body sets fields; a query parameter of the same name is a filter that does not exist.
    if (
      context === 'body' &&
      first.instancePath === '' &&
      SERVER_OWNED_FIELDS.has(String(first.params.additionalProperty))
    ) {
      return new KoshError(
        'server_owned_field',
        `The ${where} '${field}' is set by Kosh and cannot be sent.`,
        field,
      );
    }
    return new KoshError('unknown_field', `Unknown ${where} '${field}'; check its spelling.`, field);
  }
  if (first.keyword === 'type' && first.instancePath === '' && context === 'body') {
    return new KoshError('invalid_body', 'The request body must be an object.');
  }
  const field = fieldPath(first.instancePath);
  // A key of an object that breaks the rule for keys (`propertyNames`): the validator reports the key.
  const detail =
    first.propertyName === undefined
      ? (anyOfConstants(errors, first) ?? describeViolation(first))
      : `has a key '${shortened(first.propertyName)}' that ${describeViolation(first)}`;
  return new KoshError('invalid_field', `The ${where} '${field}' ${detail}.`, field || undefined);
}

/**
 * A value that is none of a union's literals (`Type.Union([Type.Literal('a'), …])`): the validator
 * reports one `const` violation per literal, then the `anyOf`; the caller is told every allowed value,
 * not only the first.
 */
function anyOfConstants(errors: AjvError[], first: AjvError): string | undefined {
  if (first.keyword !== 'const') return undefined;
  const allowed = errors
    .filter((error) => error.keyword === 'const' && error.instancePath === first.instancePath)
    .map((error) => `'${String(error.params.allowedValue)}'`);
  return allowed.length > 1 ? `must be one of ${allowed.join(', ')}` : undefined;
}

/** A caller's text quoted in a message: never more than 40 characters of it. */
function shortened(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  null: 'null',
  object: 'an object',
  array: 'an array',
};

function oneOf(words: string[]): string {
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

/**
 * A schema violation in Kosh's words: the validator's own wording ("must NOT have more than 40
 * characters", "must be string,number,boolean,null") never reaches a caller.
 */
export function describeViolation(error: AjvError): string {
  const { params } = error;
  const limit = Number(params.limit);
  switch (error.keyword) {
    case 'type': {
      const types = Array.isArray(params.type) ? params.type : String(params.type).split(',');
      return `must be ${oneOf(types.map((type) => TYPE_NAMES[String(type)] ?? String(type)))}`;
    }
    case 'enum':
      return Array.isArray(params.allowedValues)
        ? `must be one of ${params.allowedValues.map((value) => `'${value}'`).join(', ')}`
        : 'is not one of the allowed values';
    case 'const':
      return `must be '${String(params.allowedValue)}'`;
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must be at least ${limit} characters long`;
    case 'maxLength':
      return `must be at most ${limit} characters long`;
    case 'minimum':
      return `must be at least ${limit}`;
    case 'maximum':
      return `must be at most ${limit}`;
    case 'exclusiveMinimum':
      return `must be greater than ${limit}`;
    case 'exclusiveMaximum':
      return `must be less than ${limit}`;
    case 'multipleOf':
      return `must be a multiple of ${String(params.multipleOf)}`;
    case 'pattern':
      return PATTERN_WORDS.get(String(params.pattern)) ?? 'is not in the expected format';
    case 'format':
      return `must be a valid ${String(params.format).replace(/-/g, ' ')}`;
    case 'minProperties':
      return `must have at least ${limit} ${limit === 1 ? 'key' : 'keys'}`;
    case 'maxProperties':
      return `must have at most ${limit} keys`;
    case 'minItems':
      return `must have at least ${limit} ${limit === 1 ? 'item' : 'items'}`;
    case 'maxItems':
      return `must have at most ${limit} items`;
    case 'uniqueItems':
      return 'must not repeat an item';
    case 'propertyNames':
      return 'has a key that is not allowed';
    case 'anyOf':
    case 'oneOf':
      return 'does not match any of the allowed forms';
    default:
      return 'is invalid';
  }
}

/** Maps anything thrown while handling a request to the one error envelope. */
export function toKoshError(error: FastifyError & { validationContext?: string }): KoshError {
  if (error instanceof KoshError) return error;
  if (error.validation)
    return validationError(error.validation as AjvError[], error.validationContext ?? 'body');
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new KoshError('body_too_large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new KoshError(error.statusCode === 415 ? 'unsupported_media_type' : 'invalid_body');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new KoshError('invalid_json');
    // A method whose body Fastify requires (QUERY), sent without one: no route of Kosh takes it.
    case 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE':
      return new KoshError(
        'malformed_request',
        'This method needs a Content-Type header, and no endpoint takes it.',
      );
  }
  if (error instanceof SyntaxError || error.statusCode === 400) return new KoshError('invalid_json');
  if (error.statusCode === 413) return new KoshError('body_too_large');
  if (error.statusCode === 415) return new KoshError('unsupported_media_type');
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
    return new KoshError('invalid_body');
  return new KoshError('internal_error');
}

export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const kosh = toKoshError(error);
  const status = ERROR_CATALOGUE[kosh.code].status;
  if (kosh.code === 'service_unavailable') {
    // An outage answers every request 503: one line each with its reason, not a stack trace each.
    request.log.warn(
      { code: kosh.code, reason: kosh.cause ?? kosh.message },
      'request refused: service unavailable',
    );
  } else if (status >= 500) request.log.error({ err: error }, 'request failed');
  return sendError(reply, kosh);
}

/** The errors Fastify raises before a request reaches a route, in the catalogue's words. */
export function frameworkError(error: FastifyError): KoshError {
  if (error.code === 'FST_ERR_BAD_URL') {
    return new KoshError('invalid_url', 'The URL is not valid: a percent-encoded sequence is malformed.');
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return new KoshError('resource_not_found', 'No object has an id that long.');
  }
  return new KoshError('internal_error');
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * What Node's HTTP parser could not read (malformed request line or headers, headers too large, a
 * request not received in time) never reaches Fastify: it is answered here, on the raw socket,
 * with the envelope and a request id of its own, and the connection is closed.
 */
export function clientErrorAnswerer(publicUrl: string) {
  return (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(error, socket, publicUrl);
}

function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, publicUrl: string): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const code =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'headers_too_large'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'request_timeout'
        : 'malformed_request';
  const status = ERROR_CATALOGUE[code].status;
  const requestId = `req_client_${randomBytes(8).toString('hex')}`;
  const body = JSON.stringify(errorBody(new KoshError(code), requestId, publicUrl));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      'X-Content-Type-Options: nosniff\r\n' +
      'Cache-Control: no-store\r\n' +
      `Connection: close\r\n\r\n${body}`,
  );
}
