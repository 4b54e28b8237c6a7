import fs from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The wall time of each test file in seconds, as last recorded (`npm run test:durations` runs the
 * suite and rewrites it). Committed, so that a fresh clone, which has no timings of its own, still
 * starts its slowest files first.
 */
export const DURATIONS_FILE = path.resolve(import.meta.dirname, '../durations.json');

/** A file without a recorded time (a new one) is assumed slow, so it starts early. */
const UNKNOWN_SECONDS = 60;

export function readDurations(): Record<string, number> {
  try {
    return JSON.parse(fs.readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * Longest files first. With files spread over a few workers, a slow file that starts last runs
 * alone at the end and the whole run waits for it; vitest's own order on a fresh clone (largest
 * file first, as it has no timings) put the security fuzzers, short files that run for minutes, last.
 */
export default class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const recorded = readDurations();
    const seconds = (spec: TestSpecification) =>
      recorded[path.relative(this.ctx.config.root, spec.moduleId)] ?? UNKNOWN_SECONDS;
    return [...files].sort((a, b) => seconds(b) - seconds(a));
  }
}
