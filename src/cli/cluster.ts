import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { EXIT_DATABASE_UNAVAILABLE } from '../db/postgres.js';
import { answerMetricsRequests } from '../http/metrics.js';

export interface PrimaryOptions {
  workers: number;
  log: Logger;
  /** How long workers get to finish in-flight requests after SIGTERM/SIGINT before they are killed. */
  shutdownTimeoutMs?: number;
  /** Called once every first-generation worker is listening. */
  onListening?: (address: { address: string; port: number }) => void;
}

/** Consecutive workers that die before they ever listen: a start-up failure, not a crash to heal. */
const MAX_FAILED_STARTS = 5;
const MAX_RESTART_DELAY_MS = 10_000;

/**
 * The cluster primary: it forks `workers` HTTP processes that share the listening port (node:cluster
 * hands connections to them round-robin), restarts any that dies unexpectedly, and on SIGTERM/SIGINT
 * forwards SIGTERM so every worker finishes its in-flight requests before the primary exits.
 * The primary itself opens no database and serves nothing, so it has nothing to crash on; it only
 * sums the workers' metrics when one of them is asked for `/metrics` (src/http/metrics.ts).
 */
export function runPrimary(options: PrimaryOptions): Promise<number> {
  const { log, workers } = options;
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 15_000;
  // Our own bookkeeping: cluster.workers may still hold a worker when its 'exit' event fires.
  const alive = new Map<number, Worker>();
  const listening = new Set<number>();
  let firstGenerationReady = false;
  let failedStarts = 0;
  let recentDeaths: number[] = [];
  let stopping = false;
  let exitCode = 0;

  return new Promise<number>((resolve) => {
    const fork = () => {
      const worker = cluster.fork();
      alive.set(worker.id, worker);
      answerMetricsRequests(worker);
      worker.once('listening', (address) => {
        listening.add(worker.id);
        failedStarts = 0;
        if (!firstGenerationReady && listening.size === workers) {
          firstGenerationReady = true;
          options.onListening?.({ address: address.address ?? '', port: address.port ?? 0 });
        }
      });
      return worker;
    };

    cluster.on('exit', (worker: Worker, code: number | null, signal: string | null) => {
      alive.delete(worker.id);
      const hadListened = listening.delete(worker.id);
      if (stopping) {
        if (alive.size === 0) resolve(exitCode);
        return;
      }
      // A worker that could not reach the database is not a start-up failure: the database is
      // away (an outage, a failover) and the next worker may find it back.
      const databaseAway = code === EXIT_DATABASE_UNAVAILABLE;
      if (!hadListened && !databaseAway && ++failedStarts >= MAX_FAILED_STARTS) {
        log.fatal(
          { pid: worker.process.pid, code, signal },
          `${MAX_FAILED_STARTS} workers in a row died before serving; stopping (see the errors above)`,
        );
        void stop('worker start-up failures', 1);
        return;
      }
      // Backoff grows with the deaths of the last minute, so a crash loop does not spin the CPU.
      const now = Date.now();
      recentDeaths = [...recentDeaths.filter((at) => now - at < 60_000), now];
      const delayMs = Math.min(MAX_RESTART_DELAY_MS, 100 * 2 ** (recentDeaths.length - 1));
      log.error(
        { pid: worker.process.pid, code, signal, restart_in_ms: delayMs },
        databaseAway
          ? 'a worker could not reach the database; starting another'
          : 'a worker died unexpectedly; starting a replacement',
      );
      // Not unref'd: when every worker is dead this timer is what keeps the primary alive.
      setTimeout(() => {
        if (!stopping) fork();
      }, delayMs);
    });

    const stop = async (reason: string, code: number) => {
      if (stopping) return;
      stopping = true;
      exitCode = code;
      log.info({ reason, workers: alive.size }, 'shutting down');
      if (alive.size === 0) {
        resolve(exitCode);
        return;
      }
      for (const worker of alive.values()) worker.process.kill('SIGTERM');
      const timer = setTimeout(() => {
        for (const worker of alive.values()) {
          log.warn({ pid: worker.process.pid }, 'worker did not stop in time; killing it');
          worker.process.kill('SIGKILL');
        }
      }, shutdownTimeoutMs);
      timer.unref();
    };

    process.on('SIGTERM', () => void stop('SIGTERM', 0));
    process.on('SIGINT', () => void stop('SIGINT', 0));

    for (let i = 0; i < workers; i++) fork();
  });
}
