/**
 * A cluster primary (src/cli/cluster.ts) over stand-in workers (cluster-fixture-worker.mjs), for
 * test/integration/cluster.test.ts. The primary prints LISTENING once a worker listens.
 */
import cluster from 'node:cluster';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runPrimary } from '../../src/cli/cluster.js';
import { createLogger } from '../../src/log.js';

fs.writeFileSync(process.env.COUNTER_FILE as string, '0');
cluster.setupPrimary({
  exec: fileURLToPath(new URL('./cluster-fixture-worker.mjs', import.meta.url)),
  execArgv: [],
});
const code = await runPrimary({
  workers: 1,
  log: createLogger('info'),
  onListening: () => process.stdout.write('LISTENING\n'),
});
process.exit(code);
