/**
 * A cluster primary (src/cli/cluster.ts) over stand-in workers, for test/integration/cluster.test.ts.
 * Each worker counts itself in COUNTER_FILE; the first FAILURES of them exit with EXIT_CODE before
 * listening, the later ones listen. The primary prints LISTENING once a worker listens.
 */
import cluster from 'node:cluster';
import fs from 'node:fs';
import http from 'node:http';
import { runPrimary } from '../../src/cli/cluster.js';
import { createLogger } from '../../src/log.js';

const counter = process.env.COUNTER_FILE as string;
if (cluster.isPrimary) {
  fs.writeFileSync(counter, '0');
  const code = await runPrimary({
    workers: 1,
    log: createLogger('info'),
    onListening: () => process.stdout.write('LISTENING\n'),
  });
  process.exit(code);
} else {
  const started = Number(fs.readFileSync(counter, 'utf8')) + 1;
  fs.writeFileSync(counter, String(started));
  if (started <= Number(process.env.FAILURES)) process.exit(Number(process.env.EXIT_CODE));
  http.createServer((_request, response) => response.end('ok')).listen(0, '127.0.0.1');
}
