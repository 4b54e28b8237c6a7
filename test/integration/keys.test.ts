import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser.js';
import { createEmptyPostgresDatabase } from '../helpers/databases.js';
import { basicAuth, describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { proprietorBody } from '../helpers/onboarding.js';
import { freePort, type KoshProcess, runKosh } from '../helpers/process.js';

/**
 * Key management: list, roll (the old key works for the chosen overlap, then stops) and revoke
 * (stops at once) an account's own keys and, for a partner, its merchants' keys; a test key never
 * reaches live keys; and a revoked key is refused at once by every process of a server.
 */
describeEachDatabase('API keys', (harness) => {
  let merchant: TestAccount;

  beforeAll(async () => {
    merchant = await harness().merchant('Key Shop');
  });

  const status = async (auth: string) =>
    (await harness().request('GET', '/v1/payments/methods/', { auth })).statusCode;

  it('never issues a live key to the sandbox partner or the sandbox merchant, however it is asked for', async () => {
    const { accounts } = harness().container.services;
    for (const kind of ['partner', 'merchant'] as const) {
      const { account } = await accounts.createAccountWithTestKey({
        kind,
        name: `Sandbox ${kind}`,
        status: 'activated',
        sandbox: true,
      });
      const refused = accounts.issueKey(account.id, 'live');
      await expect(refused).rejects.toMatchObject({ code: 'account_not_activated' });
      await expect(refused).rejects.toThrow(/is a sandbox account and can hold only test keys/);
      await expect(
        harness().container.db.query(
          `INSERT INTO api_keys (api_key, account_id, mode, secret_hash) VALUES ($1, $2, 'live', '\\x00')`,
          [`key_live_forged_${kind}`, account.id],
        ),
      ).rejects.toMatchObject({ code: '23514', constraint: 'api_keys_test_only_for_sandbox_accounts' });
      expect((await accounts.issueKey(account.id, 'test')).api_key).toMatch(/^key_test_/);
    }
    // An account created for live payments still gets its live key.
    const { account: real } = await accounts.createAccountWithTestKey({
      kind: 'partner',
      name: 'Real platform',
      status: 'activated',
    });
    expect((await accounts.issueKey(real.id, 'live')).api_key).toMatch(/^key_live_/);
  });

  it('holds every account name to the API display_name rule, however the account is made', async () => {
    const { accounts } = harness().container.services;
    for (const name of [
      '   ',
      'x',
      'y'.repeat(101),
      '  \u001b[31mRED\u001b[0m',
      'Shop\nTwo',
      'Shop \u202eevil',
    ]) {
      await expect(accounts.createAccountWithTestKey({ kind: 'partner', name })).rejects.toMatchObject({
        code: 'invalid_field',
        field: 'name',
      });
    }
    const { account } = await accounts.createAccountWithTestKey({ kind: 'merchant', name: '  Corner Shop ' });
    expect(account.name).toBe('Corner Shop');
  });

  it('lists the account’s keys of the request’s mode, without secrets', async () => {
    const response = await harness().request('GET', '/v1/keys/', { auth: merchant });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().data).toEqual([
      {
        api_key: merchant.credentials.api_key,
        entity: 'api_key',
        mode: 'test',
        status: 'active',
        created_at: expect.any(Number),
        expires_at: null,
        revoked_at: null,
      },
    ]);
    expect(response.body).not.toContain(merchant.credentials.secret_key);
  });

  it('rolls a key: the new one works, the old one until the overlap ends, then never', async () => {
    const account = await harness().merchant('Rolling Shop');
    expect(await status(account.auth)).toBe(200);
    const rolled = await harness().request('POST', `/v1/keys/${account.credentials.api_key}/roll/`, {
      auth: account,
      json: { overlap_seconds: 60 },
    });
    expect(rolled.statusCode, rolled.body).toBe(200);
    const fresh = rolled.json().data;
    expect(fresh).toMatchObject({
      api_key: expect.stringMatching(/^key_test_/),
      secret_key: expect.stringMatching(/^sk_test_/),
      mode: 'test',
      previous: { api_key: account.credentials.api_key, status: 'expiring' },
    });
    const freshAuth = basicAuth(fresh);
    expect(await status(freshAuth)).toBe(200);
    expect(await status(account.auth)).toBe(200);
    harness().clock.advance(59_000);
    expect(await status(account.auth)).toBe(200);
    harness().clock.advance(2_000);
    expect(await status(account.auth)).toBe(401);
    expect(await status(freshAuth)).toBe(200);
    const again = await harness().request('POST', `/v1/keys/${account.credentials.api_key}/roll/`, {
      auth: freshAuth,
      json: {},
    });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('state_conflict');
  });

  it('revokes a key: refused at once, even by the process that had it cached', async () => {
    const account = await harness().merchant('Leaky Shop');
    const spare = await harness().request('POST', `/v1/keys/${account.credentials.api_key}/roll/`, {
      auth: account,
      json: { overlap_seconds: 3_600 },
    });
    const spareAuth = basicAuth(spare.json().data);
    expect(await status(account.auth)).toBe(200);
    const revoked = await harness().request('DELETE', `/v1/keys/${account.credentials.api_key}/`, {
      auth: spareAuth,
    });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json().data).toMatchObject({ status: 'revoked', revoked_at: expect.any(Number) });
    expect(await status(account.auth)).toBe(401);
    expect(await status(spareAuth)).toBe(200);
  });

  it('never reaches another account’s key or a key of the other mode (404), nor refuses bad input with a 500', async () => {
    const other = await harness().merchant('Other Key Shop');
    for (const [method, url] of [
      ['POST', `/v1/keys/${other.credentials.api_key}/roll/`],
      ['DELETE', `/v1/keys/${other.credentials.api_key}/`],
      ['DELETE', '/v1/keys/key_test_nope/'],
    ] as const) {
      const response = await harness().request(method, url, {
        auth: merchant,
        json: method === 'POST' ? {} : undefined,
      });
      expect(response.statusCode, url).toBe(404);
    }
    expect(await status(other.auth)).toBe(200);
    const live = await harness().liveKey(await harness().merchant('Mixed Shop'));
    const testKey = (await harness().request('GET', '/v1/keys/', { auth: live })).json().data;
    expect(testKey.every((key: { mode: string }) => key.mode === 'live')).toBe(true);
    for (const body of [
      { overlap_seconds: -1 },
      { overlap_seconds: 604_801 },
      { overlap_seconds: '60' },
      { grace: 1 },
    ]) {
      const response = await harness().request('POST', `/v1/keys/${merchant.credentials.api_key}/roll/`, {
        auth: merchant,
        json: body,
      });
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
    }
  });

  it("lets a partner roll and revoke its merchants' keys, and no other partner's", async () => {
    const partner = await harness().partner('Key Partner');
    const stranger = await harness().partner('Stranger Partner');
    const onboarded = await harness().request('POST', '/v1/api-portal/merchants/', {
      auth: partner,
      json: proprietorBody(),
    });
    expect(onboarded.statusCode, onboarded.body).toBe(200);
    const created = onboarded.json().data;
    const child = {
      id: created.id as string,
      credentials: created.credentials,
      auth: basicAuth(created.credentials),
    };
    const listed = await harness().request('GET', `/v1/api-portal/merchants/${child.id}/keys/`, {
      auth: partner,
    });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().data.map((key: { api_key: string }) => key.api_key)).toEqual([
      child.credentials.api_key,
    ]);
    const foreign = await harness().request(
      'DELETE',
      `/v1/api-portal/merchants/${child.id}/keys/${child.credentials.api_key}/`,
      {
        auth: stranger,
      },
    );
    expect(foreign.statusCode).toBe(404);
    expect(await status(child.auth)).toBe(200);
    const revoked = await harness().request(
      'DELETE',
      `/v1/api-portal/merchants/${child.id}/keys/${child.credentials.api_key}/`,
      {
        auth: partner,
      },
    );
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(await status(child.auth)).toBe(401);
  });
});

describe('a revoked key on a two-worker PostgreSQL server', () => {
  let server: KoshProcess | undefined;
  let database: Awaited<ReturnType<typeof createEmptyPostgresDatabase>>;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-keys-'));

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  interface MethodsBody {
    upi: { intent: boolean };
  }

  it('is refused at once by every worker, whatever each had cached (and a methods change is offered by every worker at once)', async () => {
    database = await createEmptyPostgresDatabase();
    const port = await freePort();
    server = runKosh(['serve', '--workers', '2'], {
      DATABASE_URL: database.url,
      KOSH_DATA_DIR: dataDir,
      KOSH_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      PORT: String(port),
      KOSH_PUBLIC_URL: `http://127.0.0.1:${port}`,
      KOSH_RATE_LIMIT_TEST_PER_SECOND: '0',
      // Forty refused requests from one address would otherwise be throttled (429) instead.
      KOSH_AUTH_FAILURE_LIMIT: '0',
      // Longer than the test: only the notification can make a worker drop its cached methods.
      KOSH_METHODS_CACHE_TTL_MS: '600000',
    });
    await server.waitFor(/Kosh is serving/, 120_000);
    const base = `http://127.0.0.1:${port}`;
    const { merchant, partner } = JSON.parse(
      fs.readFileSync(path.join(dataDir, 'sandbox-credentials.json'), 'utf8'),
    );
    const auth = basicAuth(merchant);
    // A fresh connection per request, so both workers answer and cache the key (30 s by default).
    const methodsOf = (key: string) =>
      fetch(`${base}/v1/payments/methods/`, { headers: { authorization: key, connection: 'close' } });
    const ask = async (key: string) => (await methodsOf(key)).status;

    // A partner's methods change made through one worker is offered by both within a second.
    const asPartner = (method: string, url: string, body: unknown) =>
      fetch(`${base}${url}`, {
        method,
        headers: {
          authorization: basicAuth(partner),
          'content-type': 'application/json',
          connection: 'close',
        },
        body: JSON.stringify(body),
      });
    const onboarded = await asPartner('POST', '/v1/api-portal/merchants/', proprietorBody());
    expect(onboarded.status).toBe(200);
    const mid = ((await onboarded.json()) as { data: { id: string } }).data.id;
    const issued = await asPartner('POST', `/v1/api-portal/merchants/${mid}/keys/`, { mode: 'test' });
    expect(issued.status).toBe(200);
    const child = basicAuth(
      ((await issued.json()) as { data: { api_key: string; secret_key: string } }).data,
    );
    const upiIntent = async () =>
      new Set(
        await Promise.all(
          Array.from(
            { length: 40 },
            async () => ((await (await methodsOf(child)).json()) as MethodsBody).upi.intent,
          ),
        ),
      );
    expect(await upiIntent()).toEqual(new Set([true]));
    const changed = await asPartner('PATCH', `/v1/api-portal/merchants/${mid}/methods/`, {
      upi: { intent: false, collect: false },
    });
    expect(changed.status).toBe(200);
    const changedBy = Date.now() + 1_000;
    let offered = await upiIntent();
    while (offered.has(true) && Date.now() < changedBy) offered = await upiIntent();
    expect(offered).toEqual(new Set([false]));
    const answers = await Promise.all(Array.from({ length: 40 }, () => ask(auth)));
    expect(new Set(answers)).toEqual(new Set([200]));
    const revoked = await fetch(`${base}/v1/keys/${merchant.api_key}/`, {
      method: 'DELETE',
      headers: { authorization: auth, connection: 'close' },
    });
    expect(revoked.status).toBe(200);
    // The other worker hears of it from the database's notification, not from its cache's TTL.
    const refusedEverywhere = async (key: string) => {
      const deadline = Date.now() + 2_000;
      let after: number[] = [];
      do {
        after = await Promise.all(Array.from({ length: 40 }, () => ask(key)));
      } while (after.some((code) => code !== 401) && Date.now() < deadline);
      return new Set(after);
    };
    expect(await refusedEverywhere(auth)).toEqual(new Set([401]));

    // The same in the dashboard, in Chromium: a key created there, cached by both workers, revoked there.
    const browser = await launchBrowser();
    try {
      const page = await browser.context.newPage();
      await page.goto(`${base}/dashboard/login/`);
      await page.fill('input[name="email"]', merchant.dashboard.email);
      await page.fill('input[name="password"]', merchant.dashboard.password);
      await page.click('button:has-text("Log in")');
      await page.waitForURL(`${base}/dashboard/`);
      await page.click('nav >> text=API keys');
      await page.click('button:has-text("Create a test key")');
      const notice = (await page.locator('[role="status"]').textContent()) as string;
      const apiKey = /Key (key_test_\w+) created/.exec(notice)?.[1] as string;
      const fresh = basicAuth({
        api_key: apiKey,
        secret_key: (await page.locator('[data-secret]').textContent()) as string,
      });
      expect(new Set(await Promise.all(Array.from({ length: 40 }, () => ask(fresh))))).toEqual(
        new Set([200]),
      );
      await page.locator(`tr[data-key="${apiKey}"] button:has-text("Revoke")`).click();
      await page.waitForURL(/done=revoked/);
      expect(await refusedEverywhere(fresh)).toEqual(new Set([401]));
    } finally {
      await browser.close();
    }
  }, 150_000);
});
