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
        // A worker process runs file after file and loads Kosh's modules once, not once per file (each
        // file still has its own databases and servers). KOSH_TEST_ISOLATE=1 gives every file a fresh
        // process, to tell a leak between files from a bug. docs/testing.md.
        isolate: process.env.KOSH_TEST_ISOLATE === '1',
        // Every worker is kept for the whole run: above the minimum, the pool ends an idle worker while
        // it is being handed the next file, and that file dies with "Terminating worker thread".
        minForks: workers,
        maxForks: workers,
        // PGlite is PostgreSQL compiled to WebAssembly; V8's baseline compiler runs it as fast here as
        // the optimising one and compiles it for less (docs/testing.md).
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
