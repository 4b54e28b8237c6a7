import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { createHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { proprietorBody } from '../helpers/onboarding.js';

/**
 * No issued secret is stored readable: every secret the test issues (API secret keys of partners
 * and merchants, webhook signing secrets, return signing secrets), with and without an
 * Idempotency-Key (whose answer is kept for replay), is looked for in a `pg_dump` of the
 * PostgreSQL database, and in every file of the embedded database's data folder and a logical
 * dump of every table (the files alone could hide a value in a compressed page).
 */
function filesUnder(folder: string): string[] {
  return fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    return entry.isDirectory() ? filesUnder(full) : entry.isFile() ? [full] : [];
  });
}

for (const kind of DATABASE_KINDS) {
  describe(`security: no secret at rest [${kind}]`, () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-secrets-'));
    let harness: Harness;
    let databaseUrl: string | undefined;
    const issued = new Set<string>();
    let closed = false;

    beforeAll(async () => {
      harness = await createHarness(
        kind,
        { KOSH_DATA_DIR: folder },
        kind === 'pglite' ? { pgliteDir: path.join(folder, 'pgdata') } : {},
      );
      databaseUrl = (harness.container.db as { url?: string }).url;
    });
    afterAll(async () => {
      if (!closed) await harness?.close();
      fs.rmSync(folder, { recursive: true, force: true });
    });

    const remember = (...values: (string | undefined)[]) => {
      for (const value of values) {
        expect(value, 'a secret was issued').toBeTruthy();
        issued.add(value as string);
      }
    };

    /** Sends the request twice with one key: the replay must give the very secret back (it was kept, encrypted). */
    async function keyed(account: TestAccount, method: 'POST', url: string, json: unknown, key: string) {
      const first = await harness.request(method, url, {
        auth: account,
        json,
        headers: { 'idempotency-key': key },
      });
      expect(first.statusCode, first.body).toBe(200);
      const replay = await harness.request(method, url, {
        auth: account,
        json,
        headers: { 'idempotency-key': key },
      });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toBe(first.body);
      return first.json();
    }

    it('issues secrets of every kind, with and without Idempotency-Key', async () => {
      const partner = await harness.partner('Secret partner');
      const merchant = await harness.merchant('Secret merchant');
      remember(partner.credentials.secret_key, merchant.credentials.secret_key);

      const created = await keyed(
        partner,
        'POST',
        '/v1/api-portal/merchants/',
        proprietorBody(),
        'secret-merchant',
      );
      remember(created.data.credentials.secret_key);
      const unkeyed = await harness.request('POST', '/v1/api-portal/merchants/', {
        auth: partner,
        json: proprietorBody(),
      });
      remember(unkeyed.json().data.credentials.secret_key);
      const key = await keyed(
        partner,
        'POST',
        `/v1/api-portal/merchants/${created.data.id}/keys/`,
        { mode: 'test' },
        'secret-key',
      );
      remember(key.data.secret_key);

      const endpoint = await keyed(
        merchant,
        'POST',
        '/v1/webhooks/',
        { url: 'http://127.0.0.1:9/hook' },
        'secret-whk',
      );
      remember(endpoint.data.secret);
      const rotated = await keyed(
        merchant,
        'POST',
        `/v1/webhooks/${endpoint.data.id}/rotate-secret/`,
        {},
        'secret-rot',
      );
      remember(rotated.data.secret);
      const plain = await harness.request('POST', '/v1/webhooks/', {
        auth: merchant,
        json: { url: 'http://127.0.0.1:9/other' },
      });
      remember(plain.json().data.secret);
      const rss = await harness.request('GET', '/v1/payments/return-signing-secret/', { auth: merchant });
      remember(rss.json().data.secret);
      // A live provider account's secrets: sent by the merchant, never to be found stored in clear.
      const live = await harness.liveKey(merchant);
      const providerSecrets = { key_secret: `rzs_${randomUUID()}`, webhook_secret: `rzw_${randomUUID()}` };
      await keyed(
        live,
        'POST',
        '/v1/connector-accounts/',
        { connector: 'razorpay', credentials: { key_id: 'rzp_live_secrets', ...providerSecrets } },
        'secret-ca',
      );
      remember(providerSecrets.key_secret, providerSecrets.webhook_secret);
      expect(issued.size).toBe(11);
    });

    it('finds none of them anywhere in what the database stores', async () => {
      expect(issued.size).toBe(11);
      const haystacks: { name: string; content: Buffer }[] = [];
      // A logical dump of every table, as the database returns it (decompressed).
      const tables = await harness.container.db.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
      );
      expect(tables.length).toBeGreaterThan(10);
      for (const { table_name } of tables) {
        const rows = await harness.container.db.query<{ row: string }>(
          `SELECT t::text AS row FROM "${table_name}" t`,
        );
        haystacks.push({
          name: `table ${table_name}`,
          content: Buffer.from(rows.map((r) => r.row).join('\n')),
        });
      }
      if (kind === 'postgres') {
        const dump = execFileSync('pg_dump', ['--data-only', '--dbname', databaseUrl as string], {
          maxBuffer: 256 * 1024 * 1024,
        });
        expect(dump.toString()).toContain('COPY public.webhook_endpoints');
        haystacks.push({ name: 'pg_dump', content: dump });
      }
      await harness.close();
      closed = true;
      // Every file Kosh wrote in its data folder: the embedded database's files, its key, documents.
      const files = filesUnder(folder);
      if (kind === 'pglite') expect(files.some((file) => file.includes('pgdata'))).toBe(true);
      for (const file of files)
        haystacks.push({ name: path.relative(folder, file), content: fs.readFileSync(file) });
      for (const secret of issued) {
        // As text, and as the hex PostgreSQL writes bytea in (a stored answer is bytea).
        const forms = [secret, Buffer.from(secret).toString('hex')];
        for (const haystack of haystacks) {
          for (const form of forms) {
            expect(haystack.content.includes(form), `a secret in ${haystack.name}`).toBe(false);
          }
        }
      }
    });
  });
}
