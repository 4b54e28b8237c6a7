import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { unixSeconds } from '../../domain/clock.js';
import { KoshError } from '../../domain/errors.js';
import type { IdGenerator } from '../../domain/ids.js';
import { type Page, pageRequest, toPage } from '../../domain/pagination.js';
import type { Principal } from '../../domain/principal.js';
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

/**
 * KYC documents: checked from their bytes, stored under a random name in `<dataDir>/documents/`
 * (a folder nothing serves), with their SHA-256. The client's file name is metadata only.
 */
export function createDocumentsService(deps: {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  directory: string;
  merchants: MerchantsService;
  onboarding: Onboarding;
  repo: DocumentsRepo;
}) {
  const { db, clock, ids, directory, merchants, onboarding, repo } = deps;

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
    directory,

    async upload(principal: Principal, merchantId: string, upload: Upload): Promise<KycDocument> {
      await merchants.owned(db, principal, merchantId);
      const { documentType, content, mime } = check(upload);
      const storageName = randomBytes(16).toString('hex');
      const sha256 = createHash('sha256').update(content).digest('hex');
      // The file is written before the row and removed if the row is not committed: a document
      // row never points at a missing file, and a failure leaves no orphan behind.
      await fs.mkdir(directory, { recursive: true, mode: 0o700 });
      const file = path.join(directory, storageName);
      await fs.writeFile(file, content, { flag: 'wx', mode: 0o600 });
      try {
        return await db.transaction(async (tx) => {
          const profile = await merchants.owned(tx, principal, merchantId, true);
          if (profile.status === 'suspended') {
            throw new KoshError('state_conflict', 'Documents cannot be added to a suspended merchant.');
          }
          const row = await repo.insert(tx, {
            id: ids.next('doc'),
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
          await onboarding.advance(tx, profile);
          // A test-mode merchant may have been verified just now: show the document as it is stored.
          return toDocument((await repo.find(tx, row.id)) ?? row);
        });
      } catch (error) {
        await fs.rm(file, { force: true });
        throw error;
      }
    },

    async list(
      principal: Principal,
      merchantId: string,
      query: { limit?: number; cursor?: string },
    ): Promise<Page<KycDocument>> {
      const profile = await merchants.owned(db, principal, merchantId);
      const page = pageRequest('doc', query);
      const rows = await repo.list(db, profile.account_id, profile.mode, page);
      return toPage(rows, page.limit, toDocument);
    },

    /** Where a stored document lives (for reviewers' tooling and tests); never derived from client input. */
    pathOf(storageName: string): string {
      if (!/^[0-9a-f]{32}$/.test(storageName)) throw new Error('not a storage name');
      return path.join(directory, storageName);
    },
  };
}

export type DocumentsService = ReturnType<typeof createDocumentsService>;
