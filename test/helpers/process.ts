import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The compiled service (the suite's global setup builds it): a process starts with plain `node`. */
export const MAIN = path.join(ROOT, 'dist/src/main.js');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface KoshProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves when the output matches, rejects when the process exits first or the time runs out. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs the `kosh` command from source, as `npx tsx src/main.ts …` would. */
/** Starts `kosh ARGS…`; `input`, when given, is its standard input (as a pipe, not a terminal). */
export function runKosh(args: string[], env: Record<string, string>, input?: string): KoshProcess {
  // V8's baseline WebAssembly compiler only, as in the test workers (vitest.config.ts): a process
  // here lives seconds, too short for optimising PGlite's PostgreSQL to pay for itself.
  const child = spawn(process.execPath, ['--liftoff-only', MAIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, KOSH_LOG_LEVEL: 'info', ...env },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (input !== undefined) child.stdin?.end(input);
  let output = '';
  const listeners = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

  return {
    child,
    output: () => output,
    exited,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(output)) {
            cleanup();
            resolve();
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${pattern}; output:\n${output}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        exited.then((code) => {
          if (!pattern.test(output)) {
            cleanup();
            reject(new Error(`exited with ${code} before ${pattern}; output:\n${output}`));
          }
        });
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
