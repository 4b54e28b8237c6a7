import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/http/app-types.js';
import { createHarness, describeEachDatabase, type Harness, type TestAccount } from '../helpers/harness.js';
import { FILES, proprietorBody, uploadDocument } from '../helpers/onboarding.js';
import { MAIN, ROOT } from '../helpers/process.js';
import { type SecondHost, startSecondHost } from '../helpers/second-host.js';

const run = promisify(execFile);

function sha256(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

function filesIn(dataDir: string): string[] {
  const directory = path.join(dataDir, 'documents');
  return fs.existsSync(directory) ? fs.readdirSync(directory) : [];
}

async function newMerchant(harness: Harness, partner: TestAccount): Promise<string> {
  const created = await harness.request('POST', '/v1/api-portal/merchants/', {
    auth: partner,
    json: proprietorBody(),
  });
  expect(created.statusCode, created.body).toBe(200);
  return created.json().data.id;
}

async function upload(harness: Harness, partner: TestAccount, mid: string, content: Buffer) {
  const response = await uploadDocument(harness, partner, mid, 'pan', { content, filename: 'pan.pdf' });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data as { id: string; sha256: string; mime_type: string };
}

function download(app: App, partner: TestAccount, mid: string, id: string) {
  return app.inject({
    method: 'GET',
    url: `/v1/api-portal/merchants/${mid}/kyc-documents/${id}/file`,
    headers: { authorization: partner.auth },
  });
}

async function storageName(harness: Harness, id: string): Promise<string> {
  const [row] = await harness.container.db.query<{ storage_name: string }>(
    'SELECT storage_name FROM kyc_documents WHERE id = $1',
    [id],
  );
  return row!.storage_name;
}

async function contentsRows(harness: Harness): Promise<number> {
  const [row] = await harness.container.db.query<{ count: number }>(
    'SELECT count(*)::int AS count FROM kyc_document_contents',
  );
  return row!.count;
}

const dataDirs: string[] = [];
function tempDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-documents-store-'));
  dataDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describeEachDatabase(
  'KYC documents: where the bytes are kept, and downloads',
  (harness) => {
    let partner: TestAccount;
    let mid: string;
    let DATA_DIR: string;
    beforeAll(async () => {
      DATA_DIR = harness().container.config.dataDir;
      partner = await harness().partner();
      mid = await newMerchant(harness(), partner);
    });

    it('keeps the bytes in the database on PostgreSQL and in the data folder on PGlite', async () => {
      const filesBefore = filesIn(DATA_DIR).length;
      const rowsBefore = await contentsRows(harness());
      const document = await upload(harness(), partner, mid, FILES.pdf);
      const name = await storageName(harness(), document.id);
      if (harness().kind === 'postgres') {
        expect(harness().container.services.documents.storedIn).toBe('database');
        expect(filesIn(DATA_DIR)).toHaveLength(0);
        const [row] = await harness().container.db.query<{ content: Buffer }>(
          'SELECT content FROM kyc_document_contents WHERE storage_name = $1',
          [name],
        );
        expect(Buffer.compare(row!.content, FILES.pdf)).toBe(0);
        expect(sha256(row!.content)).toBe(document.sha256);
      } else {
        expect(harness().container.services.documents.storedIn).toBe('folder');
        expect(filesIn(DATA_DIR)).toHaveLength(filesBefore + 1);
        expect(filesIn(DATA_DIR)).toContain(name);
        expect(sha256(fs.readFileSync(path.join(DATA_DIR, 'documents', name)))).toBe(document.sha256);
        expect(await contentsRows(harness())).toBe(rowsBefore);
      }
    });

    it('downloads the bytes as uploaded, with the detected type and the id as the file name', async () => {
      const document = await upload(harness(), partner, mid, FILES.png);
      const response = await download(harness().app, partner, mid, document.id);
      expect(response.statusCode, response.body).toBe(200);
      expect(Buffer.compare(response.rawPayload, FILES.png)).toBe(0);
      expect(response.headers['content-type']).toBe('image/png');
      expect(response.headers['content-disposition']).toBe(`attachment; filename="${document.id}.png"`);
      expect(response.headers['cache-control']).toBe('private, no-store');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
    });

    it("answers 404 for an unknown document, another merchant's and another partner's", async () => {
      const document = await upload(harness(), partner, mid, FILES.pdf);
      const unknown = await download(harness().app, partner, mid, 'doc_00000000000000000000000000');
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().error.code).toBe('resource_not_found');
      const otherMerchant = await newMerchant(harness(), partner);
      const wrongMerchant = await download(harness().app, partner, otherMerchant, document.id);
      expect(wrongMerchant.statusCode).toBe(404);
      expect(wrongMerchant.json().error.code).toBe('resource_not_found');
      const stranger = await harness().partner('Stranger');
      const foreign = await download(harness().app, stranger, mid, document.id);
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json().error.code).toBe('resource_not_found');
      const unauthenticated = await harness().app.inject({
        method: 'GET',
        url: `/v1/api-portal/merchants/${mid}/kyc-documents/${document.id}/file`,
      });
      expect(unauthenticated.statusCode).toBe(401);
    });

    it('refuses to hand out bytes that no longer match the SHA-256, without saying why', async () => {
      const document = await upload(harness(), partner, mid, FILES.jpeg);
      const name = await storageName(harness(), document.id);
      const changed = Buffer.concat([FILES.jpeg, Buffer.from('x')]);
      if (harness().kind === 'postgres') {
        await harness().container.db.query(
          'UPDATE kyc_document_contents SET content = $2 WHERE storage_name = $1',
          [name, changed],
        );
      } else {
        fs.writeFileSync(path.join(DATA_DIR, 'documents', name), changed);
      }
      const response = await download(harness().app, partner, mid, document.id);
      expect(response.statusCode).toBe(500);
      expect(response.json().error.code).toBe('internal_error');
      expect(response.body).not.toContain('SHA-256');
    });
  },
  () => ({ KOSH_DATA_DIR: tempDataDir() }),
);

/** Two Kosh hosts on one PostgreSQL database, each with a data folder of its own. */
describe('KYC documents on two hosts sharing PostgreSQL', () => {
  const firstDir = tempDataDir();
  const secondDir = tempDataDir();
  let first: Harness;
  let second: SecondHost;
  let partner: TestAccount;
  let mid: string;

  beforeAll(async () => {
    first = await createHarness('postgres', { KOSH_DATA_DIR: firstDir });
    second = await startSecondHost(first, { KOSH_DATA_DIR: secondDir });
    partner = await first.partner();
    mid = await newMerchant(first, partner);
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  async function kosh(dataDir: string, ...args: string[]) {
    return koshCommand(['documents', 'migrate', ...args, '--data-dir', dataDir]);
  }

  async function koshCommand(args: string[]) {
    const url = (first.container.db as { url?: string }).url!;
    try {
      const { stdout, stderr } = await run(process.execPath, [MAIN, ...args, '--database-url', url], {
        cwd: ROOT,
        env: {
          ...process.env,
          KOSH_LOG_LEVEL: 'silent',
          KOSH_ENCRYPTION_KEY: first.container.config.encryptionKey!.toString('base64'),
        },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  }

  /** A document as Kosh stored it before its bytes went into the database: a row and a file. */
  async function storedTheOldWay(content: Buffer, dataDir = firstDir) {
    const document = await upload(first, partner, mid, content);
    const name = await storageName(first, document.id);
    fs.mkdirSync(path.join(dataDir, 'documents'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(dataDir, 'documents', name), content, { mode: 0o600 });
    await first.container.db.query('DELETE FROM kyc_document_contents WHERE storage_name = $1', [name]);
    return { ...document, name, file: path.join(dataDir, 'documents', name) };
  }

  it('an upload to one host leaves no file and downloads from the other', async () => {
    const document = await upload(first, partner, mid, FILES.pdf);
    expect(filesIn(firstDir)).toEqual([]);
    const response = await download(second.app, partner, mid, document.id);
    expect(response.statusCode, response.body).toBe(200);
    expect(Buffer.compare(response.rawPayload, FILES.pdf)).toBe(0);
    expect(response.headers['content-type']).toBe('application/pdf');
    expect(filesIn(secondDir)).toEqual([]);
  });

  it('kosh documents migrate moves a file stored the old way, and a second run finds nothing to move', async () => {
    const old = await storedTheOldWay(FILES.png);
    // Before: only the host with the file can serve it.
    expect((await download(first.app, partner, mid, old.id)).statusCode).toBe(200);
    expect((await download(second.app, partner, mid, old.id)).statusCode).toBe(500);

    const moved = await kosh(firstDir, '--json');
    expect(moved.stderr).toBe('');
    expect(moved.code).toBe(0);
    const report = JSON.parse(moved.stdout);
    expect(report).toMatchObject({ moved: 1, missing_file: 0, hash_mismatch: 0 });
    expect(fs.existsSync(old.file)).toBe(false);
    const fromSecond = await download(second.app, partner, mid, old.id);
    expect(fromSecond.statusCode).toBe(200);
    expect(Buffer.compare(fromSecond.rawPayload, FILES.png)).toBe(0);

    const again = await kosh(firstDir, '--json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      moved: 0,
      already_stored: report.already_stored + 1,
      missing_file: 0,
      hash_mismatch: 0,
    });

    // Killed after the commit and before the file was deleted: the next run deletes the file.
    const leftOver = path.join(firstDir, 'documents', old.name);
    fs.writeFileSync(leftOver, FILES.png);
    const text = await kosh(firstDir);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^moved\s+0$/m);
    expect(text.stdout).toMatch(/^already_stored\s+\d+$/m);
    expect(fs.existsSync(leftOver)).toBe(false);
  });

  it('kosh migrate --json says in JSON which migrations it applied: none on a migrated database', async () => {
    const migrated = await koshCommand(['migrate', '--json']);
    expect(migrated.stderr).toBe('');
    expect(migrated.code).toBe(0);
    expect(JSON.parse(migrated.stdout)).toEqual({ applied: [] });
    const text = await koshCommand(['migrate']);
    expect(text.stdout).toBe('The database is up to date.\n');
  });

  it('reports a hash mismatch and a missing file, leaves them as they are and exits non-zero', async () => {
    const tampered = await storedTheOldWay(FILES.jpeg);
    fs.writeFileSync(tampered.file, Buffer.concat([FILES.jpeg, Buffer.from('tampered')]));
    const elsewhere = await storedTheOldWay(FILES.pdf, secondDir);
    const good = await storedTheOldWay(FILES.png);

    const result = await kosh(firstDir, '--json');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ moved: 1, missing_file: 1, hash_mismatch: 1 });
    expect(result.stderr).toContain('2 document(s) not moved');
    expect(fs.existsSync(tampered.file)).toBe(true);
    expect(fs.existsSync(good.file)).toBe(false);
    expect((await download(second.app, partner, mid, good.id)).statusCode).toBe(200);
    expect((await download(second.app, partner, mid, tampered.id)).statusCode).toBe(500);

    // The host that has the missing file moves it; the tampered one stays a problem.
    const there = await kosh(secondDir, '--json');
    expect(JSON.parse(there.stdout)).toMatchObject({ moved: 1, missing_file: 1, hash_mismatch: 0 });
    expect(there.code).toBe(1);
    expect(fs.existsSync(elsewhere.file)).toBe(false);
    const fromFirst = await download(first.app, partner, mid, elsewhere.id);
    expect(Buffer.compare(fromFirst.rawPayload, FILES.pdf)).toBe(0);
  });

  it('on PGlite explains that the data folder is the store and exits 0', async () => {
    const dataDir = tempDataDir();
    const env: NodeJS.ProcessEnv = { ...process.env, KOSH_LOG_LEVEL: 'silent' };
    delete env.DATABASE_URL;
    const { stdout } = await run(process.execPath, [MAIN, 'documents', 'migrate', '--data-dir', dataDir], {
      cwd: ROOT,
      env,
    });
    expect(stdout).toContain('Nothing to migrate');
    expect(stdout).toContain(path.join(dataDir, 'documents'));
    // Nothing was opened or created in the data folder.
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });
});
