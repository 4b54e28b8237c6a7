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

    /** A merchant's document in one mode (the list's scope). */
    async findOf(db: Queryable, accountId: string, mode: Mode, id: string): Promise<DocumentRow | undefined> {
      const [row] = await db.query<DocumentRow>(
        `SELECT ${COLUMNS} FROM kyc_documents WHERE id = $1 AND account_id = $2 AND mode = $3`,
        [id, accountId, mode],
      );
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

    /** A document's bytes, in the transaction that inserts its row (PostgreSQL). */
    async insertContent(tx: Queryable, storageName: string, content: Buffer, at: Date): Promise<void> {
      await tx.query(
        'INSERT INTO kyc_document_contents (storage_name, content, created_at) VALUES ($1, $2, $3)',
        [storageName, content, at],
      );
    },

    /** Stores the bytes of a document stored before they were (its file); false if already stored. */
    async insertContentOnce(db: Queryable, storageName: string, content: Buffer, at: Date): Promise<boolean> {
      const rows = await db.query(
        `INSERT INTO kyc_document_contents (storage_name, content, created_at) VALUES ($1, $2, $3)
           ON CONFLICT (storage_name) DO NOTHING RETURNING storage_name`,
        [storageName, content, at],
      );
      return rows.length === 1;
    },

    async content(db: Queryable, storageName: string): Promise<Buffer | undefined> {
      const [row] = await db.query<{ content: Buffer }>(
        'SELECT content FROM kyc_document_contents WHERE storage_name = $1',
        [storageName],
      );
      return row?.content;
    },

    /** Every document after `afterId` (by id), with whether its bytes are in the database. */
    async storedPage(
      db: Queryable,
      afterId: string | null,
      limit: number,
    ): Promise<{ id: string; storage_name: string; sha256: string; stored: boolean }[]> {
      return db.query(
        `SELECT d.id, d.storage_name, d.sha256,
                EXISTS (SELECT 1 FROM kyc_document_contents c WHERE c.storage_name = d.storage_name) AS stored
           FROM kyc_documents d WHERE ($1::text IS NULL OR d.id > $1) ORDER BY d.id LIMIT $2`,
        [afterId, limit],
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
