import net from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';

/**
 * What a request says besides its fields is read as sent or refused: a body on a route that takes
 * none, a fragment or a broken escape in the URL, a charset other than UTF-8, a Content-Type given
 * twice. Each refusal is the API's JSON error and changes nothing.
 */
describeEachDatabase('HTTP framing', (harness) => {
  let merchant: TestAccount;
  let port: number;
  beforeAll(async () => {
    merchant = await harness().merchant();
    await harness().app.listen({ port: 0, host: '127.0.0.1' });
    port = (harness().app.server.address() as net.AddressInfo).port;
  });

  const expectError = (response: LightMyRequestResponse, status: number, code: string, field?: string) => {
    expect(response.statusCode, response.body).toBe(status);
    expect(response.json().error).toMatchObject({ code, ...(field ? { field } : {}) });
  };

  /** One raw HTTP/1.1 exchange: the status line's code and the JSON body. */
  async function raw(
    head: string[],
    body = '',
    host = 'Host: 127.0.0.1',
  ): Promise<{ status: number; json: { error: { code: string; message: string } }; text: string }> {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
    });
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(
      `${[...head, host, `Authorization: ${merchant.auth}`, 'Connection: close'].filter(Boolean).join('\r\n')}\r\n\r\n${body}`,
    );
    await closed;
    const [status] = text.match(/(?<=^HTTP\/1\.1 )\d{3}/) ?? [];
    return { status: Number(status), json: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)), text };
  }

  /** A request with a body as given, bytes and all. */
  const send = (method: 'GET' | 'POST', url: string, contentType: string, payload: string | Buffer) =>
    harness().app.inject({
      method,
      url,
      headers: { authorization: merchant.auth, 'content-type': contentType },
      payload,
    });

  async function ordersWithReceipt(receipt: string): Promise<number> {
    const rows = await harness().container.db.query(
      'SELECT id FROM orders WHERE account_id = $1 AND receipt = $2',
      [merchant.id, receipt],
    );
    return rows.length;
  }

  it('refuses a body on a DELETE that takes none, naming its field, and deletes nothing', async () => {
    const created = await harness().request('POST', '/v1/webhooks/', {
      auth: merchant,
      json: { url: 'http://127.0.0.1:9/hooks', enabled_events: ['payment.captured'] },
    });
    expect(created.statusCode, created.body).toBe(200);
    const path = `/v1/webhooks/${created.json().data.id}/`;
    const dryRun = await harness().request('DELETE', path, { auth: merchant, json: { dry_run: true } });
    expectError(dryRun, 400, 'unknown_field', 'dry_run');
    expect(dryRun.json().error.message).toContain('takes no request body');
    expect((await harness().request('GET', path, { auth: merchant })).statusCode).toBe(200);
    expectError(await harness().request('DELETE', path, { auth: merchant, json: [1] }), 400, 'invalid_body');
    // An empty JSON object is no body: the endpoint is deleted.
    const deleted = await harness().request('DELETE', path, { auth: merchant, json: {} });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect((await harness().request('GET', path, { auth: merchant })).statusCode).toBe(404);
    // Nor is an empty chunked body.
    const another = await harness().request('POST', '/v1/webhooks/', {
      auth: merchant,
      json: { url: 'http://127.0.0.1:9/other', enabled_events: ['payment.captured'] },
    });
    const chunked = await raw(
      [
        `DELETE /v1/webhooks/${another.json().data.id}/ HTTP/1.1`,
        'Content-Type: application/json',
        'Transfer-Encoding: chunked',
      ],
      '0\r\n\r\n',
    );
    expect(chunked.status, chunked.text).toBe(200);
  });

  it('refuses a body on a GET, which Kosh would not read', async () => {
    const withBody = await send('GET', '/v1/payments/methods/', 'application/json', '{"expand": ["banks"]}');
    expectError(withBody, 400, 'invalid_body');
    expect(withBody.json().error.message).toBe('GET /v1/payments/methods/ takes no request body.');
    expect((await harness().request('GET', '/v1/payments/methods/', { auth: merchant })).statusCode).toBe(
      200,
    );
  });

  it('refuses a query string whose percent-escapes do not decode, and a fragment in the URL', async () => {
    for (const query of ['receipt=%zz', 'receipt=caf%E9', 'receipt=%']) {
      const response = await harness().request('GET', `/v1/orders/?${query}`, { auth: merchant });
      expectError(response, 400, 'invalid_url');
    }
    const decoded = await harness().request('GET', '/v1/orders/?receipt=caf%C3%A9', { auth: merchant });
    expect(decoded.statusCode).toBe(200);
    for (const target of ['/v1/payments/methods/#expand=1', '/v1/orders/?limit=1#x']) {
      const response = await raw([`GET ${target} HTTP/1.1`]);
      expect(response.status).toBe(400);
      expect(response.json.error).toMatchObject({ code: 'invalid_url' });
    }
  });

  it('reads a JSON body only as UTF-8 and refuses another charset, creating nothing', async () => {
    // "café" in UTF-8: in ISO-8859-1 the same bytes say "cafÃ©".
    const bytes = Buffer.from('{"amount": 5000, "currency": "INR", "receipt": "latin-café"}', 'utf8');
    for (const charset of ['iso-8859-1', '"windows-1252"', 'utf-16']) {
      const response = await send('POST', '/v1/orders/', `application/json; charset=${charset}`, bytes);
      expectError(response, 415, 'unsupported_media_type');
    }
    expect(await ordersWithReceipt('latin-café')).toBe(0);
    for (const charset of ['UTF-8', 'utf8']) {
      const response = await send('POST', '/v1/orders/', `application/json; charset=${charset}`, bytes);
      expect(response.statusCode, response.body).toBe(200);
    }
    expect(await ordersWithReceipt('latin-café')).toBe(2);
    // ASCII is UTF-8's first 128 characters: a form labelled so reads the same.
    const ascii = await send(
      'POST',
      '/v1/orders/',
      'application/x-www-form-urlencoded; charset=us-ascii',
      'amount=5000&currency=INR&receipt=ascii-form',
    );
    expect(ascii.statusCode, ascii.body).toBe(200);
  });

  it('refuses a Content-Type given twice, whichever a proxy read, creating nothing', async () => {
    const body = '{"amount": 5000, "currency": "INR", "receipt": "two-types"}';
    const response = await raw(
      [
        'POST /v1/orders/ HTTP/1.1',
        'Content-Type: application/json',
        'Content-Type: text/plain',
        `Content-Length: ${Buffer.byteLength(body)}`,
      ],
      body,
    );
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'invalid_body' });
    expect(response.json.error.message).toContain('Content-Type is given more than once');
    expect(await ordersWithReceipt('two-types')).toBe(0);
  });

  it('answers a request without Host, and a bodiless QUERY, in the API envelope with the right code', async () => {
    const hostless = await raw(['GET /healthz HTTP/1.1'], '', '');
    expect(hostless.status).toBe(400);
    expect(hostless.json.error).toMatchObject({
      code: 'malformed_request',
      message: 'The request has no Host header.',
    });
    expect(hostless.text).toMatch(/\r\nx-request-id: req_/i);
    const query = await raw(['QUERY /healthz HTTP/1.1']);
    expect(query.status).toBe(400);
    expect(query.json.error).toMatchObject({ code: 'malformed_request' });
  });

  it('tells every cache in between to keep no answer', async () => {
    for (const [path, auth] of [
      ['/v1/payments/methods/', merchant],
      ['/v1/orders/ord_missing/', merchant],
      ['/healthz', undefined],
      ['/v1/openapi.json', undefined],
    ] as const) {
      const response = await harness().request('GET', path, auth ? { auth } : {});
      expect(response.headers['cache-control'], path).toBe('no-store');
    }
    // An error answered before the request reaches a route too.
    const unreadable = await raw(['GET /healthz HTTP/9.9']);
    expect(unreadable.status).toBe(400);
    expect(unreadable.text).toMatch(/\r\ncache-control: no-store\r\n/i);
  });
});
