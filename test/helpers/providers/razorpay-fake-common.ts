import { createHmac, randomBytes } from 'node:crypto';

/**
 * What every part of the local Razorpay (test/helpers/providers/razorpay-fake.ts) shares: its ids,
 * its signatures, its error envelope and its request checks.
 */

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const newId = (prefix: string) =>
  `${prefix}_${[...randomBytes(14)].map((byte) => ID_ALPHABET[byte % ID_ALPHABET.length]).join('')}`;

export function hmac(secret: string, data: string): string {
  return createHmac('sha256', secret).update(data).digest('hex');
}

export type Answer = { status: number; body: unknown };

/** Razorpay's error envelope. */
export function error(
  status: number,
  description: string,
  options: { reason?: string; field?: string | null; code?: string; source?: string; step?: string } = {},
): Answer {
  return {
    status,
    body: {
      error: {
        code: options.code ?? 'BAD_REQUEST_ERROR',
        description,
        source: options.source ?? 'business',
        step: options.step ?? 'payment_initiation',
        reason: options.reason ?? 'input_validation_failed',
        metadata: {},
        field: options.field ?? null,
      },
    },
  };
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === 'object' && !Array.isArray(value);

/** A `notes` object: at most 15 string values of at most 256 characters. */
export function notesOf(value: unknown): Record<string, string> | undefined {
  if (value === undefined) return {};
  if (!isObject(value) || Object.keys(value).length > 15) return undefined;
  for (const item of Object.values(value))
    if (typeof item !== 'string' || item.length > 256) return undefined;
  return value as Record<string, string>;
}

export const extraField = (input: Record<string, unknown>, allowed: Set<string>) =>
  Object.keys(input).find((key) => !allowed.has(key));

/** A request body as Razorpay reads it: a JSON object, or its refusal. */
export function parseBody(body: string): { input: Record<string, unknown> } | { refused: Answer } {
  try {
    const input = JSON.parse(body);
    return isObject(input) ? { input } : { refused: error(400, 'The request body must be a JSON object.') };
  } catch {
    return { refused: error(400, 'The request body is not valid JSON.') };
  }
}
