import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEmptyPostgresDatabase } from '../helpers/databases.js';
import { authHeader, koshProcesses, type SandboxCredentials } from '../helpers/kosh-serve.js';
import { runKosh } from '../helpers/process.js';

const { tempDir, serve } = koshProcesses();

// Every case has its own database and data folder, so they run at once.
describe.concurrent('the kosh command on PostgreSQL', { timeout: 240_000 }, () => {
  describe('kosh serve with DATABASE_URL', () => {
    it('bootstraps the sandbox on an empty PostgreSQL database too', async () => {
      const database = await createEmptyPostgresDatabase();
      try {
        const dataDir = tempDir();
        const server = await serve({
          DATABASE_URL: database.url,
          KOSH_DATA_DIR: dataDir,
          KOSH_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        });
        const credentials: SandboxCredentials = JSON.parse(
          fs.readFileSync(path.join(dataDir, 'sandbox-credentials.json'), 'utf8'),
        );
        const methods = await fetch(`${server.url}/v1/payments/methods/`, {
          headers: { authorization: authHeader(credentials.merchant) },
        });
        expect(methods.status).toBe(200);
        expect(((await methods.json()) as { entity: string }).entity).toBe('methods');
        await server.process.stop();
      } finally {
        await database.drop();
      }
    });

    it('refuses a data folder the sandbox credentials cannot be written to before creating the sandbox', async () => {
      const database = await createEmptyPostgresDatabase();
      try {
        const aFile = path.join(tempDir(), 'not-a-folder');
        fs.writeFileSync(aFile, '');
        const key = randomBytes(32).toString('base64');
        const started = runKosh(['serve', '--workers', '1'], {
          DATABASE_URL: database.url,
          KOSH_DATA_DIR: aFile,
          KOSH_ENCRYPTION_KEY: key,
          PORT: '0',
        });
        expect(await started.exited).toBe(1);
        expect(started.output()).toContain(
          `kosh: cannot use the data folder ${aFile} (KOSH_DATA_DIR, or --data-dir): it is a file, not a folder.`,
        );
        expect(started.output()).not.toMatch(/\n\s+at |secret_key/);
        // No sandbox was made whose secrets nobody saw: a start with a usable folder makes and prints it.
        const dataDir = tempDir();
        const server = await serve({
          DATABASE_URL: database.url,
          KOSH_DATA_DIR: dataDir,
          KOSH_ENCRYPTION_KEY: key,
        });
        expect(fs.existsSync(path.join(dataDir, 'sandbox-credentials.json'))).toBe(true);
        await server.process.stop();
      } finally {
        await database.drop();
      }
    });

    it('answers /metrics for the whole server under --workers 2, whichever worker takes it', async () => {
      const database = await createEmptyPostgresDatabase();
      try {
        const server = await serve(
          {
            DATABASE_URL: database.url,
            KOSH_DATA_DIR: tempDir(),
            KOSH_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
            KOSH_REQUEST_LOG: 'false',
          },
          ['--workers', '2'],
        );
        // A fresh connection per request: node:cluster deals connections to the workers in turn.
        const get = (pathname: string) =>
          fetch(`${server.url}${pathname}`, { headers: { connection: 'close' } });
        const requests = 40;
        for (let i = 0; i < requests; i++) expect((await get('/healthz')).status).toBe(200);
        const healthzCount =
          /^kosh_http_request_duration_seconds_count\{[^}]*route="\/healthz"[^}]*\} (\d+)$/gm;
        // Enough answers that both workers give some: each must show every request, not its share.
        for (let i = 0; i < 6; i++) {
          const metrics = await get('/metrics');
          const text = await metrics.text();
          expect(metrics.status, text).toBe(200);
          expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
          const counted = [...text.matchAll(healthzCount)].reduce((sum, match) => sum + Number(match[1]), 0);
          expect(counted, text).toBe(requests);
        }
        await server.process.stop();
      } finally {
        await database.drop();
      }
    });
  });
});
