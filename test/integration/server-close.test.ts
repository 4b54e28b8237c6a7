import http from 'node:http';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { createHarness } from '../helpers/harness.js';
import { freePort } from '../helpers/process.js';

/**
 * A request under way when the server starts closing is answered, and its keep-alive connection
 * does not hold the close up for the keep-alive timeout (72 s): the reply closes the connection.
 */
describe('closing the HTTP server', () => {
  it('answers a request under way, closes its keep-alive connection, and finishes closing at once', async () => {
    const harness = await createHarness('pglite');
    const port = await freePort();
    await harness.app.listen({ port, host: '127.0.0.1' });
    const merchant = await harness.merchant();
    const agent = new http.Agent({ keepAlive: true });
    try {
      const body = JSON.stringify({ amount: 5000, currency: 'INR', receipt: 'close-1' });
      let connected!: () => void;
      const sentHeaders = new Promise<void>((resolve) => {
        connected = resolve;
      });
      const answered = new Promise<{ status: number; connection: string | undefined; body: string }>(
        (resolve, reject) => {
          const request = http.request(
            {
              host: '127.0.0.1',
              port,
              method: 'POST',
              path: '/v1/orders/',
              agent,
              headers: {
                authorization: merchant.auth,
                'content-type': 'application/json',
                'content-length': Buffer.byteLength(body),
              },
            },
            (response) => {
              let text = '';
              response.setEncoding('utf8').on('data', (chunk: string) => {
                text += chunk;
              });
              response.on('end', () =>
                resolve({
                  status: response.statusCode!,
                  connection: response.headers.connection,
                  body: text,
                }),
              );
            },
          );
          request.on('error', reject);
          request.on('socket', (socket) => socket.once('connect', connected));
          // Half the body now: the request is under way, its connection not idle.
          request.write(body.slice(0, 10));
          sentHeaders.then(() =>
            setTimeout(() => {
              closed = harness.app.close();
              setTimeout(() => request.end(body.slice(10)), 300);
            }, 200),
          );
        },
      );
      let closed: Promise<unknown> | undefined;
      const answer = await answered;
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ data: { amount: 5000, receipt: 'close-1' } });
      expect(answer.connection).toBe('close');
      const started = Date.now();
      await closed;
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      agent.destroy();
      await harness.container.close();
    }
  }, 30_000);

  it('answers every request a busy keep-alive connection sends while closing, and resets none', async () => {
    const harness = await createHarness('pglite');
    const port = await freePort();
    await harness.app.listen({ port, host: '127.0.0.1' });
    const merchant = await harness.merchant();
    const order = await harness.request('POST', '/v1/orders/', {
      auth: merchant,
      json: { amount: 5000, currency: 'INR', receipt: 'busy' },
    });
    const orderId = (order.json() as { data: { id: string } }).data.id;
    interface Outcome {
      status?: number;
      connection?: string;
      code?: string;
      body?: string;
    }
    const get = (agent: http.Agent) =>
      new Promise<Outcome>((resolve) => {
        const request = http.get(
          {
            host: '127.0.0.1',
            port,
            path: `/v1/orders/${orderId}`,
            agent,
            headers: { authorization: merchant.auth },
          },
          (response) => {
            let body = '';
            response.setEncoding('utf8').on('data', (chunk: string) => {
              body += chunk;
            });
            response.on('end', () =>
              resolve({ status: response.statusCode, connection: response.headers.connection, body }),
            );
          },
        );
        request.on('error', (error: NodeJS.ErrnoException) => resolve({ code: error.code ?? error.message }));
      });
    // Four clients, each sending its next request the moment the last one is answered, on one
    // keep-alive connection, until the server refuses new connections.
    const client = async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const outcomes: Outcome[] = [];
      try {
        for (;;) {
          const outcome = await get(agent);
          outcomes.push(outcome);
          if (outcome.code !== undefined) return outcomes;
        }
      } finally {
        agent.destroy();
      }
    };
    try {
      const clients = Array.from({ length: 4 }, client);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = Date.now();
      await harness.app.close();
      expect(Date.now() - started).toBeLessThan(5_000);
      const outcomes = (await Promise.all(clients)).flat();
      const failures = outcomes.filter((outcome) => outcome.code !== undefined);
      // Each client ends on a refused connection: the server stopped accepting. None was reset.
      expect(failures.map((outcome) => outcome.code)).toEqual([
        'ECONNREFUSED',
        'ECONNREFUSED',
        'ECONNREFUSED',
        'ECONNREFUSED',
      ]);
      const answers = outcomes.filter((outcome) => outcome.status !== undefined);
      expect(answers.length).toBeGreaterThan(8);
      expect(answers.every((answer) => answer.status === 200 || answer.status === 503)).toBe(true);
      // The last answer on each connection told the client to close it.
      expect(answers.filter((answer) => answer.connection === 'close').length).toBeGreaterThanOrEqual(4);
      for (const refused of answers.filter((answer) => answer.status === 503)) {
        expect(JSON.parse(refused.body!)).toMatchObject({ error: { code: 'service_unavailable' } });
      }
    } finally {
      await harness.container.close();
    }
  }, 30_000);
});

describe('closing the HTTP server, an idle keep-alive connection', () => {
  it('is left open for a moment, so a request its client sends then is answered 503, not reset', async () => {
    const harness = await createHarness('pglite');
    const port = await freePort();
    await harness.app.listen({ port, host: '127.0.0.1' });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status?: number; connection?: string; code?: string; reused?: boolean }>((resolve) => {
        const request = http.get({ host: '127.0.0.1', port, path: '/healthz', agent }, (response) => {
          response.resume();
          response.on('end', () =>
            resolve({
              status: response.statusCode,
              connection: response.headers.connection,
              reused: request.reusedSocket,
            }),
          );
        });
        request.on('error', (error: NodeJS.ErrnoException) => resolve({ code: error.code }));
      });
    try {
      expect((await get()).status).toBe(200);
      const closed = harness.app.close();
      // Idle for half a second after the close began, then the next request on the same connection.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await get()).toEqual({ status: 503, connection: 'close', reused: true });
      await closed;
    } finally {
      agent.destroy();
      await harness.container.close();
    }
  }, 30_000);

  it('closes a connection that never sent a byte after the grace, so it cannot hold the close up', async () => {
    const harness = await createHarness('pglite');
    const port = await freePort();
    await harness.app.listen({ port, host: '127.0.0.1' });
    // Opened and left silent, as a browser's preconnect or a probe does.
    const silent = net.connect(port, '127.0.0.1');
    const silentEnded = new Promise<void>((resolve) => silent.once('close', () => resolve()));
    silent.on('error', () => {});
    await new Promise<void>((resolve) => silent.once('connect', () => resolve()));
    // A keep-alive connection that sent a request earlier and now sends part of its next one.
    const busy = net.connect(port, '127.0.0.1');
    busy.on('error', () => {});
    await new Promise<void>((resolve) => busy.once('connect', () => resolve()));
    let busyText = '';
    busy.setEncoding('utf8').on('data', (chunk: string) => {
      busyText += chunk;
    });
    busy.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(busyText).toMatch(/^HTTP\/1.1 200/);
    busy.write('GET /healthz HTTP/1.1\r\nHo');
    try {
      const started = Date.now();
      const closed = harness.app.close();
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The next request's first bytes are on their way: the connection is kept through the grace.
      busy.write('st: x\r\n\r\n');
      await closed;
      await silentEnded;
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(busyText.match(/HTTP\/1.1 /g)).toHaveLength(2);
      expect(busyText).toMatch(/HTTP\/1.1 503[\s\S]*[Cc]onnection: close/);
    } finally {
      silent.destroy();
      busy.destroy();
      await harness.container.close();
    }
  }, 30_000);
});

describe('a database that went away', () => {
  it('answers 503 and logs one line with the reason per request, no stack trace', async () => {
    const harness = await createHarness('pglite');
    const merchant = await harness.merchant();
    await harness.container.db.close();
    for (let i = 0; i < 3; i++) {
      const response = await harness.request('POST', '/v1/orders/', {
        auth: merchant,
        json: { amount: 5000, currency: 'INR' },
      });
      expect(response.statusCode).toBe(503);
      expect(response.json().error.code).toBe('service_unavailable');
    }
    const lines = harness
      .logs()
      .split('\n')
      .filter((line) => line.includes('service unavailable'));
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(JSON.parse(line)).toMatchObject({
        level: 40,
        code: 'service_unavailable',
        reason: expect.any(String),
      });
      expect(line).not.toContain('"stack"');
    }
    await harness.app.close();
  });
});
