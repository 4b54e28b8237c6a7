import type { Queryable } from '../../db/db.js';
import type { PageRequest } from '../../domain/pagination.js';
import type { Mode } from '../../domain/scope.js';

export type VpaStatus = 'pending' | 'active' | 'suspended';

export interface VpaRow {
  id: string;
  account_id: string;
  address: string;
  descriptor: string;
  status: VpaStatus;
  created_at: Date;
}

const COLUMNS = 'id, account_id, address, descriptor, status, created_at';

export function createVpasRepo() {
  return {
    async insert(
      db: Queryable,
      vpa: Omit<VpaRow, 'created_at'> & { partnerId: string; mode: Mode; createdAt: Date },
    ): Promise<VpaRow> {
      const [row] = await db.query<VpaRow>(
        `INSERT INTO merchant_vpas (id, account_id, partner_id, mode, address, descriptor, status, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING ${COLUMNS}`,
        [
          vpa.id,
          vpa.account_id,
          vpa.partnerId,
          vpa.mode,
          vpa.address,
          vpa.descriptor,
          vpa.status,
          vpa.createdAt,
        ],
      );
      return row!;
    },

    async list(db: Queryable, merchantId: string, mode: Mode, page: PageRequest): Promise<VpaRow[]> {
      return db.query<VpaRow>(
        `SELECT ${COLUMNS} FROM merchant_vpas
          WHERE account_id = $1 AND mode = $2 AND ($3::text IS NULL OR id < $3)
          ORDER BY id DESC LIMIT $4`,
        [merchantId, mode, page.cursor ?? null, page.limit + 1],
      );
    },

    /** Activation turns pending VPAs on, suspension turns active ones off (and back on re-activation). */
    async setStatusFor(tx: Queryable, merchantId: string, from: VpaStatus[], to: VpaStatus, at: Date) {
      await tx.query(
        'UPDATE merchant_vpas SET status = $3, updated_at = $4 WHERE account_id = $1 AND status = ANY($2::text[])',
        [merchantId, from, to, at],
      );
    },
  };
}

export type VpasRepo = ReturnType<typeof createVpasRepo>;
