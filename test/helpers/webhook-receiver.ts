import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The status this receiver answered with. */
  status: number;
  /** The receiver's wall clock at arrival (the test's injected clock). */
  receivedAt: Date;
}

/**
 * A real HTTP server that records every webhook it receives and answers with a status the test sets
 * (a number, or a function of the request count). Counts TCP connections too, so a test can prove
 * that nothing connected at all.
 */
export class TestReceiver {
  readonly received: ReceivedWebhook[] = [];
  connections = 0;
  status: number | ((index: number) => number) = 200;
  responseHeaders: Record<string, string> = {};
  responseBody = 'ok';
  /** While true, requests are recorded but never answered (a receiver hanging mid-delivery). */
  hold = false;
  private readonly server: http.Server;

  private readonly now: () => Date;

  private constructor(now: () => Date) {
    this.now = now;
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const index = this.received.length;
        const status = typeof this.status === 'function' ? this.status(index) : this.status;
        this.received.push({
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          status,
          receivedAt: this.now(),
        });
        if (!this.hold) response.writeHead(status, this.responseHeaders).end(this.responseBody);
      });
    });
    this.server.on('connection', () => {
      this.connections += 1;
    });
  }

  static async start(now: () => Date = () => new Date()): Promise<TestReceiver> {
    const receiver = new TestReceiver(now);
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Verifies one received webhook with the official `standardwebhooks` package, as the receiver did on
 * arrival. Its timestamp check compares with Date.now(); the arrival time on the test's injected
 * clock plays the receiver's wall clock.
 */
export function verifyWebhook(secret: string, received: ReceivedWebhook): unknown {
  const realNow = Date.now;
  Date.now = () => received.receivedAt.getTime();
  try {
    return new Webhook(secret).verify(received.body, received.headers as Record<string, string>);
  } finally {
    Date.now = realNow;
  }
}
