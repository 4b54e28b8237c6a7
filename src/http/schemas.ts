import type { RouteOptions } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { ERROR_CATALOGUE, type ErrorCode, type ErrorType } from '../domain/errors.js';
import type { Metadata as MetadataValue } from '../domain/metadata.js';
import { idempotencyApplies } from './idempotency.js';

/** Shared pieces of route schemas. */

/**
 * `true` only when A and B are the same type. A module's schemas file checks each body, query and
 * response type against the domain type its service takes or returns
 * (`const _order: Same<Static<typeof Order>, OrderView> = true;`), so that a schema change the
 * domain types do not follow fails the typecheck instead of drifting apart.
 */
export type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : never;

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      type: Type.Unsafe<ErrorType>({
        type: 'string',
        enum: [...new Set(Object.values(ERROR_CATALOGUE).map((entry) => entry.type))],
        description: 'Who has to act',
      }),
      code: Type.Unsafe<ErrorCode>({
        type: 'string',
        enum: Object.keys(ERROR_CATALOGUE),
        description: 'Stable: branch on it, never on message',
      }),
      message: Type.String(),
      field: Type.Union([Type.String(), Type.Null()], { description: 'The offending field, or null' }),
      request_id: Type.String({ description: 'Equals the X-Request-Id header' }),
      doc_url: Type.String({ description: "The code's entry in the error reference" }),
    }),
  },
  { $id: 'Error', description: 'Every error, whatever the status.' },
);

/** Error responses a route may give, by status, all with the one envelope. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries([401, ...statuses].map((status) => [status, Type.Ref('Error')]));
}

/** Merchant key-value data: a flat object of at most 20 keys, scalar values, bounded lengths. */
export const Metadata = Type.Unsafe<MetadataValue>({
  type: 'object',
  maxProperties: 20,
  propertyNames: { minLength: 1, maxLength: 40 },
  additionalProperties: {
    type: ['string', 'number', 'boolean', 'null'],
    maxLength: 500,
    // A JSON number is read as a double: beyond ±(2^53 − 1) an integer would be stored rounded.
    minimum: -Number.MAX_SAFE_INTEGER,
    maximum: Number.MAX_SAFE_INTEGER,
  },
  description:
    'Flat key-value data: at most 20 keys of at most 40 characters; values strings (≤ 500 characters), numbers within ±9007199254740991 (send larger or exact decimal values as strings), booleans or null.',
});

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
    cursor: Type.Optional(Type.String({ maxLength: 100, description: 'next_cursor of the previous page' })),
  },
  { additionalProperties: false },
);

/** A time filter of a list: Unix seconds; `from` ≤ created_at < `to`. */
const UnixSeconds = (description: string) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: 253_402_300_799, description }));

/** The list query with filters of its own (each checked like the rest: unknown parameters are refused). */
export function filteredListQuery<P extends Record<string, TSchema>>(filters: P) {
  return Type.Object({ ...ListQuery.properties, ...filters }, { additionalProperties: false });
}

/** `from` and `to` filters of a list: Unix seconds, `from` ≤ created_at < `to`. */
export const CreatedBetween = {
  from: UnixSeconds('Only objects created at or after this time (Unix seconds)'),
  to: UnixSeconds('Only objects created before this time (Unix seconds)'),
};

/** An enum query parameter (a wrong value is answered with the allowed ones). */
/** A value that is one of `values` (a status list declared once, in its module). */
export function oneOf<T extends string>(values: readonly T[]) {
  // The same schema as a union of literals written out; typed as `T` (a union over an array of
  // literals would type as never).
  return Type.Unsafe<T>(Type.Union(values.map((value) => Type.Literal(value))));
}

export function enumParameter<T extends string>(values: readonly T[], description: string) {
  return Type.Optional(Type.Unsafe<T>({ type: 'string', enum: [...values], description }));
}

export function listOf<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  });
}

export const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

/**
 * The statuses any route can answer whatever it does (docs/errors.md): a malformed URL or request
 * (400), a request not received in time (408), headers too large (431), Kosh's own failure (500)
 * and a database or provider that cannot be reached (503); routes with a body also too large (413)
 * or of the wrong type (415), routes behind a key also too many requests (429), and routes that
 * honour Idempotency-Key also a key still in use (409) or used with another request (422).
 */
export function commonErrorStatuses(route: { method: string | string[]; config?: unknown }): number[] {
  const methods = [route.method].flat();
  const withBody = methods.some((method) => ['POST', 'PUT', 'PATCH'].includes(method));
  const auth = (route.config as { auth?: string } | undefined)?.auth;
  const keyed = auth !== undefined && auth !== 'none';
  // A route that honours Idempotency-Key also answers a key in use (409) or reused (422).
  const idempotent = keyed && idempotencyApplies(route as Pick<RouteOptions, 'method' | 'config'>);
  return [
    400,
    408,
    431,
    500,
    503,
    ...(withBody ? [413, 415] : []),
    ...(keyed ? [401, 429] : []),
    ...(idempotent ? [409, 422] : []),
  ];
}

/** Adds the common error statuses to a route's documented responses (an onRoute hook). */
export function documentCommonErrors(route: {
  method: string | string[];
  config?: unknown;
  schema?: unknown;
}): void {
  const schema = route.schema as { hide?: boolean; response?: Record<string, unknown> } | undefined;
  if (!schema || schema.hide || !schema.response) return;
  for (const status of commonErrorStatuses(route)) {
    schema.response[status] ??= Type.Ref('Error');
  }
}
