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

/** Files that drive Chromium: each keeps several browser processes busy while it runs. */
const BROWSER_FILE = /\.browser\.test\.ts$/;

/**
 * Moves browser files later until no two of them sit among any `apart` consecutive files, so that
 * the first files to start together (one per worker) never hold two Chromiums at once. Two browser
 * files started side by side with the CLI file left Chromium's renderers starved of the two cores:
 * a payment walk that takes 3 s alone took up to 19 s, and sometimes over the 30 s test limit.
 */
export function spaceBrowserFiles<T>(sorted: T[], isBrowser: (file: T) => boolean, apart: number): T[] {
  const waiting = [...sorted];
  const placed: T[] = [];
  while (waiting.length > 0) {
    const recent = placed.slice(-(apart - 1));
    const browserNearby = recent.some(isBrowser);
    const index = browserNearby ? waiting.findIndex((file) => !isBrowser(file)) : 0;
    placed.push(...waiting.splice(index === -1 ? 0 : index, 1));
  }
  return placed;
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
    const sorted = [...files].sort((a, b) => seconds(b) - seconds(a));
    const workers = Number(this.ctx.config.poolOptions?.forks?.maxForks ?? 3);
    return spaceBrowserFiles(sorted, (spec) => BROWSER_FILE.test(spec.moduleId), workers);
  }
}
