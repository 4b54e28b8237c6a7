import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const TEST_ROOT = join(import.meta.dirname, '..');

async function sourcesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * Rules of the suite that a test cannot see from inside itself. Workers run file after file
 * (docs/testing.md, "How the suite is made fast"): vitest applies `vi.setConfig` to a worker's
 * first file only, so a limit set that way holds or not by the order the files happen to run in.
 */
describe('the suite', () => {
  it('sets no limit through vi.setConfig: a file passes its limits in its describe options', async () => {
    const offenders: string[] = [];
    for (const file of await sourcesUnder(TEST_ROOT)) {
      const text = await readFile(file, 'utf8');
      if (/\bvi\.setConfig\s*\(/.test(text.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, ''))) {
        offenders.push(relative(TEST_ROOT, file));
      }
    }
    expect(offenders).toEqual([]);
  });
});
