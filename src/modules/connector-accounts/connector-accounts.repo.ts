import type { Queryable } from '../../db/db.js';
import type { PageRequest } from '../../domain/pagination.js';

export interface ConnectorAccountRow {
  id: string;
  account_id: string;
  connector: string;
  status: 'active' | 'disabled';
  public_credentials: Record<string, string>;
  secret_credentials: string;
  secret_hints: Record<string, string>;
  created_at: Date;
  updated_at: Date;
  disabled_at: Date | null;
}

const COLUMNS = `id, account_id, connector, status, public_credentials, secret_credentials, secret_hints,
  created_at, updated_at, disabled_at`;

export function createConnectorAccountsRepo() {
  return {
    async insert(
      db: Queryable,
      row: Omit<ConnectorAccountRow, 'status' | 'updated_at' | 'disabled_at'>,
    ): Promise<ConnectorAccountRow | undefined> {
      // The merchant's one active account (a partial unique index) turns a second into no row.
      const [inserted] = await db.query<ConnectorAccountRow>(
        `INSERT INTO connector_accounts (id, account_id, connector, status, public_credentials, secret_credentials,
           secret_hints, created_at, updated_at)
         VALUES ($1, $2, $3, 'active', $4, $5, $6, $7, $7)
         ON CONFLICT DO NOTHING
         RETURNING ${COLUMNS}`,
        [
          row.id,
          row.account_id,
          row.connector,
          row.public_credentials,
          row.secret_credentials,
          row.secret_hints,
          row.created_at,
        ],
      );
      return inserted;
    },

    /** Tenant-scoped: another merchant's account is not found. */
    async find(db: Queryable, accountId: string, id: string): Promise<ConnectorAccountRow | undefined> {
      const [row] = await db.query<ConnectorAccountRow>(
        `SELECT ${COLUMNS} FROM connector_accounts WHERE id = $1 AND account_id = $2`,
        [id, accountId],
      );
      return row;
    },

    /** By id alone, whatever its status: payments it started still settle after it is disabled. */
    async findById(db: Queryable, id: string): Promise<ConnectorAccountRow | undefined> {
      const [row] = await db.query<ConnectorAccountRow>(
        `SELECT ${COLUMNS} FROM connector_accounts WHERE id = $1`,
        [id],
      );
      return row;
    },

    async active(db: Queryable, accountId: string): Promise<ConnectorAccountRow | undefined> {
      const [row] = await db.query<ConnectorAccountRow>(
        `SELECT ${COLUMNS} FROM connector_accounts WHERE account_id = $1 AND status = 'active'`,
        [accountId],
      );
      return row;
    },

    async list(db: Queryable, accountId: string, page: PageRequest): Promise<ConnectorAccountRow[]> {
      return db.query<ConnectorAccountRow>(
        `SELECT ${COLUMNS} FROM connector_accounts
          WHERE account_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
        [accountId, page.cursor ?? null, page.limit + 1],
      );
    },

    /** Compare-and-set: only an active account is disabled (a repeat finds it disabled already). */
    async disable(
      db: Queryable,
      accountId: string,
      id: string,
      at: Date,
    ): Promise<ConnectorAccountRow | undefined> {
      const [row] = await db.query<ConnectorAccountRow>(
        `UPDATE connector_accounts SET status = 'disabled', disabled_at = $3, updated_at = $3
          WHERE id = $1 AND account_id = $2 AND status = 'active' RETURNING ${COLUMNS}`,
        [id, accountId, at],
      );
      return row;
    },

    /** Whether a provider webhook event was applied before (a redelivery). */
    async seenEvent(db: Queryable, connectorAccountId: string, eventId: string): Promise<boolean> {
      const rows = await db.query(
        'SELECT 1 FROM provider_webhook_events WHERE connector_account_id = $1 AND event_id = $2',
        [connectorAccountId, eventId],
      );
      return rows.length > 0;
    },

    /** Records a provider webhook event once it was applied. */
    async rememberEvent(db: Queryable, connectorAccountId: string, eventId: string, at: Date): Promise<void> {
      await db.query(
        `INSERT INTO provider_webhook_events (connector_account_id, event_id, received_at) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING`,
        [connectorAccountId, eventId, at],
      );
    },
  };
}

export type ConnectorAccountsRepo = ReturnType<typeof createConnectorAccountsRepo>;
