#!/usr/bin/env node
// The `kosh` command. In a clone (`npx kosh …` after `npm install`) it runs the TypeScript source
// through tsx, so it is always the code in front of you; an installed package runs its build.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('../src/main.ts', import.meta.url);
const built = new URL('../dist/src/main.js', import.meta.url);

async function loadTsx() {
  try {
    return await import('tsx/esm/api');
  } catch {
    return undefined;
  }
}

const tsx = existsSync(fileURLToPath(source)) ? await loadTsx() : undefined;
if (tsx) {
  tsx.register();
  await import(source.href);
} else if (existsSync(fileURLToPath(built))) {
  await import(built.href);
} else {
  process.stderr.write('kosh: not built yet: run `npm install` (a clone) or `npm run build`.\n');
  process.exit(1);
}
