import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets Kosh must be able to read back (webhook signing secrets, return signing secrets, stored
 * Idempotency-Key answers, provider credentials) are kept encrypted: AES-256-GCM under the
 * operator's key, with associated data that binds each ciphertext to its place (an endpoint's id,
 * an account and mode), so a ciphertext copied to another row does not decrypt. Each ciphertext
 * names the key it was made with, so keys can be rotated (docs/security.md).
 *
 * Text form: `enc:v1:<key id>:<base64url(iv ‖ tag ‖ ciphertext)>`.
 */

const PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class KeyRingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyRingError';
  }
}

/** A key's public name: the first 8 hex digits of its SHA-256 (never the key itself). */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

export interface KeyRing {
  /** The id of the key new ciphertexts are made with. */
  readonly currentKeyId: string;
  encrypt(plaintext: string | Buffer, context: string): string;
  /** Decrypts a ciphertext made under any key of the ring; throws when it was altered or moved. */
  decrypt(token: string, context: string): Buffer;
  decryptText(token: string, context: string): string;
  /**
   * The plaintext of a stored value: decrypted when encrypted, as it is when it was stored before
   * encryption existed (a row written by an older process during an upgrade, until it is sealed).
   */
  reveal(value: string, context: string): string;
  /** The id of the key a ciphertext names (whether or not this ring holds it). */
  keyIdOf(token: string): string;
  /** True when this ring holds the key a ciphertext names. */
  holdsKeyOf(token: string): boolean;
  /** True for a value this ring's current key made (so rotation can skip it). */
  isCurrent(token: string): boolean;
  isEncrypted(value: string): boolean;
}

/** `current` encrypts; `previous` keys only decrypt (what a rotation has not reached yet). */
export function createKeyRing(current: Buffer, previous: Buffer[] = []): KeyRing {
  for (const key of [current, ...previous]) {
    if (key.length !== 32) throw new KeyRingError('An encryption key must be 32 bytes.');
  }
  const keys = new Map<string, Buffer>();
  for (const key of [current, ...previous]) keys.set(keyIdOf(key), key);
  const currentKeyId = keyIdOf(current);

  function parse(token: string): { keyId: string; sealed: Buffer } {
    if (!token.startsWith(PREFIX)) throw new KeyRingError('The value is not encrypted.');
    const rest = token.slice(PREFIX.length);
    const colon = rest.indexOf(':');
    if (colon <= 0) throw new KeyRingError('The encrypted value is malformed.');
    return { keyId: rest.slice(0, colon), sealed: Buffer.from(rest.slice(colon + 1), 'base64url') };
  }

  function decrypt(token: string, context: string): Buffer {
    const { keyId, sealed } = parse(token);
    const key = keys.get(keyId);
    if (!key) {
      throw new KeyRingError(
        `The value was encrypted with key ${keyId}, which is not configured (KOSH_ENCRYPTION_KEY, KOSH_ENCRYPTION_PREVIOUS_KEYS).`,
      );
    }
    if (sealed.length < IV_BYTES + TAG_BYTES) throw new KeyRingError('The encrypted value is malformed.');
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    } catch {
      throw new KeyRingError('The encrypted value does not belong here or was altered.');
    }
  }

  return {
    currentKeyId,
    encrypt(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const data = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return `${PREFIX}${currentKeyId}:${Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64url')}`;
    },
    decrypt,
    decryptText: (token, context) => decrypt(token, context).toString('utf8'),
    reveal: (value, context) => (value.startsWith(PREFIX) ? decrypt(value, context).toString('utf8') : value),
    keyIdOf: (token) => parse(token).keyId,
    holdsKeyOf: (token) => keys.has(parse(token).keyId),
    isCurrent: (token) => token.startsWith(`${PREFIX}${currentKeyId}:`),
    isEncrypted: (value) => value.startsWith(PREFIX),
  };
}

/** Parses a key given as base64 (standard or URL-safe) of exactly 32 bytes. */
export function parseKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/_-]{42,44}={0,2}$/.test(trimmed)) return undefined;
  const key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return key.length === 32 ? key : undefined;
}

export function newKey(): Buffer {
  return randomBytes(32);
}
