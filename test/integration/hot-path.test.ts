import { describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/harness.js';

// The performance work on the hot path (prepared statements, cached methods JSON, one log line per
// request) must not change what callers see.
describeEachDatabase('hot path', (harness) => {
  it('serves the methods object from its cached JSON, identical on every call', async () => {
    const merchant = await harness().merchant();
    const first = await harness().request('GET', '/v1/payments/methods/', { auth: merchant });
    const second = await harness().request('GET', '/v1/payments/methods', { auth: merchant });
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(second.body).toBe(first.body);
    const body = first.json();
    expect(Object.keys(body)[0]).toBe('entity');
    expect(body.entity).toBe('methods');
    expect(body.netbanking.ICIC).toEqual(expect.any(String));
    expect(body.card_networks.visa).toBe(false);
  });

  it("shows each account its own methods, never another's cached object", async () => {
    const one = await harness().merchant();
    const two = await harness().merchant();
    const { methods } = harness().container.services;
    const current = await methods.get(two.id, 'test');
    await harness().container.db.transaction((tx) =>
      methods.set(tx, two.id, 'test', { ...current, netbanking: { HDFC: 'HDFC Bank' } }),
    );
    const a = (await harness().request('GET', '/v1/payments/methods/', { auth: one })).json();
    const b = (await harness().request('GET', '/v1/payments/methods/', { auth: two })).json();
    expect(Object.keys(b.netbanking)).toEqual(['HDFC']);
    expect(Object.keys(a.netbanking).length).toBeGreaterThan(1);
  });

  it('runs the prepared order statements repeatedly on every connection, first page and later pages', async () => {
    const merchant = await harness().merchant();
    const created: string[] = [];
    // More executions than PostgreSQL's five custom plans, so the generic plans are exercised too.
    for (let i = 0; i < 12; i++) {
      const response = await harness().request('POST', '/v1/orders/', {
        auth: merchant,
        json: { amount: 1000 + i, currency: 'INR' },
      });
      expect(response.statusCode).toBe(200);
      created.push(response.json().data.id);
    }
    for (const id of created) {
      const fetched = await harness().request('GET', `/v1/orders/${id}/`, { auth: merchant });
      expect(fetched.json().data.id).toBe(id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const url: string = `/v1/orders/?limit=5${cursor ? `&cursor=${cursor}` : ''}`;
      const body = (await harness().request('GET', url, { auth: merchant })).json();
      seen.push(...body.data.map((order: { id: string }) => order.id));
      cursor = body.next_cursor;
      if (!cursor) break;
    }
    // Newest first by id (the test clock stands still, so ids of one millisecond order by their random part).
    expect(seen).toEqual([...created].sort().reverse());
  });

  it('logs one line per request with its status and time, and never the credentials', async () => {
    const merchant = await harness().merchant();
    const marker = `hotpath-${Date.now()}`;
    await harness().request('GET', '/v1/payments/methods/', {
      auth: merchant,
      headers: { 'x-request-id': marker },
    });
    const lines = harness()
      .logs()
      .split('\n')
      .filter((line) => line.includes(marker));
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ msg: 'request', method: 'GET', status: 200, account_id: merchant.id });
    expect(line.ms).toEqual(expect.any(Number));
    expect(harness().logs()).not.toContain(merchant.credentials.secret_key);
    expect(harness().logs()).not.toContain('incoming request');
  });
});

describeEachDatabase(
  'request log switched off',
  (harness) => {
    it('writes no line for a successful request when KOSH_REQUEST_LOG=false', async () => {
      const merchant = await harness().merchant();
      const marker = `quiet-${Date.now()}`;
      const response = await harness().request('GET', '/v1/payments/methods/', {
        auth: merchant,
        headers: { 'x-request-id': marker },
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-request-id']).toBe(marker);
      expect(harness().logs()).not.toContain(marker);
    });
  },
  { KOSH_REQUEST_LOG: 'false' },
);

describe('request ids', () => {
  it('are unique per request when the caller sends none', async () => {
    // Covered through the harness: two requests, two different ids.
    const { createHarness } = await import('../helpers/harness.js');
    const h = await createHarness('pglite');
    try {
      const a = await h.request('GET', '/healthz');
      const b = await h.request('GET', '/healthz');
      expect(a.headers['x-request-id']).toMatch(/^req_[0-9a-f]{12}[0-9a-z]+$/);
      expect(b.headers['x-request-id']).not.toBe(a.headers['x-request-id']);
    } finally {
      await h.close();
    }
  });
});
