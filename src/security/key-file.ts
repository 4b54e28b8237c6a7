import fs from 'node:fs';
import path from 'node:path';
import { newKey, parseKey } from './keyring.js';

export const KEY_FILE = 'encryption.key';

/**
 * The embedded sandbox's encryption key when KOSH_ENCRYPTION_KEY is unset: generated once into
 * `<data folder>/encryption.key` (mode 0600), beside the database it protects. That keeps a copy of
 * the database alone from revealing secrets; on PostgreSQL the key must come from the operator.
 */
export function loadOrCreateKeyFile(dataDir: string): Buffer {
  const file = path.join(dataDir, KEY_FILE);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    fs.writeFileSync(file, `${newKey().toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = parseKey(fs.readFileSync(file, 'utf8'));
  if (!key) throw new Error(`${file} does not hold a 32-byte base64 key.`);
  return key;
}
