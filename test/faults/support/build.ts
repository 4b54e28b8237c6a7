import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** Once per fault run: compile Kosh, so that restarts under test take a plain `node` start. */
export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '../../..');
  execFileSync(
    process.execPath,
    [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
}
