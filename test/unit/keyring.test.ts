import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createKeyRing, KeyRingError, keyIdOf, newKey, parseKey } from '../../src/security/keyring.js';

describe('the key ring', () => {
  const key = newKey();
  const ring = createKeyRing(key);

  it('encrypts with AES-256-GCM, naming the key, and decrypts only in the same place', () => {
    const token = ring.encrypt('whsec_secret', 'webhook_endpoint:whk_1');
    expect(token).toMatch(new RegExp(`^enc:v1:${keyIdOf(key)}:[A-Za-z0-9_-]+$`));
    expect(token).not.toContain('whsec_secret');
    expect(ring.decryptText(token, 'webhook_endpoint:whk_1')).toBe('whsec_secret');
    // Copied to another row, it does not decrypt.
    expect(() => ring.decrypt(token, 'webhook_endpoint:whk_2')).toThrow(KeyRingError);
    // Two encryptions of one secret differ (a fresh IV each time).
    expect(ring.encrypt('whsec_secret', 'x')).not.toBe(ring.encrypt('whsec_secret', 'x'));
  });

  it('refuses an altered ciphertext and a value it did not encrypt', () => {
    const token = ring.encrypt('secret', 'c');
    const body = token.slice(token.lastIndexOf(':') + 1);
    const flipped = `${body.slice(0, -2)}${body.at(-2) === 'A' ? 'B' : 'A'}${body.at(-1)}`;
    expect(() => ring.decrypt(token.replace(body, flipped), 'c')).toThrow(KeyRingError);
    expect(() => ring.decrypt('plain', 'c')).toThrow(KeyRingError);
    expect(ring.isEncrypted('plain')).toBe(false);
  });

  it('rotates: a ring with the new key and the old one reads both, and makes only new ones', () => {
    const old = ring.encrypt('rss_1', 'c');
    const rotated = createKeyRing(newKey(), [key]);
    expect(rotated.decryptText(old, 'c')).toBe('rss_1');
    expect(rotated.isCurrent(old)).toBe(false);
    expect(rotated.isCurrent(rotated.encrypt('rss_1', 'c'))).toBe(true);
    // Without the old key, the old value cannot be read, and the error names the key.
    expect(() => createKeyRing(newKey()).decrypt(old, 'c')).toThrow(keyIdOf(key));
  });

  it('reads keys as 32 bytes of base64 only', () => {
    expect(parseKey(key.toString('base64'))?.equals(key)).toBe(true);
    expect(parseKey(key.toString('base64url'))?.equals(key)).toBe(true);
    expect(parseKey('c2hvcnQ=')).toBeUndefined();
    expect(parseKey(Buffer.alloc(31).toString('base64'))).toBeUndefined();
    expect(() => createKeyRing(Buffer.alloc(16))).toThrow(KeyRingError);
  });

  it('is required with PostgreSQL, and refused when malformed', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://localhost/kosh' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://localhost/kosh' })).toThrow(/KOSH_ENCRYPTION_KEY/);
    expect(() => loadConfig({ KOSH_ENCRYPTION_KEY: 'not a key' })).toThrow(/KOSH_ENCRYPTION_KEY/);
    expect(() => loadConfig({ KOSH_ENCRYPTION_PREVIOUS_KEYS: 'x' })).toThrow(/KOSH_ENCRYPTION_PREVIOUS_KEYS/);
    const config = loadConfig({ KOSH_ENCRYPTION_KEY: key.toString('base64') });
    expect(config.encryptionKey?.equals(key)).toBe(true);
    // The embedded database works without one (a key is generated into its data folder).
    expect(loadConfig({}).encryptionKey).toBeUndefined();
  });
});
