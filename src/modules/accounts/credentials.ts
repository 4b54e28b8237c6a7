import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Mode } from '../../domain/scope.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function randomToken(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return out;
}

/** Public key: names its mode (`key_test_…`, `key_live_…`), 24 random characters (120 bits). */
export function newApiKey(mode: Mode): string {
  return `key_${mode}_${randomToken(24)}`;
}

/** Secret: 32 random bytes (256 bits), shown once and stored only as a keyed hash. */
export function newSecretKey(mode: Mode): string {
  return `sk_${mode}_${randomBytes(32).toString('base64url')}`;
}

/** An api_key as Kosh writes them; anything else (a NUL, a space, other letters) is no key at all. */
const API_KEY = /^key_(?:test|live)_[A-Za-z0-9]{1,55}$/;

/** The mode an api_key is for; undefined when it is not one Kosh could have issued. */
export function modeOfApiKey(apiKey: string): Mode | undefined {
  if (!API_KEY.test(apiKey)) return undefined;
  return apiKey.startsWith('key_test_') ? 'test' : 'live';
}

export function hashSecret(pepper: string, secret: string): Buffer {
  return createHmac('sha256', pepper).update(secret, 'utf8').digest();
}

export function secretMatches(pepper: string, secret: string, storedHash: Buffer): boolean {
  const candidate = hashSecret(pepper, secret);
  return candidate.length === storedHash.length && timingSafeEqual(candidate, storedHash);
}

/**
 * The bytes of a secret already verified against its HMAC, for the in-memory key cache only: a
 * cached request compares them in constant time instead of recomputing the HMAC. A digest was
 * tried first; hashing cost about a tenth of a cached request's CPU (docs/performance.md).
 */
export function verifiedSecret(secret: string): Buffer {
  return Buffer.from(secret, 'utf8');
}

export function verifiedSecretMatches(secret: string, verified: Buffer): boolean {
  const candidate = Buffer.from(secret, 'utf8');
  return candidate.length === verified.length && timingSafeEqual(candidate, verified);
}

export function newPepper(): string {
  return randomBytes(32).toString('base64url');
}
