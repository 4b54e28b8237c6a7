import { describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/harness.js';
import { choose, createOrder, createPayment, openPage, returnFields } from '../helpers/payments.js';

// The performance work on the hot path (prepared statements, cached methods JSON, one log line per
// request) must not change what callers see.
describeEachDatabase('hot path', (harness) => {
  it('serves the methods object from its cached JSON with no database round trip once warm', async () => {
    const merchant = await harness().merchant();
    const first = await harness().request('GET', '/v1/payments/methods/', { auth: merchant });
    harness().queries.reset();
    const second = await harness().request('GET', '/v1/payments/methods', { auth: merchant });
    // The verified key and the account's methods both come from memory: nothing reaches the database.
    expect(harness().queries.trips).toEqual([]);
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

  it('creates, fetches and lists orders in one prepared round trip each, on every call', async () => {
    const merchant = await harness().merchant();
    const { queries } = harness();
    /** The names of the prepared statements one request sent; any unprepared SQL shows as its text. */
    const tripsOf = async (method: 'GET' | 'POST', url: string, json?: unknown) => {
      queries.reset();
      const response = await harness().request(method, url, { auth: merchant, json });
      expect(response.statusCode).toBe(200);
      return { response, trips: queries.trips.map((trip) => trip.prepared ?? trip.text) };
    };
    await harness().request('GET', '/v1/orders/', { auth: merchant }); // the key is verified and cached
    const created: string[] = [];
    // More executions than PostgreSQL's five custom plans, so the generic plans are exercised too.
    for (let i = 0; i < 12; i++) {
      const { response, trips } = await tripsOf('POST', '/v1/orders/', { amount: 1000 + i, currency: 'INR' });
      expect(trips).toEqual(['orders_insert']);
      created.push(response.json().data.id);
    }
    for (const id of created) {
      const { response, trips } = await tripsOf('GET', `/v1/orders/${id}/`);
      expect(trips).toEqual(['orders_find']);
      expect(response.json().data.id).toBe(id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const { response, trips } = await tripsOf(
        'GET',
        `/v1/orders/?limit=5${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(trips).toEqual([cursor ? 'orders_list_after' : 'orders_list_first']);
      const body = response.json();
      seen.push(...body.data.map((order: { id: string }) => order.id));
      cursor = body.next_cursor;
      if (!cursor) break;
    }
    // Newest first by id (the test clock stands still, so ids of one millisecond order by their random part).
    expect(seen).toEqual([...created].sort().reverse());
  });

  it('runs a whole sandbox charge in 6 round trips of prepared statements, none of them reading the account', async () => {
    const merchant = await harness().merchant();
    const { queries } = harness();
    const charge = async () => {
      const trips: string[][] = [];
      const step = async <T>(work: () => Promise<T>): Promise<T> => {
        queries.reset();
        const result = await work();
        // One entry per round trip the port made; statements that shared one are joined by ' + '.
        trips.push(queries.wire.map((trip) => trip.join(' + ')));
        return result;
      };
      const orderId = await step(() => createOrder(harness(), merchant));
      const { paymentId } = await step(() => createPayment(harness(), merchant, {}, orderId));
      const token = await step(() => openPage(harness(), paymentId));
      const returned = await step(() => choose(harness(), paymentId, token, 'success'));
      expect(returned.statusCode).toBe(200);
      expect(returnFields(returned.body)).toMatchObject({ payment_id: paymentId, status: 'captured' });
      const fetched = await step(() =>
        harness().request('GET', `/v1/payments/${paymentId}/`, { auth: merchant }),
      );
      expect(fetched.json().data).toMatchObject({ id: paymentId, status: 'captured' });
      return trips;
    };
    await charge(); // keys, the account and its return-signing secret are read once, then kept
    const trips = await charge();
    expect(trips).toEqual([
      ['orders_insert'],
      ['orders_start_payment_v5'],
      // The payment read and, for the sandbox bank page, its fresh token set, in one statement.
      ['payments_find_for_page'],
      [
        // The choice is decided from the payment as the page read it (not read again: the update
        // checks it was not written since). The customer's choice and the sandbox bank's answer to
        // it commit together (the sandbox never leaves the process, so it is asked before the
        // transaction), as one update of the payment from created to captured: BEGIN travels with
        // it, with the order read under its row lock (payment, then order) and moved to paid; the
        // three events go with the COMMIT.
        'BEGIN + payments_change_status + orders_find_for_update + orders_change_status',
        'events_insert_3 + COMMIT',
      ],
      ['payments_find'],
    ]);
    expect(trips.flat()).toHaveLength(6);
  });

  it('keeps every account: none is deleted and no id changes, so rows that name one never dangle', async () => {
    const merchant = await harness().merchant();
    const { db } = harness().container;
    await expect(db.query('DELETE FROM accounts WHERE id = $1', [merchant.id])).rejects.toMatchObject({
      code: '23001',
    });
    await expect(
      db.query(`UPDATE accounts SET id = id || '_x' WHERE id = $1`, [merchant.id]),
    ).rejects.toMatchObject({ code: '23001' });
    const [row] = await db.query<{ id: string }>('SELECT id FROM accounts WHERE id = $1', [merchant.id]);
    expect(row?.id).toBe(merchant.id);
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
