import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { BANK, proprietorBody, uploadDocument } from '../helpers/onboarding.js';
import { MAIN } from '../helpers/process.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

/** The operator commands, run as a separate `kosh` process against the same PostgreSQL database. */
describe('kosh merchant activate|clarify|suspend', () => {
  let harness: Harness;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-onboarding-cli-'));
  beforeAll(async () => {
    harness = await createHarness('postgres', { KOSH_DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await harness?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function kosh(...args: string[]) {
    const url = (harness.container.db as { url?: string }).url!;
    try {
      const { stdout } = await run(
        process.execPath,
        [MAIN, ...args, '--database-url', url, '--data-dir', dataDir],
        {
          cwd: ROOT,
          env: {
            ...process.env,
            KOSH_LOG_LEVEL: 'silent',
            KOSH_ENCRYPTION_KEY: harness.container.config.encryptionKey?.toString('base64'),
          },
        },
      );
      return { code: 0, stdout, stderr: '' };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  }

  it('activates a merchant under review, refuses a second activation, suspends it', async () => {
    const partner = await harness.liveKey(await harness.partner('CLI partner'));
    const created = await harness.request('POST', '/v1/api-portal/merchants/', {
      auth: partner,
      json: proprietorBody(),
    });
    const mid = created.json().data.id;

    // The refusals that do not depend on the merchant's state run with the first one: each call
    // is a process start, the slow part of this test.
    // A merchant made by `kosh merchant create` has no onboarding review: it is suspended and
    // activated as an account, and there is nothing to clarify.
    const direct = await harness.merchant('Direct shop');
    const [early, clarify, missing, directSuspended, directClarify, noPartner] = await Promise.all([
      kosh('merchant', 'activate', mid),
      kosh('merchant', 'clarify', mid),
      kosh('merchant', 'activate', 'mid_00000000000000000000000000'),
      kosh('merchant', 'suspend', direct.id, '--json'),
      kosh('merchant', 'clarify', direct.id, '--reason', 'Which shop?'),
      kosh('merchant', 'create', '--name', 'Child', '--partner', 'ptr_00000000000000000000000000'),
    ]);
    expect(JSON.parse(directSuspended.stdout)).toEqual({
      merchant_id: direct.id,
      status: 'suspended',
      mode: null,
    });
    const directBlocked = await harness.request('GET', '/v1/payments/methods/', { auth: direct });
    expect(directBlocked.statusCode).toBe(403);
    expect(directClarify.code).toBe(1);
    expect(directClarify.stderr).toContain('was not onboarded through a partner');
    expect(noPartner.code).toBe(1);
    expect(noPartner.stderr).toContain("kosh: No partner with id 'ptr_00000000000000000000000000'.");
    expect(early.code).toBe(1);
    expect(early.stderr).toContain('still due: bank_details');

    await harness.request('POST', `/v1/api-portal/merchants/bank-details/${mid}/`, {
      auth: partner,
      json: BANK,
    });
    await uploadDocument(harness, partner, mid, 'pan');
    await uploadDocument(harness, partner, mid, 'address_proof');

    const activated = await kosh('merchant', 'activate', mid, '--json');
    expect(activated.code).toBe(0);
    expect(JSON.parse(activated.stdout)).toEqual({ merchant_id: mid, status: 'activated', mode: 'live' });
    const again = await kosh('merchant', 'activate', mid);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('is activated');

    const [suspended, directActivated] = await Promise.all([
      kosh('merchant', 'suspend', mid, '--json'),
      kosh('merchant', 'activate', direct.id, '--json'),
    ]);
    expect(JSON.parse(directActivated.stdout)).toEqual({
      merchant_id: direct.id,
      status: 'activated',
      mode: null,
    });
    expect((await harness.request('GET', '/v1/payments/methods/', { auth: direct })).statusCode).toBe(200);
    expect(JSON.parse(suspended.stdout).status).toBe('suspended');
    const fetched = await harness.request('GET', `/v1/api-portal/merchants/${mid}/`, { auth: partner });
    expect(fetched.json().data.status).toBe('suspended');

    expect(clarify.code).toBe(64);
    expect(clarify.stderr).toContain('--reason is required');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No merchant');
    // Four rounds of `kosh` process starts: more than the in-process tests' 30 s on a loaded machine.
  }, 90_000);
});
