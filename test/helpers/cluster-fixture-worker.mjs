// A stand-in worker for test/helpers/cluster-fixture.ts, in plain JavaScript so that it starts at
// once: it counts itself in COUNTER_FILE; the first FAILURES workers exit with EXIT_CODE before
// listening, the later ones listen.
import fs from 'node:fs';
import http from 'node:http';

const counter = process.env.COUNTER_FILE;
const started = Number(fs.readFileSync(counter, 'utf8')) + 1;
fs.writeFileSync(counter, String(started));
if (started <= Number(process.env.FAILURES)) process.exit(Number(process.env.EXIT_CODE));
http.createServer((_request, response) => response.end('ok')).listen(0, '127.0.0.1');
