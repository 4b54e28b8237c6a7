import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/db.js';
import { loadMigrations, migrate } from '../../src/db/migrate.js';
import { openPglite } from '../../src/db/pglite.js';
import { openPostgres } from '../../src/db/postgres.js';
import { createEmptyPostgresDatabase, DATABASE_KINDS } from '../helpers/databases.js';

const EMPTY = {
  card_networks: { diners: false, amex: false, mastercard: false, rupay: false, visa: false },
  card_type: { debit: false, credit: false, prepaid: false },
  card_subtype: { business: false, consumer: false, premium: false },
  upi: { intent: false, collect: false, payer_account_type: { bank_account: false, credit_card: false } },
  netbanking: {},
  wallet: {},
};

async function withEmptyDatabase(kind: (typeof DATABASE_KINDS)[number], work: (db: Db) => Promise<void>) {
  if (kind === 'pglite') {
    const db = await openPglite({ dataDir: undefined, connectTimeoutMs: 5_000, transactionGuard: true });
    try {
      await work(db);
    } finally {
      await db.close();
    }
    return;
  }
  const database = await createEmptyPostgresDatabase();
  const db = openPostgres(database.url, {
    poolSize: 2,
    connectTimeoutMs: 5_000,
    transactionGuard: true,
    statementTimeoutMs: 10_000,
  });
  try {
    await work(db);
  } finally {
    await db.close();
    await database.drop();
  }
}

describe.each(DATABASE_KINDS)('migration 0014 on existing live methods [%s]', (kind) => {
  it('marks live methods never written since the merchant was created as not chosen, and keeps every choice', async () => {
    await withEmptyDatabase(kind, async (db) => {
      await migrate(
        db,
        loadMigrations().filter((migration) => migration.version < 14),
      );
      const merchant = async (id: string) =>
        db.transaction(async (tx) => {
          await tx.query(
            `INSERT INTO accounts (id, kind, name, status) VALUES ($1, 'merchant', $1, 'activated')`,
            [id],
          );
          await tx.query(
            `INSERT INTO account_methods (account_id, mode, methods) VALUES ($1, 'test', $2), ($1, 'live', $2)`,
            [id, EMPTY],
          );
        });
      await merchant('mid_untouched');
      await merchant('mid_chosen');
      await merchant('mid_emptied');
      const choose = (id: string, netbanking: Record<string, string>) =>
        db.query(
          `UPDATE account_methods SET methods = $2, updated_at = now() + interval '1 second'
            WHERE account_id = $1 AND mode = 'live'`,
          [id, { ...EMPTY, netbanking }],
        );
      await choose('mid_chosen', { HDFC: 'HDFC Bank' });
      await choose('mid_emptied', {});

      expect(await migrate(db)).toEqual(
        loadMigrations()
          .filter((migration) => migration.version >= 14)
          .map((migration) => migration.name),
      );
      const rows = await db.query<{ account_id: string; mode: string; methods: unknown }>(
        'SELECT account_id, mode, methods FROM account_methods ORDER BY account_id, mode',
      );
      const live = Object.fromEntries(
        rows.filter((row) => row.mode === 'live').map((row) => [row.account_id, row.methods]),
      );
      expect(live.mid_untouched).toBeNull();
      expect(live.mid_chosen).toEqual({ ...EMPTY, netbanking: { HDFC: 'HDFC Bank' } });
      expect(live.mid_emptied).toEqual(EMPTY);
      expect(rows.filter((row) => row.mode === 'test').every((row) => row.methods !== null)).toBe(true);
      // Test mode always holds a choice.
      await expect(
        db.query(
          `UPDATE account_methods SET methods = NULL WHERE account_id = 'mid_chosen' AND mode = 'test'`,
        ),
      ).rejects.toThrow();
    });
  });
});
