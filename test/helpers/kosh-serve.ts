import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { freePort, type KoshProcess, runKosh } from './process.js';

export interface SandboxAccount {
  account_id: string;
  api_key: string;
  secret_key: string;
  dashboard: { email: string; password: string };
}

/** What `kosh serve` writes to `sandbox-credentials.json` on its first start. */
export interface SandboxCredentials {
  merchant: SandboxAccount;
  partner: SandboxAccount;
}

export function authHeader(credentials: { api_key: string; secret_key: string }): string {
  return `Basic ${Buffer.from(`${credentials.api_key}:${credentials.secret_key}`).toString('base64')}`;
}

/**
 * For a test file that runs the `kosh` command: data folders and `kosh serve` processes that are
 * killed and removed once the file ends (call it at the file's top level).
 */
export function koshProcesses() {
  const running: KoshProcess[] = [];
  const folders: string[] = [];
  afterAll(async () => {
    await Promise.all(running.map((process) => process.stop('SIGKILL')));
    for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
  });

  function tempDir(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-cli-'));
    folders.push(dir);
    return dir;
  }

  /** `kosh serve` on a free port, once it says it is serving. */
  async function serve(
    env: Record<string, string>,
    args: string[] = [],
  ): Promise<{ process: KoshProcess; url: string }> {
    const port = await freePort();
    const process = runKosh(['serve', ...args], {
      PORT: String(port),
      KOSH_PUBLIC_URL: `http://127.0.0.1:${port}`,
      ...env,
    });
    running.push(process);
    await process.waitFor(/Kosh is serving/, 120_000);
    return { process, url: `http://127.0.0.1:${port}` };
  }

  return { tempDir, serve, running };
}
