import type { Db } from '../db/db.js';
import type { KeyRing } from './keyring.js';

/** The settings row holding a value encrypted under the key every process must share (./key-check.ts). */
export const KEY_CHECK_SETTING = 'encryption_key_check';
export const KEY_CHECK_CONTEXT = `settings:${KEY_CHECK_SETTING}`;

/**
 * Every column that holds a secret Kosh must read back, with the associated data its ciphertext is
 * bound to. The one list `sealSecrets` walks: at start (values stored before encryption existed)
 * and by `kosh encryption rotate` (values made with an earlier key).
 */
interface SealedColumn {
  table: string;
  /** The primary key columns, in order. */
  key: string[];
  column: string;
  /** bytea columns hold the ciphertext's text as bytes. */
  bytes?: boolean;
  /** Only these rows hold a value (e.g. completed idempotency records). */
  where?: string;
  /** Other columns the associated data is made of. */
  contextColumns?: string[];
  context(row: Record<string, unknown>): string;
}

export const SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    table: 'webhook_endpoints',
    key: ['id'],
    column: 'secret',
    context: (row) => `webhook_endpoint:${row.id}`,
  },
  {
    table: 'webhook_endpoints',
    key: ['id'],
    column: 'previous_secret',
    context: (row) => `webhook_endpoint:${row.id}`,
  },
  {
    table: 'return_signing_secrets',
    key: ['account_id', 'mode'],
    column: 'secret',
    context: (row) => `return_signing_secret:${row.account_id}:${row.mode}`,
  },
  {
    table: 'connector_accounts',
    key: ['id'],
    column: 'secret_credentials',
    contextColumns: ['account_id'],
    context: (row) => `connector_account:${row.id}:${row.account_id}`,
  },
  {
    table: 'idempotency_keys',
    key: ['account_id', 'mode', 'key'],
    column: 'body',
    bytes: true,
    where: "state = 'completed'",
    context: (row) => `idempotency:${row.account_id}:${row.mode}:${row.key}`,
  },
  // Last, so that a check value under the current key means the rotation went through (./key-check.ts).
  {
    table: 'settings',
    key: ['name'],
    column: 'value',
    where: `name = '${KEY_CHECK_SETTING}'`,
    context: () => KEY_CHECK_CONTEXT,
  },
];

const BATCH = 500;

/**
 * Encrypts what is stored in plain text and, with `rotate`, re-encrypts what an earlier key made,
 * a batch at a time; each update is a compare-and-set on the value it read, so a row changed
 * meanwhile is left for the next run. Returns how many values it sealed.
 */
export async function sealSecrets(db: Db, keyring: KeyRing, options: { rotate: boolean }): Promise<number> {
  let sealed = 0;
  for (const spec of SEALED_COLUMNS) {
    const keys = spec.key.join(', ');
    // Plain values do not start with the ciphertext prefix; with `rotate`, neither do other keys' ones.
    const prefix = options.rotate ? `enc:v1:${keyring.currentKeyId}:` : 'enc:v1:';
    const stale = spec.bytes
      ? `substring(${spec.column} from 1 for length($1::bytea)) <> $1::bytea`
      : `NOT starts_with(${spec.column}, $1)`;
    let after: unknown[] | undefined;
    for (;;) {
      const params: unknown[] = [spec.bytes ? Buffer.from(prefix, 'utf8') : prefix];
      const keyset = after
        ? `AND (${keys}) > (${spec.key.map((_, i) => `$${params.length + i + 1}`).join(', ')})`
        : '';
      if (after) params.push(...after);
      const rows = await db.query<Record<string, unknown>>(
        `SELECT ${[keys, ...(spec.contextColumns ?? [])].join(', ')}, ${spec.column} AS value FROM ${spec.table}
          WHERE ${spec.column} IS NOT NULL ${spec.where ? `AND ${spec.where}` : ''} AND ${stale} ${keyset}
          ORDER BY ${keys} LIMIT ${BATCH}`,
        params,
      );
      for (const row of rows) {
        const raw = row.value as string | Buffer;
        const value = Buffer.isBuffer(raw) ? raw.toString('utf8') : raw;
        const plain = keyring.isEncrypted(value)
          ? keyring.decrypt(value, spec.context(row))
          : Buffer.isBuffer(raw)
            ? raw
            : Buffer.from(raw, 'utf8');
        const token = keyring.encrypt(plain, spec.context(row));
        const next = spec.bytes ? Buffer.from(token, 'utf8') : token;
        const where = spec.key.map((column, i) => `${column} = $${i + 3}`).join(' AND ');
        const updated = await db.query(
          `UPDATE ${spec.table} SET ${spec.column} = $1 WHERE ${spec.column} = $2 AND ${where} RETURNING 1 AS ok`,
          [next, raw, ...spec.key.map((column) => row[column])],
        );
        sealed += updated.length;
      }
      if (rows.length < BATCH) break;
      const last = rows[rows.length - 1] as Record<string, unknown>;
      after = spec.key.map((column) => last[column]);
    }
  }
  return sealed;
}
