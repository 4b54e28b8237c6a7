import fs from 'node:fs';
import { afterAll, beforeAll } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /**
     * CPU seconds the file's process used, with the processes it started and waited for (Chromium,
     * `kosh serve`): what the file costs the machine, which its wall time hides when files share the
     * cores. The timing reporter lists the costliest files.
     */
    cpuSeconds?: number;
  }
}

/** utime + stime + cutime + cstime of this process, from /proc (Linux); undefined elsewhere. */
function cpuSeconds(): number | undefined {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    // The fields after the command name, which is in parentheses and may itself hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0);
    return ticks / 100;
  } catch {
    return undefined;
  }
}

// A worker process runs many files one after another: a file's share is what it used since its start.
let startedAt: number | undefined;
beforeAll(() => {
  startedAt = cpuSeconds();
});

afterAll((suite) => {
  const seconds = cpuSeconds();
  if (seconds !== undefined && startedAt !== undefined) suite.meta.cpuSeconds = seconds - startedAt;
});
