/**
 * Summarises V8 .cpuprofile files (from `npm run bench -- --cpu-prof`): self time by function and
 * by package, heaviest first. Usage: tsx bench/profile-summary.ts bench/results/profiles/*.cpuprofile
 */
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
let total = 0;

for (const file of process.argv.slice(2)) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as { nodes: ProfileNode[] };
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    total += hits;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.replace(/^file:\/\//, '').replace(/.*node_modules\//, 'npm:');
    const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + hits);
    const pkg = where.startsWith('npm:')
      ? where
          .slice(4)
          .split('/')
          .slice(0, where.slice(4).startsWith('@') ? 2 : 1)
          .join('/')
      : where.includes('/src/')
        ? `kosh ${where
            .slice(where.indexOf('/src/') + 1)
            .split('/')
            .slice(0, 2)
            .join('/')}`
        : where.startsWith('node:')
          ? where
          : functionName.startsWith('(')
            ? functionName
            : '(native/other)';
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + hits);
  }
}

const show = (title: string, map: Map<string, number>, limit: number) => {
  process.stdout.write(`\n${title}\n`);
  for (const [name, hits] of [...map].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
    process.stdout.write(`${((hits / total) * 100).toFixed(1).padStart(5)} %  ${name}\n`);
  }
};
show('Self time by package', byPackage, 25);
show('Self time by function', byFunction, 40);
