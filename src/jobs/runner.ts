import type { Logger } from 'pino';

/**
 * A background job: `run` does one bounded batch of work and returns how many items it handled.
 * Jobs must be safe with any number of processes running them at once (claim rows with
 * `FOR UPDATE SKIP LOCKED` or compare-and-set updates).
 */
export interface Job {
  name: string;
  /** Pause between batches when the last batch found nothing to do. */
  idleIntervalMs: number;
  /**
   * For a job whose batches cost about the same however few items they hold (the webhook
   * fan-out): after a batch that found work but fewer than `size` items, pause `pauseMs` before
   * the next, so that it gathers more. Without it the next batch starts at once.
   */
  gather?: { size: number; pauseMs: number };
  run(signal: AbortSignal): Promise<number>;
  /** For a job whose `run` starts work it does not wait for: waits for that work, at stop. */
  stop?(): Promise<void>;
}

export interface JobRunner {
  /** Stops taking new batches and waits for the running ones to finish. */
  stop(): Promise<void>;
}

/**
 * Runs each job in its own loop: again at once while it finds work (after its `gather` pause when
 * the batch was not full), after its idle interval otherwise.
 */
export function startJobs(jobs: Job[], log: Logger): JobRunner {
  const controller = new AbortController();
  const loops = jobs.map(async (job) => {
    while (!controller.signal.aborted) {
      let handled = 0;
      try {
        handled = await job.run(controller.signal);
      } catch (error) {
        log.error({ err: error, job: job.name }, 'background job failed; retrying after its interval');
      }
      if (controller.signal.aborted) break;
      if (handled === 0) await sleep(job.idleIntervalMs, controller.signal);
      else if (job.gather && handled < job.gather.size) await sleep(job.gather.pauseMs, controller.signal);
    }
  });
  return {
    async stop() {
      controller.abort();
      await Promise.all(loops);
      await Promise.all(jobs.map((job) => job.stop?.()));
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
