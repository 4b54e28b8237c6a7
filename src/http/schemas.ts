import { type TSchema, Type } from 'typebox';

/** Shared pieces of route schemas. */

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      type: Type.String(),
      code: Type.String(),
      message: Type.String(),
      field: Type.Union([Type.String(), Type.Null()]),
      request_id: Type.String(),
    }),
  },
  { $id: 'Error', description: 'Every error, whatever the status.' },
);

/** Error responses a route may give, by status, all with the one envelope. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries([401, ...statuses].map((status) => [status, Type.Ref('Error')]));
}

/** Merchant key-value data: a flat object of at most 20 keys, scalar values, bounded lengths. */
export const Metadata = Type.Unsafe<Record<string, string | number | boolean | null>>({
  type: 'object',
  maxProperties: 20,
  propertyNames: { minLength: 1, maxLength: 40 },
  additionalProperties: {
    type: ['string', 'number', 'boolean', 'null'],
    maxLength: 500,
  },
  description:
    'Flat key-value data: at most 20 keys of at most 40 characters; values strings (≤ 500 characters), numbers, booleans or null.',
});

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
    cursor: Type.Optional(Type.String({ maxLength: 100, description: 'next_cursor of the previous page' })),
  },
  { additionalProperties: false },
);

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
 * or of the wrong type (415), and routes behind a key also too many requests (429).
 */
export function commonErrorStatuses(route: { method: string | string[]; config?: unknown }): number[] {
  const methods = [route.method].flat();
  const withBody = methods.some((method) => ['POST', 'PUT', 'PATCH'].includes(method));
  const auth = (route.config as { auth?: string } | undefined)?.auth;
  const keyed = auth !== undefined && auth !== 'none';
  return [400, 408, 431, 500, 503, ...(withBody ? [413, 415] : []), ...(keyed ? [401, 429] : [])];
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
