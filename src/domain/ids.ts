import { randomBytes } from 'node:crypto';

/** Crockford base32, lowercase: sortable, no ambiguous letters. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdPrefix =
  | 'order'
  | 'pay'
  | 'mid'
  | 'ptr'
  | 'evt'
  | 'whk'
  | 'msg'
  | 'doc'
  | 'vpa'
  | 'key'
  | 'att';

export interface IdGenerator {
  next(prefix: IdPrefix): string;
}

/**
 * `<prefix>_` + 10 characters of millisecond time + 16 characters (80 bits) of randomness.
 * Ids created later sort after earlier ones, so B-tree inserts stay local and ids serve as
 * keyset-pagination cursors.
 */
export function createIdGenerator(now: () => number = Date.now): IdGenerator {
  return {
    next(prefix) {
      return `${prefix}_${encodeTime(now())}${encodeRandom(randomBytes(10))}`;
    },
  };
}

function encodeTime(ms: number): string {
  let out = '';
  let value = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[value % 32] + out;
    value = Math.floor(value / 32);
  }
  return out;
}

function encodeRandom(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let buffer = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

/** A loose shape check so malformed ids can be rejected before they reach SQL. */
export function looksLikeId(prefix: IdPrefix, value: string): boolean {
  return (
    value.length === prefix.length + 27 &&
    value.startsWith(`${prefix}_`) &&
    /^[0-9a-z]+$/.test(value.slice(prefix.length + 1))
  );
}
