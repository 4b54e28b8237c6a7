import type { Container } from '../container.js';
import type { Job } from './runner.js';

/** Every background job `kosh serve` (and `kosh worker`) runs. Add new jobs here. */
export function backgroundJobs(container: Container): Job[] {
  return [container.services.idempotency.purgeJob()];
}
