import net from 'node:net';
import { beforeAll, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/domain/errors.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';

/**
 * Errors raised before a request reaches a route — by Fastify's router, or by Node's HTTP parser
 * on the raw connection — answer the documented envelope with a request id, under catalogued codes
 * and statuses, like every other error.
 */
function rawRequest(port: number, text: string, waitMs = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${waitMs} ms; got ${JSON.stringify(received)}`));
    }, waitMs);
    socket.on('data', (chunk) => {
      received += chunk.toString('utf8');
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.on('error', () => {});
    socket.write(text);
  });
}

function parse(answer: string): {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
} {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
}

function expectEnvelope(status: number, headers: Record<string, unknown>, body: unknown, code: string) {
  const error = (body as { error: Record<string, unknown> }).error;
  expect(status).toBe(ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE].status);
  expect(error).toMatchObject({ code, type: 'invalid_request_error' });
  expect(Object.keys(error).sort()).toEqual(['code', 'doc_url', 'field', 'message', 'request_id', 'type']);
  expect(error.doc_url).toMatch(new RegExp(`^http.*/docs/errors#${code}$`));
  expect(error.request_id).toBe(headers['x-request-id']);
  expect(String(headers['content-type'])).toMatch(/^application\/json/);
}

describeEachDatabase(
  'security: errors before a route answer the envelope',
  (harness) => {
    let merchant: TestAccount;
    let port: number;
    beforeAll(async () => {
      merchant = await harness().merchant('Framework');
      await harness().app.listen({ port: 0, host: '127.0.0.1' });
      port = (harness().app.server.address() as net.AddressInfo).port;
    });

    it('a malformed percent-encoding in the URL: 400 invalid_url', async () => {
      const reply = await harness().request('GET', '/v1/orders/%E0%A4%A/', { auth: merchant });
      expectEnvelope(reply.statusCode, reply.headers, reply.json(), 'invalid_url');
    });

    it('a path id longer than any id: 404 resource_not_found, not 414', async () => {
      const reply = await harness().request('GET', `/v1/orders/order_${'a'.repeat(300)}/`, {
        auth: merchant,
      });
      expectEnvelope(reply.statusCode, reply.headers, reply.json(), 'resource_not_found');
    });

    it('a request line the parser cannot read: 400 malformed_request', async () => {
      const answer = parse(await rawRequest(port, 'GET /v1/orders/ HTTP/1.1 EXTRA\r\nHost: x\r\n\r\n'));
      expectEnvelope(answer.status, answer.headers, answer.body, 'malformed_request');
    });

    it('a malformed header: 400 malformed_request', async () => {
      const answer = parse(
        await rawRequest(port, 'GET /v1/orders/ HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'),
      );
      expectEnvelope(answer.status, answer.headers, answer.body, 'malformed_request');
    });

    it('headers over 16 KiB: 431 headers_too_large', async () => {
      const answer = parse(
        await rawRequest(port, `GET /v1/orders/ HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      );
      expectEnvelope(answer.status, answer.headers, answer.body, 'headers_too_large');
    });

    it('a request whose body never finishes: 408 request_timeout, and the connection is closed', async () => {
      const started = Date.now();
      const answer = parse(
        await rawRequest(
          port,
          `POST /v1/orders/ HTTP/1.1\r\nHost: x\r\nAuthorization: ${merchant.auth}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"amount":`,
        ),
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
      expectEnvelope(answer.status, answer.headers, answer.body, 'request_timeout');
    });
  },
  { KOSH_REQUEST_TIMEOUT_MS: '2000', KOSH_HEADERS_TIMEOUT_MS: '1000' },
);
