import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/** Debian's PostgreSQL server binaries; KOSH_PG_BIN overrides. */
const BIN = process.env.KOSH_PG_BIN ?? '/usr/lib/postgresql/15/bin';

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

/**
 * A throwaway PostgreSQL server of the suite's own: initdb in a temporary folder, its own port,
 * stopped and deleted by `destroy`. Never the machine's shared server. PostgreSQL refuses to run as
 * root, so as root the server runs as the `postgres` OS user in a folder that user owns.
 */
export class PostgresInstance {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  private static command(binary: string, args: string[]): [string, string[]] {
    const asRoot = process.getuid?.() === 0;
    return asRoot
      ? ['runuser', ['-u', 'postgres', '--', path.join(BIN, binary), ...args]]
      : [path.join(BIN, binary), args];
  }

  /** Asynchronous, so that the load the checks drive keeps flowing while the server stops or starts. */
  private static async run(binary: string, args: string[]): Promise<void> {
    const [command, fullArgs] = PostgresInstance.command(binary, args);
    await promisify(execFile)(command, fullArgs);
  }

  static async create(): Promise<PostgresInstance> {
    if (!fs.existsSync(path.join(BIN, 'initdb'))) {
      throw new Error(`PostgreSQL server binaries not found in ${BIN} (set KOSH_PG_BIN).`);
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kosh-faults-pg-'));
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir]);
    const instance = new PostgresInstance(dir, await freePort());
    await PostgresInstance.run('initdb', [
      '-D',
      instance.dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    await instance.start();
    return instance;
  }

  async start(): Promise<void> {
    await PostgresInstance.run('pg_ctl', [
      '-D',
      this.dataDir,
      '-l',
      path.join(this.dir, 'server.log'),
      '-w',
      '-t',
      '30',
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c max_connections=60`,
      'start',
    ]);
  }

  /** `fast`: open sessions are ended as by an operator; `immediate`: as by a crash. */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await PostgresInstance.run('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', 'stop']);
  }

  /**
   * Freezes (SIGSTOP) or thaws (SIGCONT) the postmaster and every backend: a database that hangs
   * instead of refusing, as on a stalled disk or a lost network path.
   */
  signalAll(signal: 'SIGSTOP' | 'SIGCONT'): number {
    const postmaster = Number(
      fs.readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0],
    );
    const pids = [postmaster];
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster)
          pids.push(Number(entry));
      } catch {
        // gone
      }
    }
    for (const pid of pids) process.kill(pid, signal);
    return pids.length;
  }

  /** Stops the server if it runs and deletes its folder. */
  destroy(): void {
    const [command, args] = PostgresInstance.command('pg_ctl', [
      '-D',
      this.dataDir,
      '-m',
      'immediate',
      '-w',
      'stop',
    ]);
    try {
      execFileSync(command, args, { stdio: 'ignore' });
    } catch {
      // already stopped
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
