import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const KOSH = path.join(ROOT, 'dist/src/main.js');

const run = promisify(execFile);

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** `kosh <args>` to completion (admin commands); returns stdout. */
export async function kosh(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await run(process.execPath, [KOSH, ...args], { env, cwd: ROOT });
  return stdout;
}

export interface Running {
  child: ChildProcess;
  logFile: string;
  stop(): Promise<void>;
}

/**
 * Starts a long-running process with its output going to a file (what a real deployment does with
 * logs; a pipe the bench had to drain would cost the bench CPU), and waits for `readyText` in it.
 */
export async function startProcess(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; logFile: string; readyText: string; timeoutMs?: number },
): Promise<Running> {
  const fd = fs.openSync(options.logFile, 'w');
  const child = spawn(command, args, { env: options.env, cwd: ROOT, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  let exited: number | null | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      exited = code;
      resolve();
    }),
  );
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (!fs.readFileSync(options.logFile, 'utf8').includes(options.readyText)) {
    if (exited !== undefined || Date.now() > deadline) {
      child.kill('SIGKILL');
      const tail = fs.readFileSync(options.logFile, 'utf8').slice(-3_000);
      throw new Error(`${path.basename(args[0] ?? command)} did not start (exit ${exited}):\n${tail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    child,
    logFile: options.logFile,
    async stop() {
      if (exited !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exit;
      clearTimeout(timer);
    },
  };
}

const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user + system) used so far by a process and all its descendants (the cluster
 * workers), from /proc. Throughput on a shared machine swings with the neighbours' load; CPU time
 * per request is what the code itself costs. Linux only; 0 elsewhere.
 */
export function processTreeCpuSeconds(rootPid: number): number {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return 0;
  }
  const stats = new Map<number, { parent: number; ticks: number }>();
  for (const entry of entries) {
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // After "pid (comm) ": state, ppid, …; utime and stime are fields 14 and 15 of the whole line.
      stats.set(Number(entry), { parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // the process ended while we looked
    }
  }
  let ticks = 0;
  const tree = new Set([rootPid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, stat] of stats) {
      if (!tree.has(pid) && tree.has(stat.parent)) {
        tree.add(pid);
        grew = true;
      }
    }
  }
  for (const pid of tree) ticks += stats.get(pid)?.ticks ?? 0;
  return ticks / CLOCK_TICKS_PER_SECOND;
}

/** CPU seconds used so far by each of the given processes (no descendants); closed ones are left out. */
export function processesCpuSeconds(pids: number[]): Map<number, number> {
  const seconds = new Map<number, number>();
  for (const pid of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      seconds.set(pid, (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND);
    } catch {
      // the backend closed
    }
  }
  return seconds;
}
