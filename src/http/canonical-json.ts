import { KoshError } from '../domain/errors.js';

/** Deeper than any body Kosh accepts; stops hostile nesting before it exhausts the stack. */
const MAX_DEPTH = 32;

/**
 * JSON with object keys sorted at every level, so two bodies that mean the same thing (keys in
 * another order, or a form body parsed to the same values) give the same text.
 */
export function canonicalJson(value: unknown, depth = 0): string {
  if (depth > MAX_DEPTH) throw new KoshError('invalid_body', 'The request body is nested too deeply.');
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item, depth + 1)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item, depth + 1)}`);
  return `{${entries.join(',')}}`;
}
