import os from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import DurationSequencer from './test/helpers/sequencer.js';

/**
 * Files run in parallel: each has its own PostgreSQL database and PGlite instance, and most of a
 * file's time is spent waiting on one of them, so one more process than cores keeps both cores busy.
 */
const workers = Number(process.env.KOSH_TEST_WORKERS ?? os.availableParallelism() + 1);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The fault suite starts its own PostgreSQL and kills processes: `npm run test:faults`.
    exclude: [...configDefaults.exclude, 'test/faults/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/count-assertions.ts', 'test/helpers/measure-cpu.ts'],
    pool: 'forks',
    poolOptions: {
      forks: {
        minForks: 1,
        maxForks: workers,
        // PGlite is PostgreSQL compiled to WebAssembly. A test file's process lives seconds, too short
        // for V8's optimising compiler to repay recompiling PostgreSQL's hot functions in every one:
        // on V8's baseline compiler alone the whole run went from 482 s to 421 s (docs/testing.md).
        execArgv: ['--liftoff-only'],
      },
    },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Slowest files first, by their recorded durations (test/durations.json).
    sequence: { sequencer: DurationSequencer },
    reporters: ['default', './test/helpers/timing-reporter.ts'],
  },
});
