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
