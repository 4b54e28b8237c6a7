import fs from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { DURATIONS_FILE, readDurations } from './sequencer.js';

/** How many of the slowest files the summary names. */
const SLOWEST = Number(process.env.KOSH_SLOWEST_FILES ?? 8);

/**
 * Prints, after every run, the slowest test files with their wall time and the totals of tests and
 * assertions, so that a change that makes the suite slow, or quietly drops checks, is seen at once.
 */
export default class TimingReporter implements Reporter {
  private started = performance.now();

  onTestRunStart(): void {
    this.started = performance.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let tests = 0;
    let assertions = 0;
    const files = modules.map((module) => {
      let fileTests = 0;
      for (const test of module.children.allTests()) {
        fileTests++;
        assertions += test.meta().assertions ?? 0;
      }
      tests += fileTests;
      return {
        file: path.relative(process.cwd(), module.moduleId),
        seconds: module.diagnostic().duration / 1000,
        cpu: module.meta().cpuSeconds,
        tests: fileTests,
      };
    });
    files.sort((a, b) => b.seconds - a.seconds);
    // `npm run test:durations`: the order the next runs start their files in (see sequencer.ts).
    if (process.env.KOSH_RECORD_DURATIONS === '1') {
      const durations = readDurations();
      for (const file of files) durations[file.file] = Math.round(file.seconds * 10) / 10;
      const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => a.localeCompare(b)));
      fs.writeFileSync(DURATIONS_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
    }
    const lines = files
      .slice(0, SLOWEST)
      .map(
        (file) =>
          `  ${file.seconds.toFixed(1).padStart(7)} s  ${String(file.tests).padStart(5)} tests  ${file.file}`,
      );
    // Wall time hides what a file costs when files share the cores: its CPU (with the browsers and
    // servers it started) is what the whole run's time is made of.
    const measured = files.filter((file) => file.cpu !== undefined) as Array<
      (typeof files)[number] & { cpu: number }
    >;
    const cpuTotal = measured.reduce((sum, file) => sum + file.cpu, 0);
    const costliest = [...measured]
      .sort((a, b) => b.cpu - a.cpu)
      .slice(0, SLOWEST)
      .map((file) => `  ${file.cpu.toFixed(1).padStart(7)} s  ${file.file}`);
    const wall = (performance.now() - this.started) / 1000;
    process.stdout.write(
      `\nSlowest test files (wall time of each file):\n${lines.join('\n')}\n` +
        (measured.length > 0
          ? `Costliest test files (CPU of each file's process and its children; ${cpuTotal.toFixed(1)} s in all):\n${costliest.join('\n')}\n`
          : '') +
        `Totals: ${files.length} files, ${tests} tests, ${assertions} assertions, ${wall.toFixed(1)} s\n`,
    );
  }
}
