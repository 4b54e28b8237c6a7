import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** How a local fake of a payment provider can misbehave after it acted (the answer is lost). */
export type ProviderFault = 'timeout' | 'bad_gateway_html' | 'garbage' | 'reset';

export interface LocalServer {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /**
   * Answers as a provider whose answer Kosh cannot read: holds the request `timeoutMs` then drops
   * it, a 502 HTML page, `garbage` (cut-off JSON) with a 200, or a reset connection.
   */
  misbehave(
    fault: ProviderFault,
    response: http.ServerResponse,
    options: { timeoutMs: number; garbage: string },
  ): void;
  /** Stops listening, cuts open connections and cancels held answers. */
  close(): Promise<void>;
}

/**
 * Serves `handle` on a free port of 127.0.0.1, the way every local fake provider does: a request
 * whose handling throws is answered with a bare 500.
 */
export async function serveLocally(
  handle: (request: http.IncomingMessage, response: http.ServerResponse) => Promise<void>,
): Promise<LocalServer> {
  const held = new Set<NodeJS.Timeout>();
  const server = http.createServer((request, response) => {
    void handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    misbehave(fault, response, options) {
      if (fault === 'timeout') {
        const timer = setTimeout(() => {
          held.delete(timer);
          response.destroy();
        }, options.timeoutMs);
        held.add(timer);
      } else if (fault === 'bad_gateway_html') {
        response
          .writeHead(502, { 'content-type': 'text/html' })
          .end('<html><body><h1>502 Bad Gateway</h1></body></html>');
      } else if (fault === 'garbage') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(options.garbage);
      } else {
        response.socket?.destroy();
      }
    },
    async close() {
      for (const timer of held) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
