import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_DATABASE_UNAVAILABLE } from '../../src/db/postgres.js';
import { ROOT } from '../helpers/process.js';

/** The cluster primary's restarts: a start-up crash loop stops it; a database that is away does not. */
function primary(failures: number, exitCode: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-cluster-'));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'test/helpers/cluster-fixture.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        COUNTER_FILE: path.join(dir, 'started'),
        FAILURES: String(failures),
        EXIT_CODE: String(exitCode),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    output: () => output,
    exited,
    stop: () => child.kill('SIGTERM'),
    started: () => Number(fs.readFileSync(path.join(dir, 'started'), 'utf8')),
  };
}

describe.concurrent('the cluster primary', () => {
  it('stops after five workers in a row die before serving', async () => {
    const run = primary(5, 1);
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('5 workers in a row died before serving; stopping');
    expect(run.output()).not.toContain('LISTENING');
  }, 30_000);

  it('keeps starting workers while they cannot reach the database, and serves once one can', async () => {
    const run = primary(5, EXIT_DATABASE_UNAVAILABLE);
    await expect.poll(run.output, { timeout: 20_000, interval: 100 }).toContain('LISTENING');
    expect(run.started()).toBe(6);
    expect(run.output()).toContain('a worker could not reach the database; starting another');
    expect(run.output()).not.toContain('died before serving');
    run.stop();
    expect(await run.exited).toBe(0);
  }, 30_000);
});
