import { createHash } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { KoshError } from '../../domain/errors.js';
import type { App } from '../../http/app-types.js';
import { principalOf } from '../../http/auth.js';
import { encodingRefusal } from '../../http/body.js';
import { sendDownload } from '../../http/download.js';
import { SERVER_OWNED_FIELDS } from '../../http/errors.js';
import type { Keyed } from '../../http/idempotency.js';
import { errorResponses, ListQuery, listOf } from '../../http/schemas.js';
import { type DocumentsService, EXTENSIONS, type Upload } from './documents.service.js';
import { MidParams } from './merchants.schemas.js';
import { DOCUMENT_TYPES } from './requirements.js';

const KycDocument = Type.Object({
  id: Type.String({ description: '`doc_` and an opaque suffix' }),
  entity: Type.Literal('kyc_document'),
  merchant_id: Type.String(),
  document_type: Type.String(),
  status: Type.Union([Type.Literal('uploaded'), Type.Literal('verified'), Type.Literal('rejected')]),
  file_name: Type.Union([Type.String(), Type.Null()], { description: 'As sent; metadata only' }),
  mime_type: Type.String({ description: 'Detected from the content' }),
  size: Type.Integer({ description: 'Bytes' }),
  sha256: Type.String({ description: 'Hex SHA-256 of the stored bytes' }),
  created_at: Type.Integer(),
});

const DocumentParams = Type.Object({
  mid: Type.String({ maxLength: 100 }),
  id: Type.String({ maxLength: 100, description: 'The document’s id (`doc_…`)' }),
});

/** The file name a download is saved under: the document's id, never the client's file name. */
const MIME_TYPES = Object.keys(EXTENSIONS);

/**
 * Documents the multipart body in OpenAPI. The parts are read from the stream by `readUpload`, not
 * by the validator: with no `type`, this schema accepts the (absent) parsed body as it is.
 */
const UploadBody = {
  content: {
    'multipart/form-data': {
      schema: {
        properties: {
          document_type: { type: 'string', enum: [...DOCUMENT_TYPES] },
          file: { type: 'string', format: 'binary', description: 'PDF, PNG or JPEG' },
        },
        required: ['document_type', 'file'],
      },
    },
  },
};

declare module 'fastify' {
  interface FastifyRequest {
    /** The KYC upload, read whole before the handler (and before any Idempotency-Key is claimed). */
    upload?: Upload;
  }
}

/** What a multipart error from the parser says, in the caller's words; the part it was in, if known. */
function malformed(reason: string, part: string | undefined): KoshError {
  return new KoshError(
    'invalid_body',
    `The multipart body could not be read${part ? ` (in the part '${part}')` : ''}: ${reason}. Send multipart/form-data with the parts document_type and file.`,
    part,
  );
}

/**
 * Reads the two parts, `document_type` and `file`, each exactly once; any other part is refused by
 * name, and a body that is not well-formed multipart is a 400 naming the part it broke in.
 */
async function readUpload(request: FastifyRequest, maxBytes: number): Promise<Upload> {
  // As on every other route: a compressed body is refused, never read as if it were multipart.
  const encoded = encodingRefusal(request);
  if (encoded) throw encoded;
  if (!request.isMultipart()) {
    throw new KoshError(
      'unsupported_media_type',
      'Send multipart/form-data with the parts document_type and file.',
    );
  }
  const upload: Upload = { documentType: undefined, fileName: undefined, content: undefined };
  const seen = new Set<string>();
  let current: string | undefined;
  try {
    for await (const part of request.parts()) {
      current = part.fieldname;
      if (seen.has(part.fieldname)) {
        if (part.type === 'file') part.file.resume();
        throw new KoshError(
          'invalid_body',
          `The part '${part.fieldname}' was sent more than once; send each part once.`,
          part.fieldname,
        );
      }
      seen.add(part.fieldname);
      if (part.type === 'file' && part.fieldname === 'file') {
        upload.fileName = part.filename;
        upload.content = await part.toBuffer();
      } else if (part.type === 'field' && part.fieldname === 'document_type') {
        upload.documentType = String(part.value);
      } else {
        if (part.type === 'file') part.file.resume();
        const name = part.fieldname;
        if (SERVER_OWNED_FIELDS.has(name)) {
          throw new KoshError(
            'server_owned_field',
            `The field '${name}' is set by Kosh and cannot be sent.`,
            name,
          );
        }
        throw new KoshError('unknown_field', `Unknown part '${name}'; send document_type and file.`, name);
      }
      current = undefined;
    }
  } catch (error) {
    if (error instanceof KoshError) throw error;
    const code = (error as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') {
      throw new KoshError(
        'body_too_large',
        `The file is larger than the limit of ${maxBytes} bytes.`,
        'file',
      );
    }
    if (code === 'FST_FILES_LIMIT') throw new KoshError('invalid_file', 'Send exactly one file.', 'file');
    if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
      throw new KoshError('invalid_body', 'Too many parts; send document_type and file.');
    }
    // Anything else the parser says (no boundary, a boundary that does not match, a body cut off
    // inside a part, headers it cannot read) is the body's fault, not Kosh's.
    const reason = error instanceof Error ? error.message.replace(/\.$/, '') : 'malformed multipart';
    throw malformed(reason, current);
  }
  return upload;
}

/**
 * What the Idempotency-Key fingerprint sees of an upload: every part, the file by its name, size
 * and SHA-256, so the same key with another file or another document type is another request.
 */
function fingerprintBody(upload: Upload): Record<string, unknown> {
  return {
    document_type: upload.documentType ?? null,
    file: upload.content
      ? {
          name: upload.fileName ?? null,
          size: upload.content.length,
          sha256: createHash('sha256').update(upload.content).digest('hex'),
        }
      : null,
  };
}

/**
 * The upload route lives in its own plugin scope: the multipart parser exists only here, so the
 * JSON and form parsers of every other route are untouched.
 */
export async function registerDocumentRoutes(
  app: App,
  documents: DocumentsService,
  maxBytes: number,
  keyed: Keyed,
) {
  await app.register(async (scope) => {
    await scope.register(multipart, {
      limits: { fileSize: maxBytes, files: 1, fields: 4, parts: 6, fieldSize: 256, headerPairs: 50 },
      throwFileSizeLimit: true,
      // Busboy would quietly cut `../../x.pdf` down to `x.pdf`; keep the name as sent so a
      // path-looking name is refused visibly (it never reaches the storage path either way).
      preservePath: true,
    });
    scope.post(
      '/v1/api-portal/merchants/kyc-document/:mid/',
      {
        // On PGlite the file is written before its row: never inside a transaction.
        config: { auth: 'partner', idempotency: 'phased' },
        // The whole body is received before the handler runs (and so before an Idempotency-Key is
        // claimed): a slow upload holds no database connection and no key.
        preHandler: async (request) => {
          request.upload = await readUpload(request, maxBytes);
          request.body = fingerprintBody(request.upload);
        },
        schema: {
          tags: ['Onboarding'],
          summary: 'Upload a KYC document',
          description: `multipart/form-data with \`document_type\` (${DOCUMENT_TYPES.join(', ')}) and \`file\`. Only PDF, PNG and JPEG, decided from the content; at most ${maxBytes} bytes. The file name is kept as metadata only.`,
          consumes: ['multipart/form-data'],
          params: MidParams,
          body: UploadBody,
          response: {
            200: Type.Object({ data: KycDocument, message: Type.String() }),
            ...errorResponses(400, 403, 404, 409, 413, 415),
          },
        },
      },
      async (request, reply) =>
        keyed(request, reply, async (work) => {
          const upload = request.upload;
          if (!upload) throw new Error('The upload is read by the preHandler.');
          const { mid } = request.params as { mid: string };
          const document = await documents.upload(principalOf(request), mid, upload, { ids: work.ids });
          request.log.info(
            { merchant_id: mid, document_id: document.id, sha256: document.sha256, size: document.size },
            'KYC document stored',
          );
          return { data: document, message: 'Document received.' };
        }),
    );
  });

  app.get(
    '/v1/api-portal/merchants/:mid/kyc-documents/',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['Onboarding'],
        summary: 'List the merchant’s KYC documents (metadata only), newest first',
        params: MidParams,
        querystring: ListQuery,
        response: { 200: listOf(KycDocument), ...errorResponses(400, 403, 404) },
      },
    },
    async (request) => documents.list(principalOf(request), request.params.mid, request.query),
  );

  app.get(
    '/v1/api-portal/merchants/:mid/kyc-documents/:id/file',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['Onboarding'],
        summary: 'Download a KYC document’s file',
        description:
          'The bytes as uploaded (checked against the document’s `sha256` first), with the detected `mime_type` as Content-Type. Served by any Kosh host sharing the database.',
        params: DocumentParams,
        response: {
          200: {
            description: 'The file',
            content: Object.fromEntries(
              MIME_TYPES.map((type) => [type, { schema: { type: 'string', format: 'binary' } }]),
            ),
          },
          ...errorResponses(400, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const { mid, id } = request.params;
      const { document, content, fileName } = await documents.download(principalOf(request), mid, id);
      return sendDownload(reply, { mimeType: document.mime_type, fileName, content });
    },
  );
}
