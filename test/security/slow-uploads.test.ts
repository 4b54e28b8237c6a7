import net from 'node:net';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { proprietorBody } from '../helpers/onboarding.js';

/**
 * A denial of service by unfinished uploads: 50 connections each start a KYC upload (half with an
 * Idempotency-Key), send the first part and the file part's headers, and go idle. Other tenants
 * must not notice (no error, the usual median latency, no request waiting anywhere near the time an
 * upload is held), because an upload is read whole before it costs a database connection or claims
 * a key; and the idle connections are closed by the request timeout.
 *
 * Starvation would show as answers that wait until the uploads are cut off (seconds) or as 503s,
 * not as a few tens of milliseconds: the bounds below are set so that the noise of a loaded 2-core
 * machine running other test files beside this one cannot fail them, and starvation cannot pass.
 */
const REQUEST_TIMEOUT_MS = 4_000;
const SLOW = 50;

describeEachDatabase(
  'security: unfinished uploads do not starve other tenants',
  (harness) => {
    let partner: TestAccount;
    let other: TestAccount;
    let mid: string;
    let port: number;

    beforeAll(async () => {
      await harness().app.listen({ port: 0, host: '127.0.0.1' });
      port = (harness().app.server.address() as net.AddressInfo).port;
      partner = await harness().partner('Slow uploader');
      other = await harness().merchant('Other tenant');
      const created = await harness().request('POST', '/v1/api-portal/merchants/', {
        auth: partner,
        json: proprietorBody(),
      });
      mid = created.json().data.id;
    });

    /** Starts an upload that never finishes; resolves when the server closes the connection. */
    function unfinishedUpload(index: number): { closed: Promise<number>; socket: net.Socket } {
      const socket = net.connect(port, '127.0.0.1');
      const started = Date.now();
      const boundary = 'XX';
      const head = [
        `POST /v1/api-portal/merchants/kyc-document/${mid}/ HTTP/1.1`,
        'Host: 127.0.0.1',
        `Authorization: ${partner.auth}`,
        `Content-Type: multipart/form-data; boundary=${boundary}`,
        'Content-Length: 100000',
        ...(index % 2 === 0 ? [`Idempotency-Key: slow-${index}`] : []),
      ].join('\r\n');
      socket.on('error', () => {});
      // Read whatever the server answers (a 408), so the socket can see the server close it.
      socket.resume();
      socket.write(
        `${head}\r\n\r\n--${boundary}\r\nContent-Disposition: form-data; name="document_type"\r\n\r\npan\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\n`,
      );
      return {
        socket,
        closed: new Promise((resolve) => socket.on('close', () => resolve(Date.now() - started))),
      };
    }

    it(`${SLOW} idle uploads: other tenants get answers as usual, and the uploads are cut off by the timeout`, async () => {
      const base = `http://127.0.0.1:${port}`;
      const call = async (method: 'GET' | 'POST') => {
        const started = performance.now();
        const response = await fetch(`${base}/v1/orders/`, {
          method,
          headers: { authorization: other.auth, 'content-type': 'application/json' },
          body: method === 'POST' ? JSON.stringify({ amount: 5000, currency: 'INR' }) : undefined,
        });
        await response.arrayBuffer();
        return { status: response.status, ms: performance.now() - started };
      };
      for (let i = 0; i < 5; i++) await call('GET'); // the key is verified and cached, the connection warm
      /** Another tenant's requests for 2 s, four at a time: their answers and the 99th percentile. */
      const measure = async () => {
        const answers: { status: number; ms: number }[] = [];
        const until = Date.now() + 2_000;
        while (Date.now() < until) {
          answers.push(...(await Promise.all([call('GET'), call('POST'), call('GET'), call('POST')])));
        }
        const latencies = answers.map((answer) => answer.ms).sort((a, b) => a - b);
        const at = (q: number) =>
          latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? Infinity;
        return { answers, median: at(0.5), p99: at(0.99), max: latencies.at(-1) ?? Infinity };
      };
      const before = await measure();

      const slow = Array.from({ length: SLOW }, (_, index) => unfinishedUpload(index));
      try {
        await new Promise((resolve) => setTimeout(resolve, 300));
        const during = await measure();
        process.stdout.write(
          `[slow uploads ${harness().kind}] another tenant: median/p99/max ` +
            `${[before.median, before.p99, before.max].map((ms) => ms.toFixed(1)).join('/')} ms alone, ` +
            `${[during.median, during.p99, during.max].map((ms) => ms.toFixed(1)).join('/')} ms beside ` +
            `${SLOW} idle uploads (${during.answers.length} requests)\n`,
        );
        // Starved, the first four requests would wait for the uploads' timeout (4 s) and the 2 s
        // window would hold those four answers alone; a loaded CI machine gave 40 and 76 here.
        expect(during.answers.length).toBeGreaterThan(8);
        expect(during.answers.filter((answer) => answer.status !== 200)).toEqual([]);
        // The usual answer is not held by the uploads: starved, it would wait for the request timeout
        // (REQUEST_TIMEOUT_MS, seconds). A loaded 2-core machine running other files beside this one
        // has put the median at 83 ms against 17 ms alone (PostgreSQL), so the bound is a quarter
        // second, or five times the median alone on a machine slower still: far from either.
        expect(during.median).toBeLessThan(Math.max(250, before.median * 5));
        // ...and no answer waited for the uploads: starved requests would wait until the request
        // timeout cuts the uploads off (REQUEST_TIMEOUT_MS); a busy machine's tail is far shorter.
        expect(during.max).toBeLessThan(REQUEST_TIMEOUT_MS / 2);
        const closedAfter = await Promise.all(slow.map((upload) => upload.closed));
        // Cut off by the timeout (checked every second), not left open: an upload never cut off would
        // not close at all. The upper bound leaves room for a loaded machine's event loop (one closed
        // after 7.45 s, with other test runs beside this one).
        for (const ms of closedAfter) {
          expect(ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 1_000);
          expect(ms).toBeLessThan(REQUEST_TIMEOUT_MS + 6_000);
        }
      } finally {
        for (const upload of slow) upload.socket.destroy();
      }
      // Nothing was claimed or stored for them.
      const keys = await harness().container.db.query(
        'SELECT key FROM idempotency_keys WHERE account_id = $1',
        [partner.id],
      );
      expect(keys).toEqual([]);
    }, 30_000);

    it('closes a connection that sends nothing within the headers timeout, and keeps one between requests', async () => {
      // Timed from the moment the server accepts the connection, not from the client's connect:
      // the server's behaviour is what is checked, and on a loaded machine the handshake itself can
      // take a retransmission or two.
      const accepted: Array<{ port: number | undefined; at: number; socket: net.Socket }> = [];
      const onConnection = (socket: net.Socket) =>
        accepted.push({ port: socket.remotePort, at: Date.now(), socket });
      harness().app.server.on('connection', onConnection);
      const opened = Date.now();
      const silent = net.connect(port, '127.0.0.1');
      silent.on('error', () => {});
      // Reads whatever comes (nothing should), so the socket sees the server's close at once.
      silent.resume();
      let connectedAt: number | undefined;
      let silentPort: number | undefined;
      silent.once('connect', () => {
        connectedAt = Date.now();
        silentPort = silent.localPort;
      });
      const silentClosed = new Promise<number>((resolve) => silent.once('close', () => resolve(Date.now())));
      // A keep-alive connection that has made a request is held for the keep-alive time (72 s), not this.
      const used = net.connect(port, '127.0.0.1');
      used.on('error', () => {});
      let usedText = '';
      let usedClosed = false;
      used.setEncoding('utf8').on('data', (chunk: string) => {
        usedText += chunk;
      });
      used.once('close', () => {
        usedClosed = true;
      });
      used.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      try {
        let limit: NodeJS.Timeout | undefined;
        const closedAt = await Promise.race([
          silentClosed,
          new Promise<undefined>((resolve) => {
            limit = setTimeout(resolve, 25_000, undefined);
          }),
        ]);
        clearTimeout(limit);
        const serverSide = accepted.find((entry) => entry.port === silentPort);
        const acceptedAt = serverSide?.at;
        const seen =
          `connected after ${connectedAt === undefined ? '-' : connectedAt - opened} ms, ` +
          `accepted after ${acceptedAt === undefined ? '-' : acceptedAt - opened} ms, ` +
          `closed after ${closedAt === undefined ? '-' : closedAt - opened} ms; the server's socket: ` +
          (serverSide
            ? `destroyed ${serverSide.socket.destroyed}, timeout ${serverSide.socket.timeout}, ` +
              `bytes read ${serverSide.socket.bytesRead}, 'timeout' listeners ${serverSide.socket.listenerCount('timeout')} ` +
              `(the server's ${harness().app.server.listenerCount('timeout')}), accepted ${accepted.length} in all`
            : 'not seen');
        expect(closedAt, seen).toBeDefined();
        expect(acceptedAt, seen).toBeDefined();
        const ms = (closedAt as number) - (acceptedAt as number);
        expect(ms, seen).toBeGreaterThanOrEqual(1_500);
        expect(ms, seen).toBeLessThan(6_000);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect(usedText).toMatch(/^HTTP\/1.1 200/);
        expect(usedClosed).toBe(false);
      } finally {
        harness().app.server.off('connection', onConnection);
        silent.destroy();
        used.destroy();
      }
    }, 30_000);
  },
  { KOSH_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), KOSH_HEADERS_TIMEOUT_MS: '2000' },
);
