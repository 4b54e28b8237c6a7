import { createHmac } from 'node:crypto';
import { secureRandomBytes } from './random.js';

/** Crockford base32, lowercase: sortable, no ambiguous letters. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdPrefix =
  | 'order'
  | 'pay'
  | 'rfnd'
  | 'ca'
  | 'mid'
  | 'ptr'
  | 'evt'
  | 'whk'
  | 'msg'
  | 'doc'
  | 'vpa'
  | 'key'
  | 'att'
  | 'req'
  | 'usr'
  | 'cs';

export interface IdGenerator {
  next(prefix: IdPrefix): string;
  /** Unpredictable bytes for a name that is not an id (a stored file's name): seeded ones repeat too. */
  bytes(size: number): Buffer;
}

/**
 * Prefixes whose ids sort in the order they were made within one process. The events of one
 * transaction (payment.pending, then payment.captured and order.paid) usually share a millisecond;
 * with a random suffix they would sort at random inside it, and the events list (keyset on id) and
 * webhook fan-out would show payment.captured before payment.pending. Only events: a counted suffix
 * can be guessed from its neighbour, and other ids must stay unpredictable (a payment id alone opens
 * its authentication page).
 */
export const MONOTONIC_PREFIXES: ReadonlySet<IdPrefix> = new Set<IdPrefix>(['evt']);

const RANDOM_BYTES = 10;
const RANDOM_CHARS = 16;
const RANDOM_MAX = (1n << 80n) - 1n;

/**
 * `<prefix>_` + 10 characters of millisecond time + 16 characters (80 bits) of randomness.
 * Ids created later sort after earlier ones, so B-tree inserts stay local and ids serve as
 * keyset-pagination cursors. Within one millisecond, ids of MONOTONIC_PREFIXES count up from the
 * previous one; all others are random there.
 */
export function createIdGenerator(
  now: () => number = Date.now,
  random: (size: number) => Buffer = secureRandomBytes,
): IdGenerator {
  const monotonic = new Map<IdPrefix, () => string>();
  return {
    next(prefix) {
      if (MONOTONIC_PREFIXES.has(prefix)) {
        let suffix = monotonic.get(prefix);
        if (!suffix) {
          suffix = monotonicSuffix(now, random);
          monotonic.set(prefix, suffix);
        }
        return `${prefix}_${suffix()}`;
      }
      return `${prefix}_${encodeTime(now())}${encodeRandom(toBigInt(random(RANDOM_BYTES)))}`;
    },
    bytes: (size) => random(size),
  };
}

/**
 * Suffixes that strictly increase: a new millisecond draws fresh randomness; the same millisecond
 * (or a clock that stepped back) keeps the last time and adds one to the last random part, as
 * monotonic ULIDs do. Overflowing 80 bits would take 2^80 ids in one millisecond from a fresh draw;
 * should it happen, the time part moves on one millisecond rather than wrap around.
 */
function monotonicSuffix(now: () => number, random: (size: number) => Buffer): () => string {
  let lastTime = -1;
  let lastRandom = 0n;
  return () => {
    const time = now();
    if (time > lastTime) {
      lastTime = time;
      lastRandom = toBigInt(random(RANDOM_BYTES));
    } else if (lastRandom < RANDOM_MAX) {
      lastRandom += 1n;
    } else {
      lastTime += 1;
      lastRandom = toBigInt(random(RANDOM_BYTES));
    }
    return encodeTime(lastTime) + encodeRandom(lastRandom);
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

function toBigInt(bytes: Buffer): bigint {
  return BigInt(`0x${bytes.toString('hex')}`);
}

/** 80 bits as 16 base32 characters, most significant first, so string order is numeric order. */
function encodeRandom(value: bigint): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < RANDOM_CHARS; i++) {
    out = ALPHABET[Number(rest & 31n)] + out;
    rest >>= 5n;
  }
  return out;
}

/**
 * Ids that are the same on every run from one seed: the n-th id of a prefix is derived from the seed
 * (HMAC-SHA256, 80 bits), with the time part of `at`. An Idempotency-Key request creates its
 * objects with these, so a retry after a crash names the very objects the dead attempt committed.
 * The seed is random per key, so the ids are as unpredictable as random ones to anyone without it.
 */
export function seededIds(seed: Buffer, at: Date): IdGenerator {
  const counts = new Map<IdPrefix, number>();
  let bytesCount = 0;
  return {
    next(prefix) {
      const n = (counts.get(prefix) ?? 0) + 1;
      counts.set(prefix, n);
      const digest = createHmac('sha256', seed).update(`${prefix}:${n}`).digest();
      return `${prefix}_${encodeTime(at.getTime())}${encodeRandom(toBigInt(digest.subarray(0, RANDOM_BYTES)))}`;
    },
    bytes(size) {
      bytesCount++;
      if (size > 32) throw new Error('seeded bytes are at most 32');
      return createHmac('sha256', seed).update(`bytes:${bytesCount}`).digest().subarray(0, size);
    },
  };
}

/** A loose shape check so malformed ids can be rejected before they reach SQL. */
export function looksLikeId(prefix: IdPrefix, value: string): boolean {
  return (
    value.length === prefix.length + 27 &&
    value.startsWith(`${prefix}_`) &&
    /^[0-9a-z]+$/.test(value.slice(prefix.length + 1))
  );
}
