import http from 'node:http';
import { Webhook } from 'standardwebhooks';

/**
 * A webhook receiver on a fixed port that can refuse connections (not listening), answer 500, or
 * verify and accept. Only a verified delivery answered 200 counts as received.
 */
export class WebhookReceiver {
  state: 'refuse' | 'error' | 'up' = 'refuse';
  readonly delivered = new Set<string>();
  /** Verified deliveries answered 200, per webhook-id. */
  private readonly counts = new Map<string, number>();
  attempts = 0;
  secret = '';
  private server: http.Server | undefined;

  constructor(readonly port: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async listen(): Promise<void> {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.attempts++;
        if (this.state !== 'up') return void response.writeHead(500).end('down for maintenance');
        const body = Buffer.concat(chunks).toString('utf8');
        new Webhook(this.secret).verify(body, request.headers as Record<string, string>);
        const id = String(request.headers['webhook-id']);
        this.delivered.add(id);
        this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
        response.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  /** How many times the event was delivered (verified and answered 200). */
  deliveries(id: string): number {
    return this.counts.get(id) ?? 0;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
