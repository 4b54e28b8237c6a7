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
    const times = await callTimes({ name: 'plain', idleIntervalMs: 200 }, [5, 5, 0, 5]);
    const [afterWork, afterMoreWork, afterNothing] = gaps(times);
    expect(afterWork).toBeLessThan(50);
    expect(afterMoreWork).toBeLessThan(50);
    expect(afterNothing).toBeGreaterThanOrEqual(190);
  });

  it('with `gather`, pauses after a batch that was not full, and not after a full one', async () => {
    const times = await callTimes(
      { name: 'gathering', idleIntervalMs: 1_000, gather: { size: 10, pauseMs: 120 } },
      [10, 3, 10, 0, 1],
    );
    const [afterFull, afterPartial, afterFullAgain, afterNothing] = gaps(times);
    expect(afterFull).toBeLessThan(60);
    expect(afterPartial).toBeGreaterThanOrEqual(110);
    expect(afterPartial).toBeLessThan(900);
    expect(afterFullAgain).toBeLessThan(60);
    expect(afterNothing).toBeGreaterThanOrEqual(990);
  });
});
