import type { Db } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { unixSeconds } from '../../domain/clock.js';
import { KoshError, notFound } from '../../domain/errors.js';
import type { IdGenerator } from '../../domain/ids.js';
import { type Page, pageRequest, toPage } from '../../domain/pagination.js';
import type { Scope } from '../../domain/scope.js';
import { type DocumentStore, type FolderStore, sha256Of } from './document-store.js';
import type { DocumentRow, DocumentsRepo } from './documents.repo.js';
import { detectMime, fileNameProblem } from './file-signature.js';
import type { MerchantsService } from './merchants.service.js';
import type { Onboarding } from './onboarding.js';
import { DOCUMENT_TYPES } from './requirements.js';

export interface KycDocument {
  id: string;
  entity: 'kyc_document';
  merchant_id: string;
  document_type: string;
  status: DocumentRow['status'];
  file_name: string | null;
  mime_type: string;
  size: number;
  sha256: string;
  created_at: number;
}

function toDocument(row: DocumentRow): KycDocument {
  return {
    id: row.id,
    entity: 'kyc_document',
    merchant_id: row.account_id,
    document_type: row.document_type,
    status: row.status,
    file_name: row.file_name,
    mime_type: row.mime_type,
    size: Number(row.size_bytes),
    sha256: row.sha256,
    created_at: unixSeconds(row.created_at),
  };
}

export interface Upload {
  documentType: string | undefined;
  fileName: string | undefined;
  content: Buffer | undefined;
}

/** The extension of a download's file name, by the type detected from the bytes. */
export const EXTENSIONS: Record<string, string> = {
  'application/pdf': 'pdf',
  'image/png': 'png',
  'image/jpeg': 'jpg',
};

/**
 * KYC documents: checked from their bytes, stored under a random name with their SHA-256 — in the
 * database on PostgreSQL, in `<dataDir>/documents/` (a folder nothing serves) on PGlite
 * (document-store.ts). The client's file name is metadata only.
 */
export function createDocumentsService(deps: {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  /** Where the bytes go: `folder`, or the database (the container picks it from the database kind). */
  store: DocumentStore;
  /** The data folder's documents: the store on PGlite, files from before the database store otherwise. */
  folder: FolderStore;
  merchants: MerchantsService;
  onboarding: Onboarding;
  repo: DocumentsRepo;
}) {
  const { db, clock, ids, store, folder, merchants, onboarding, repo } = deps;

  function check(upload: Upload): { documentType: string; content: Buffer; mime: string } {
    const { documentType, content } = upload;
    if (documentType === undefined) {
      throw new KoshError('missing_field', "The field 'document_type' is required.", 'document_type');
    }
    if (!(DOCUMENT_TYPES as readonly string[]).includes(documentType)) {
      throw new KoshError(
        'invalid_field',
        `The field 'document_type' must be one of ${DOCUMENT_TYPES.join(', ')}.`,
        'document_type',
      );
    }
    if (content === undefined)
      throw new KoshError('missing_field', "The file part 'file' is required.", 'file');
    const nameProblem = fileNameProblem(upload.fileName);
    if (nameProblem) throw new KoshError('invalid_file', `The file name ${nameProblem}.`, 'file');
    if (content.length === 0) throw new KoshError('invalid_file', 'The file is empty.', 'file');
    const mime = detectMime(content);
    if (!mime) {
      throw new KoshError(
        'invalid_file',
        'The file is not a PDF, PNG or JPEG (decided from its content, not its name or Content-Type).',
        'file',
      );
    }
    return { documentType, content, mime };
  }

  return {
    directory: folder.directory,
    /** Where uploaded documents' bytes are stored on this database. */
    storedIn: store.where,

    /**
     * Stores a KYC document. `options.ids` are a keyed request's seeded ids: a retry after a crash
     * writes under the same storage name (finding the file already there) and finds the row the
     * dead attempt committed, so one upload is one file and one document whatever happens.
     */
    async upload(
      scope: Scope,
      merchantId: string,
      upload: Upload,
      options: { ids?: IdGenerator } = {},
      on: Db = db,
    ): Promise<KycDocument> {
      await merchants.owned(on, scope, merchantId);
      const { documentType, content, mime } = check(upload);
      const idSource = options.ids ?? ids;
      const id = idSource.next('doc');
      const storageName = idSource.bytes(16).toString('hex');
      const sha256 = sha256Of(content);
      const existing = await repo.find(on, id);
      if (existing) {
        if (existing.account_id !== merchantId || existing.sha256 !== sha256) {
          throw new KoshError(
            'state_conflict',
            'This upload was already recorded differently; use a new key.',
          );
        }
        return toDocument(existing);
      }
      // A file is written before the row and removed if the row is not committed; bytes kept in
      // the database are written with the row. Either way a document row never exists without its
      // bytes, and a failure leaves no orphan behind. The store may leave the process (a file):
      // never inside a transaction, whichever store this is.
      on.assertNoTransaction('KYC file write');
      await store.prepare(storageName, content);
      try {
        return await on.transaction(async (tx) => {
          const profile = await merchants.owned(tx, scope, merchantId, true);
          if (profile.status === 'suspended') {
            throw new KoshError('state_conflict', 'Documents cannot be added to a suspended merchant.');
          }
          const row = await repo.insert(tx, {
            id,
            account_id: profile.account_id,
            partnerId: profile.partner_id,
            mode: profile.mode,
            document_type: documentType,
            file_name: upload.fileName || null,
            mime_type: mime,
            size_bytes: content.length,
            sha256,
            storage_name: storageName,
            createdAt: clock.now(),
          });
          await store.record(tx, storageName, content, clock.now());
          await onboarding.advance(tx, profile);
          // A test-mode merchant may have been verified just now: show the document as it is stored.
          return toDocument((await repo.find(tx, row.id)) ?? row);
        });
      } catch (error) {
        await store.discard(storageName);
        throw error;
      }
    },

    async list(
      scope: Scope,
      merchantId: string,
      query: { limit?: number; cursor?: string },
    ): Promise<Page<KycDocument>> {
      const profile = await merchants.owned(db, scope, merchantId);
      const page = pageRequest('doc', query);
      const rows = await repo.list(db, profile.account_id, profile.mode, page);
      return toPage(rows, page.limit, toDocument);
    },

    /**
     * A document and its bytes, from whichever host asks: checked against its SHA-256 before they
     * are handed out.
     */
    async download(
      scope: Scope,
      merchantId: string,
      documentId: string,
    ): Promise<{ document: KycDocument; content: Buffer; fileName: string }> {
      const profile = await merchants.owned(db, scope, merchantId);
      const row = await repo.findOf(db, profile.account_id, profile.mode, documentId);
      if (!row) throw notFound('KYC document', documentId);
      const content = await store.read(db, row.storage_name);
      // Both are the operator's to fix (a file not moved yet, bytes changed where they are kept):
      // an internal error, logged with its reason, never shown to the caller.
      if (!content) {
        throw new Error(
          `The bytes of KYC document ${row.id} are not stored (on PostgreSQL, run kosh documents migrate on the host that has its file).`,
        );
      }
      if (sha256Of(content) !== row.sha256) {
        throw new Error(`The stored bytes of KYC document ${row.id} do not match its SHA-256.`);
      }
      const document = toDocument(row);
      return { document, content, fileName: `${document.id}.${EXTENSIONS[document.mime_type] ?? 'bin'}` };
    },

    /** Where a document's file lives in the data folder (tests); never derived from client input. */
    pathOf: folder.pathOf,
  };
}

export type DocumentsService = ReturnType<typeof createDocumentsService>;
