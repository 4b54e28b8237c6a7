import type { Queryable } from '../../db/db.js';
import type { PageRequest } from '../../domain/pagination.js';
import type { Mode } from '../../domain/scope.js';

export interface DocumentRow {
  id: string;
  account_id: string;
  document_type: string;
  status: 'uploaded' | 'verified' | 'rejected';
  file_name: string | null;
  mime_type: string;
  size_bytes: number;
  sha256: string;
  storage_name: string;
  created_at: Date;
}

const COLUMNS =
  'id, account_id, document_type, status, file_name, mime_type, size_bytes, sha256, storage_name, created_at';

export function createDocumentsRepo() {
  return {
    async insert(
      tx: Queryable,
      document: Omit<DocumentRow, 'status' | 'created_at'> & {
        partnerId: string;
        mode: Mode;
        createdAt: Date;
      },
    ): Promise<DocumentRow> {
      const [row] = await tx.query<DocumentRow>(
        `INSERT INTO kyc_documents (id, account_id, partner_id, mode, document_type, status, file_name, mime_type,
           size_bytes, sha256, storage_name, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, 'uploaded', $6, $7, $8, $9, $10, $11, $11) RETURNING ${COLUMNS}`,
        [
          document.id,
          document.account_id,
          document.partnerId,
          document.mode,
          document.document_type,
          document.file_name,
          document.mime_type,
          document.size_bytes,
          document.sha256,
          document.storage_name,
          document.createdAt,
        ],
      );
      return row!;
    },

    async find(db: Queryable, id: string): Promise<DocumentRow | undefined> {
      const [row] = await db.query<DocumentRow>(`SELECT ${COLUMNS} FROM kyc_documents WHERE id = $1`, [id]);
      return row;
    },

    async list(db: Queryable, merchantId: string, mode: Mode, page: PageRequest): Promise<DocumentRow[]> {
      return db.query<DocumentRow>(
        `SELECT ${COLUMNS} FROM kyc_documents
          WHERE account_id = $1 AND mode = $2 AND ($3::text IS NULL OR id < $3)
          ORDER BY id DESC LIMIT $4`,
        [merchantId, mode, page.cursor ?? null, page.limit + 1],
      );
    },

    /** Per document type: whether one that is not rejected exists, and whether one was rejected. */
    async typeSummary(
      db: Queryable,
      merchantIds: string[],
    ): Promise<{ account_id: string; document_type: string; usable: boolean; rejected: boolean }[]> {
      return db.query(
        `SELECT account_id, document_type, bool_or(status <> 'rejected') AS usable, bool_or(status = 'rejected') AS rejected
           FROM kyc_documents WHERE account_id = ANY($1::text[]) GROUP BY account_id, document_type`,
        [merchantIds],
      );
    },

    async verifyUploaded(tx: Queryable, merchantId: string, at: Date): Promise<void> {
      await tx.query(
        `UPDATE kyc_documents SET status = 'verified', updated_at = $2 WHERE account_id = $1 AND status = 'uploaded'`,
        [merchantId, at],
      );
    },
  };
}

export type DocumentsRepo = ReturnType<typeof createDocumentsRepo>;
