import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Dashboard passwords are stored as scrypt hashes (RFC 7914): `scrypt$N$r$p$salt$hash`, salt and
 * hash in base64url. By default N = 2^17, r = 8, p = 1, OWASP's minimum for scrypt (128 MiB of
 * memory per check); KOSH_DASHBOARD_PASSWORD_COST sets log2(N). The parameters travel with the
 * hash, so the cost can be raised later without invalidating stored passwords.
 */
export const DEFAULT_LOG2_COST = 17;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_LENGTH = 32;
/** Stored hashes are checked with their own parameters, up to this cost. */
const MAX_LOG2_COST = 20;

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFKC'),
      salt,
      KEY_LENGTH,
      // scrypt needs 128·N·r bytes; room for that and a little more.
      { N: n, r, p, maxmem: 256 * n * r },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}

export async function hashPassword(password: string, log2Cost = DEFAULT_LOG2_COST): Promise<string> {
  const salt = randomBytes(16);
  const n = 2 ** log2Cost;
  const key = await derive(password, salt, n, BLOCK_SIZE, PARALLELISM);
  return `scrypt$${n}$${BLOCK_SIZE}$${PARALLELISM}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function passwordMatches(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash || Number(n) > 2 ** MAX_LOG2_COST) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash of a password nobody has, checked when the email is unknown so both cases take as long. */
const decoys = new Map<number, Promise<string>>();
export function decoyHash(log2Cost: number): Promise<string> {
  let decoy = decoys.get(log2Cost);
  if (!decoy) {
    decoy = hashPassword(randomBytes(16).toString('base64url'), log2Cost);
    decoys.set(log2Cost, decoy);
  }
  return decoy;
}

/** A password for a generated login (the sandbox's): 24 characters from 144 random bits. */
export function newPassword(): string {
  return randomBytes(18).toString('base64url');
}
