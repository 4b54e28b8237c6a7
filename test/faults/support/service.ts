import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '../../..');
// The compiled service (the suite's global setup builds it): a restart is a plain `node` start.
const NODE_ARGS = [path.join(ROOT, 'dist/src/main.js')];

export async function koshCommand(args: string[], env: NodeJS.ProcessEnv) {
  return promisify(execFile)(process.execPath, [...NODE_ARGS, ...args], { env, cwd: ROOT });
}

/** `kosh serve` as its own process group, so that `kill9` takes the primary and every worker at once. */
export class Service {
  child: ChildProcess | undefined;
  private output = '';

  constructor(
    readonly port: number,
    readonly env: NodeJS.ProcessEnv,
    readonly extraArgs: string[] = [],
    /** Keep the per-key limits of `env` (by default they are lifted: see `start`). */
    readonly keepRateLimits = false,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get log(): string {
    return this.output;
  }

  /** Starts the service and resolves once it says it is serving. */
  async start(timeoutMs = 30_000): Promise<void> {
    this.output = '';
    const child = spawn(
      process.execPath,
      [...NODE_ARGS, 'serve', '--port', String(this.port), ...this.extraArgs],
      {
        // Durability is under test here, not the per-key limits: one key sends 200 req/s and then
        // reads every acknowledged object back, far above the default test-mode limit.
        env: {
          ...this.env,
          KOSH_REQUEST_LOG: 'false',
          ...(this.keepRateLimits
            ? {}
            : { KOSH_RATE_LIMIT_TEST_PER_SECOND: '0', KOSH_RATE_LIMIT_LIVE_PER_SECOND: '0' }),
        },
        cwd: ROOT,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.child = child;
    child.stdout?.on('data', (chunk) => {
      this.output += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      this.output += chunk;
    });
    const deadline = Date.now() + timeoutMs;
    while (!this.output.includes('"msg":"Kosh is serving"')) {
      if (child.exitCode !== null || Date.now() > deadline) {
        this.kill9();
        throw new Error(`kosh serve did not start (exit ${child.exitCode}):\n${this.output.slice(-3_000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGKILL to the whole process group: no shutdown code runs, as in a crash or an OOM kill. */
  kill9(): void {
    if (!this.child?.pid) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child?.pid || !this.alive) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-child.pid, 'SIGTERM');
    const timer = setTimeout(() => this.kill9(), 10_000);
    await exited;
    clearTimeout(timer);
  }

  /** Pids of the cluster workers (children of the primary), from /proc. */
  workerPids(): number[] {
    const primary = this.child?.pid;
    if (!primary) return [];
    return fs
      .readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((entry) => {
        try {
          const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === primary;
        } catch {
          return false;
        }
      })
      .map(Number);
  }
}
