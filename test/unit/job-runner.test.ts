import { describe, expect, it } from 'vitest';
import { type Job, startJobs } from '../../src/jobs/runner.js';
import { createLogger } from '../../src/log.js';

/** Runs `job` until it has been called `calls` times; the times (ms from the start) of each call. */
async function callTimes(job: Omit<Job, 'run'>, answers: number[]): Promise<number[]> {
  const started = performance.now();
  const times: number[] = [];
  let finished!: () => void;
  const done = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const runner = startJobs(
    [
      {
        ...job,
        async run() {
          times.push(performance.now() - started);
          if (times.length === answers.length) finished();
          return answers[times.length - 1] ?? 0;
        },
      },
    ],
    createLogger('silent'),
  );
  await done;
  await runner.stop();
  return times;
}

const gaps = (times: number[]) => times.slice(1).map((time, index) => time - times[index]!);

describe('background job runner', () => {
  it('runs the next batch at once while batches find work, and waits its idle interval after an empty one', async () => {
    // Bounds far apart, so that a loaded machine's scheduling delays cannot blur them.
    const times = await callTimes({ name: 'plain', idleIntervalMs: 800 }, [5, 5, 0, 5]);
    const [afterWork, afterMoreWork, afterNothing] = gaps(times);
    expect(afterWork).toBeLessThan(300);
    expect(afterMoreWork).toBeLessThan(300);
    expect(afterNothing).toBeGreaterThanOrEqual(790);
  });

  it('with `gather`, pauses after a batch that was not full, and not after a full one', async () => {
    const times = await callTimes(
      { name: 'gathering', idleIntervalMs: 2_000, gather: { size: 10, pauseMs: 700 } },
      [10, 3, 10, 0, 1],
    );
    const [afterFull, afterPartial, afterFullAgain, afterNothing] = gaps(times);
    expect(afterFull).toBeLessThan(300);
    expect(afterPartial).toBeGreaterThanOrEqual(690);
    expect(afterPartial).toBeLessThan(1_900);
    expect(afterFullAgain).toBeLessThan(300);
    expect(afterNothing).toBeGreaterThanOrEqual(1_990);
  });
});
