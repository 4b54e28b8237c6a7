import type { Db } from '../db/db.js';
import { type KeyRing, KeyRingError } from './keyring.js';
import { KEY_CHECK_CONTEXT, KEY_CHECK_SETTING, SEALED_COLUMNS } from './sealed-columns.js';

/** The process's encryption keys cannot read the secrets this database holds. */
export class EncryptionKeyError extends Error {}

/**
 * Refuses to start with keys that cannot read this database's secrets: a host given another key
 * than the others would report ready, then fail every request that reads a secret, and write new
 * secrets the other hosts cannot read. The database keeps one value encrypted under the key in use
 * (the `encryption_key_check` setting, re-encrypted last by `kosh encryption rotate`); a process
 * starts only if its keys decrypt it. The first process to make that value checks one stored secret
 * of each kind first, so a database from before the check is held to the key its secrets were
 * stored under.
 */
export async function checkEncryptionKey(db: Db, keyring: KeyRing, keySource: string): Promise<void> {
  const stored = await checkValue(db);
  if (stored !== undefined) return readCheckValue(keyring, stored, keySource);
  for (const spec of SEALED_COLUMNS) {
    const value = spec.bytes ? `convert_from(${spec.column}, 'UTF8')` : spec.column;
    const [row] = await db.query<{ value: string }>(
      `SELECT ${value} AS value FROM ${spec.table}
        WHERE ${spec.column} IS NOT NULL ${spec.where ? `AND ${spec.where}` : ''}
          AND starts_with(${value}, 'enc:v1:') LIMIT 1`,
    );
    if (row && !keyring.holdsKeyOf(row.value)) throw refusal(keyring, keyring.keyIdOf(row.value), keySource);
  }
  await db.query(`INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [
    KEY_CHECK_SETTING,
    keyring.encrypt(KEY_CHECK_SETTING, KEY_CHECK_CONTEXT),
  ]);
  // Another process may have made it first, under its own key.
  readCheckValue(keyring, (await checkValue(db)) as string, keySource);
}

async function checkValue(db: Db): Promise<string | undefined> {
  const [row] = await db.query<{ value: string }>(`SELECT value FROM settings WHERE name = $1`, [
    KEY_CHECK_SETTING,
  ]);
  return row?.value;
}

function readCheckValue(keyring: KeyRing, stored: string, keySource: string): void {
  try {
    keyring.decrypt(stored, KEY_CHECK_CONTEXT);
  } catch (error) {
    if (!(error instanceof KeyRingError)) throw error;
    throw refusal(keyring, keyring.keyIdOf(stored), keySource);
  }
}

function refusal(keyring: KeyRing, storedKeyId: string, keySource: string): EncryptionKeyError {
  return new EncryptionKeyError(
    `${keySource} (key ${keyring.currentKeyId}) cannot read this database's secrets, which are stored under key ${storedKeyId}: start with the key the other processes use (during a rotation, the old key in KOSH_ENCRYPTION_PREVIOUS_KEYS until \`kosh encryption rotate\` has run).`,
  );
}
