import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from './support/postgres-instance.js';
import { koshCommand, Service } from './support/service.js';
import { httpClient } from './support/workload.js';

describe('a second process on the same PGlite folder', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-faults-lite-'));
  const env: NodeJS.ProcessEnv = { ...process.env, KOSH_DATA_DIR: dataDir, KOSH_LOG_LEVEL: 'info' };
  delete env.DATABASE_URL;
  let first: Service | undefined;

  afterAll(async () => {
    await first?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function refused(args: string[]): Promise<{ code: number; stderr: string }> {
    try {
      await koshCommand(args, env);
    } catch (error) {
      const failed = error as { code: number; stderr: string };
      return { code: failed.code, stderr: failed.stderr };
    }
    throw new Error(`kosh ${args.join(' ')} was not refused`);
  }

  it('is refused with a clear message while the first keeps serving', async () => {
    first = new Service(await freePort(), env);
    await first.start();
    const { merchant } = JSON.parse(fs.readFileSync(path.join(dataDir, 'sandbox-credentials.json'), 'utf8'));
    const auth = `Basic ${Buffer.from(`${merchant.api_key}:${merchant.secret_key}`).toString('base64')}`;
    const client = httpClient(() => first!.url, auth, 10_000);
    const before = await client.request('POST', '/v1/orders/', { amount: 5000, currency: 'INR' });
    expect(before.status).toBe(200);

    const secondServe = await refused(['serve', '--port', String(await freePort())]);
    process.stdout.write(
      `[pglite lock] second serve: exit ${secondServe.code}: ${secondServe.stderr.trim()}\n`,
    );
    // An admin command is run by the serving process, through its admin channel.
    const viaServer = JSON.parse(
      (await koshCommand(['merchant', 'create', '--name', 'Through the server', '--json'], env)).stdout,
    );
    expect(viaServer.account_id).toMatch(/^mid_/);
    const asNew = `Basic ${Buffer.from(`${viaServer.api_key}:${viaServer.secret_key}`).toString('base64')}`;
    const newMerchant = httpClient(() => first!.url, asNew, 10_000);
    expect((await newMerchant.request('GET', '/v1/orders/')).status).toBe(200);
    // Without the channel (a process that does not offer one), the command says why it cannot run.
    fs.rmSync(path.join(dataDir, 'admin', 'kosh.sock'));
    const secondAdmin = await refused(['merchant', 'create', '--name', 'Intruder']);
    expect(secondAdmin.stderr).toContain('admin channel');
    for (const second of [secondServe, secondAdmin]) {
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(
        `The data folder ${dataDir} is in use by another Kosh process (pid ${first.child!.pid})`,
      );
      expect(second.stderr).toContain('DATABASE_URL');
    }

    expect(first.alive).toBe(true);
    const fetched = await client.request('GET', `/v1/orders/${before.body.data.id}/`);
    expect(fetched.status).toBe(200);
    const after = await client.request('POST', '/v1/orders/', { amount: 6000, currency: 'INR' });
    expect(after.status).toBe(200);
    const list = await client.request('GET', '/v1/orders/');
    expect(list.body.data.map((order: { id: string }) => order.id)).toEqual([
      after.body.data.id,
      before.body.data.id,
    ]);
  }, 60_000);
});
