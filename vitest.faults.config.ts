import { defineConfig } from 'vitest/config';

// `npm run test:faults`: each file starts its own throwaway PostgreSQL (test/faults/support);
// files run one after another so that their timings do not disturb each other.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    globalSetup: ['test/faults/support/build.ts'],
    setupFiles: ['test/helpers/count-assertions.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/helpers/timing-reporter.ts'],
  },
});
