import { afterEach, expect } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /** How many `expect` calls the test made; the timing reporter adds them up. */
    assertions?: number;
  }
}

afterEach((context) => {
  context.task.meta.assertions = expect.getState().assertionCalls;
});
