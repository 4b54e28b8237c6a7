import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase, type Harness, type TestAccount } from '../helpers/harness.js';
import { FILES, multipart, proprietorBody, uploadDocument } from '../helpers/onboarding.js';

const DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-onboarding-documents-'));
afterAll(() => fs.rmSync(DATA_DIR, { recursive: true, force: true }));
const LIMIT = 64 * 1024;

function sha256(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

function storedFiles(): string[] {
  const directory = path.join(DATA_DIR, 'documents');
  return fs.existsSync(directory) ? fs.readdirSync(directory) : [];
}

/** Documents' bytes stored anywhere: files (PGlite) and rows of contents (PostgreSQL). */
async function stored(harness: Harness): Promise<number> {
  const [row] = await harness.container.db.query<{ count: number }>(
    'SELECT count(*)::int AS count FROM kyc_document_contents',
  );
  return storedFiles().length + row!.count;
}

describeEachDatabase(
  'api-portal KYC documents',
  (harness) => {
    let partner: TestAccount;
    let mid: string;
    beforeAll(async () => {
      partner = await harness().partner();
      const created = await harness().request('POST', '/v1/api-portal/merchants/', {
        auth: partner,
        json: proprietorBody(),
      });
      mid = created.json().data.id;
    });

    it.each([
      ['pdf', FILES.pdf, 'application/pdf'],
      ['png', FILES.png, 'image/png'],
      ['jpeg', FILES.jpeg, 'image/jpeg'],
    ] as const)(
      'accepts a %s, stores it under a random name and keeps its SHA-256',
      async (kind, content, mime) => {
        const response = await uploadDocument(harness(), partner, mid, 'address_proof', {
          content,
          filename: `proof.${kind}`,
          // The declared type is deliberately wrong: only the bytes count.
          contentType: 'text/plain',
        });
        expect(response.statusCode).toBe(200);
        const document = response.json().data;
        expect(document.id).toMatch(/^doc_[0-9a-z]{26}$/);
        expect(document).toMatchObject({
          entity: 'kyc_document',
          merchant_id: mid,
          document_type: 'address_proof',
          status: 'uploaded',
          file_name: `proof.${kind}`,
          mime_type: mime,
          size: content.length,
          sha256: sha256(content),
        });
        const [row] = await harness().container.db.query<{ storage_name: string }>(
          'SELECT storage_name FROM kyc_documents WHERE id = $1',
          [document.id],
        );
        expect(row!.storage_name).toMatch(/^[0-9a-f]{32}$/);
        const file = harness().container.services.documents.pathOf(row!.storage_name);
        expect(path.dirname(file)).toBe(path.join(DATA_DIR, 'documents'));
        if (harness().kind === 'pglite') {
          expect(sha256(fs.readFileSync(file))).toBe(document.sha256);
        } else {
          // PostgreSQL: the bytes are in the database, with the row (several hosts share it).
          expect(fs.existsSync(file)).toBe(false);
          const [contents] = await harness().container.db.query<{ content: Buffer }>(
            'SELECT content FROM kyc_document_contents WHERE storage_name = $1',
            [row!.storage_name],
          );
          expect(sha256(contents!.content)).toBe(document.sha256);
        }
      },
    );

    it('lists documents as metadata only, newest first', async () => {
      const response = await harness().request('GET', `/v1/api-portal/merchants/${mid}/kyc-documents/`, {
        auth: partner,
      });
      expect(response.statusCode).toBe(200);
      const list = response.json();
      expect(list.data.length).toBeGreaterThanOrEqual(3);
      for (const document of list.data) {
        expect(Object.keys(document).sort()).toEqual(
          [
            'created_at',
            'document_type',
            'entity',
            'file_name',
            'id',
            'merchant_id',
            'mime_type',
            'sha256',
            'size',
            'status',
          ].sort(),
        );
      }
    });

    const refused: [string, { content: Buffer; filename: string; contentType?: string }, string, string][] = [
      ['a renamed .exe', { content: FILES.exe, filename: 'pan.pdf' }, 'invalid_file', 'PDF, PNG or JPEG'],
      [
        'an HTML file named .pdf',
        { content: FILES.html, filename: 'pan.pdf', contentType: 'application/pdf' },
        'invalid_file',
        'PDF, PNG or JPEG',
      ],
      ['an empty file', { content: Buffer.alloc(0), filename: 'pan.pdf' }, 'invalid_file', 'empty'],
      [
        'a path-traversal file name',
        { content: FILES.pdf, filename: '../../etc/passwd.pdf' },
        'invalid_file',
        'path separator',
      ],
      [
        'a Windows path-traversal file name',
        { content: FILES.pdf, filename: '..\\..\\boot.pdf' },
        'invalid_file',
        'path separator',
      ],
      ['a file name with ..', { content: FILES.pdf, filename: '..pdf' }, 'invalid_file', "'..'"],
    ];

    it.each(refused)('refuses %s with a clear error and stores nothing', async (_name, file, code, words) => {
      const before = await stored(harness());
      const response = await uploadDocument(harness(), partner, mid, 'pan', file);
      expect(response.statusCode).toBe(400);
      const error = response.json().error;
      expect(error).toMatchObject({ code, field: 'file' });
      expect(error.message).toContain(words);
      expect(await stored(harness())).toBe(before);
    });

    it('refuses an oversized file with 413 body_too_large and stores nothing', async () => {
      const before = await stored(harness());
      const big = Buffer.concat([FILES.pdf, Buffer.alloc(LIMIT)]);
      const response = await uploadDocument(harness(), partner, mid, 'pan', { content: big });
      expect(response.statusCode).toBe(413);
      expect(response.json().error).toMatchObject({ code: 'body_too_large', field: 'file' });
      expect(response.json().error.message).toContain(String(LIMIT));
      expect(await stored(harness())).toBe(before);
    });

    it.each([
      ['no document_type', [{ name: 'file', filename: 'a.pdf', content: FILES.pdf }], 400, 'missing_field'],
      [
        'an unknown document_type',
        [
          { name: 'document_type', value: 'passport_photo' },
          { name: 'file', filename: 'a.pdf', content: FILES.pdf },
        ],
        400,
        'invalid_field',
      ],
      ['no file', [{ name: 'document_type', value: 'pan' }], 400, 'missing_field'],
      [
        'an unknown part',
        [
          { name: 'document_type', value: 'pan' },
          { name: 'colour', value: 'red' },
        ],
        400,
        'unknown_field',
      ],
      [
        'a server-owned status',
        [
          { name: 'status', value: 'verified' },
          { name: 'document_type', value: 'pan' },
        ],
        400,
        'server_owned_field',
      ],
      [
        'two files',
        [
          { name: 'document_type', value: 'pan' },
          { name: 'file', filename: 'a.pdf', content: FILES.pdf },
          { name: 'file', filename: 'b.pdf', content: FILES.pdf },
        ],
        400,
        'invalid_file',
      ],
    ] as const)('refuses a request with %s', async (_name, parts, status, code) => {
      const { payload, headers } = multipart([...parts]);
      const response = await harness().app.inject({
        method: 'POST',
        url: `/v1/api-portal/merchants/kyc-document/${mid}/`,
        headers: { ...headers, authorization: partner.auth },
        payload,
      });
      expect(response.statusCode).toBe(status);
      expect(response.json().error.code).toBe(code);
    });

    it('refuses a compressed upload with 415, as every other route does, and stores nothing', async () => {
      const before = await stored(harness());
      for (const encoding of ['br', 'gzip']) {
        const { payload, headers } = multipart([
          { name: 'document_type', value: 'bank_statement' },
          { name: 'file', filename: 'statement.pdf', content: FILES.pdf, contentType: 'application/pdf' },
        ]);
        const response = await harness().app.inject({
          method: 'POST',
          url: `/v1/api-portal/merchants/kyc-document/${mid}/`,
          headers: { ...headers, 'content-encoding': encoding, authorization: partner.auth },
          payload,
        });
        expect(response.statusCode, response.body).toBe(415);
        expect(response.json().error).toMatchObject({
          code: 'unsupported_media_type',
          message: `Content-Encoding '${encoding}' is not accepted: send the body uncompressed.`,
        });
      }
      expect(await stored(harness())).toBe(before);
    });

    it('refuses a JSON body on the upload route and keeps JSON working elsewhere', async () => {
      const response = await harness().request('POST', `/v1/api-portal/merchants/kyc-document/${mid}/`, {
        auth: partner,
        json: { document_type: 'pan' },
      });
      expect(response.statusCode).toBe(415);
      expect(response.json().error.code).toBe('unsupported_media_type');
      const json = await harness().request('POST', '/v1/api-portal/merchants/', {
        auth: partner,
        json: proprietorBody(),
      });
      expect(json.statusCode).toBe(200);
      const { payload, headers } = multipart([{ name: 'amount', value: '100' }]);
      const merchant = await harness().merchant();
      const multipartOrder = await harness().app.inject({
        method: 'POST',
        url: '/v1/orders/',
        headers: { ...headers, authorization: merchant.auth },
        payload,
      });
      expect(multipartOrder.statusCode).toBe(415);
    });

    describe('malformed and repeated multipart', () => {
      const send = (payload: string | Buffer, contentType: string) =>
        harness().app.inject({
          method: 'POST',
          url: `/v1/api-portal/merchants/kyc-document/${mid}/`,
          headers: { 'content-type': contentType, authorization: partner.auth },
          payload,
        });
      const valid = () =>
        multipart([
          { name: 'document_type', value: 'pan' },
          { name: 'file', filename: 'a.pdf', content: FILES.pdf, contentType: 'application/pdf' },
        ]);

      it.each([
        ['no boundary', () => ({ payload: valid().payload, type: 'multipart/form-data' })],
        [
          'a body cut off inside the file part',
          () => {
            const { payload, headers } = valid();
            return { payload: payload.subarray(0, payload.length - 40), type: headers['content-type']! };
          },
        ],
        [
          'a body that is not multipart',
          () => ({ payload: '{"document_type":"pan"}', type: 'multipart/form-data; boundary=XX' }),
        ],
        [
          'a boundary that does not match',
          () => ({ payload: valid().payload, type: 'multipart/form-data; boundary=not-the-one' }),
        ],
      ] as const)('answers a JSON 400 for %s, stores nothing and logs no stack', async (_name, make) => {
        const { payload, type } = make();
        const before = await stored(harness());
        const logsBefore = harness().logs().length;
        const response = await send(payload, type);
        expect(response.statusCode, response.body).toBe(400);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        expect(response.json().error).toMatchObject({ type: 'invalid_request_error' });
        expect(['invalid_body', 'missing_field']).toContain(response.json().error.code);
        expect(response.json().error.request_id).toBe(response.headers['x-request-id']);
        expect(await stored(harness())).toBe(before);
        const logged = harness().logs().slice(logsBefore);
        expect(logged).not.toContain('"stack"');
        expect(logged).not.toContain('internal_error');
      });

      it('refuses a part sent twice (two document types before the file), naming it', async () => {
        const { payload, headers } = multipart([
          { name: 'document_type', value: 'pan' },
          { name: 'document_type', value: 'gst_certificate' },
          { name: 'file', filename: 'a.pdf', content: FILES.pdf, contentType: 'application/pdf' },
        ]);
        const before = await stored(harness());
        const response = await send(payload, headers['content-type']!);
        expect(response.statusCode).toBe(400);
        expect(response.json().error).toMatchObject({ code: 'invalid_body', field: 'document_type' });
        expect(await stored(harness())).toBe(before);
      });

      it('fingerprints every part: the same key with another upload is 422; the same upload replays', async () => {
        const key = { 'idempotency-key': `upload-${harness().kind}` };
        const first = multipart([
          { name: 'document_type', value: 'pan' },
          { name: 'file', filename: 'pan.pdf', content: FILES.pdf, contentType: 'application/pdf' },
        ]);
        const inject = (body: { payload: Buffer; headers: Record<string, string> }) =>
          harness().app.inject({
            method: 'POST',
            url: `/v1/api-portal/merchants/kyc-document/${mid}/`,
            headers: { ...body.headers, ...key, authorization: partner.auth },
            payload: body.payload,
          });
        const before = await stored(harness());
        const created = await inject(first);
        expect(created.statusCode, created.body).toBe(200);
        const otherFile = Buffer.concat([FILES.pdf, Buffer.from('another file')]);
        for (const other of [
          [
            { name: 'document_type', value: 'bank_statement' },
            { name: 'file', filename: 'pan.pdf', content: FILES.pdf },
          ],
          [
            { name: 'document_type', value: 'pan' },
            { name: 'file', filename: 'pan.pdf', content: otherFile },
          ],
          [
            { name: 'document_type', value: 'pan' },
            { name: 'file', filename: 'renamed.pdf', content: FILES.pdf },
          ],
        ]) {
          const reused = await inject(multipart(other));
          expect(reused.statusCode).toBe(422);
          expect(reused.json().error.code).toBe('idempotency_key_reused');
        }
        const replay = await inject(first);
        expect(replay.statusCode).toBe(200);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.body).toBe(created.body);
        expect(await stored(harness())).toBe(before + 1);
      });
    });

    it("answers 404 for another partner's merchant and stores nothing", async () => {
      const stranger = await harness().partner('Stranger');
      const before = await stored(harness());
      const response = await uploadDocument(harness(), stranger, mid, 'pan');
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('resource_not_found');
      expect(await stored(harness())).toBe(before);
      const list = await harness().request('GET', `/v1/api-portal/merchants/${mid}/kyc-documents/`, {
        auth: stranger,
      });
      expect(list.statusCode).toBe(404);
    });
  },
  { KOSH_DATA_DIR: DATA_DIR, KOSH_KYC_MAX_FILE_BYTES: String(LIMIT) },
);
