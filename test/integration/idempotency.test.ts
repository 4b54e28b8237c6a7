import { beforeAll, expect, it } from 'vitest';
import { requestFingerprint } from '../../src/http/idempotency.js';
import { basicAuth, describeEachDatabase, type TestAccount } from '../helpers/harness.js';

const ORDER = { amount: 5000, currency: 'INR', receipt: 'idem-1', metadata: { cart: 'c-1' } };

describeEachDatabase('idempotency', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant();
  });

  async function orderCount(accountId: string): Promise<number> {
    const [row] = await harness().container.db.query<{ count: string }>(
      'SELECT count(*) AS count FROM orders WHERE account_id = $1',
      [accountId],
    );
    return Number(row?.count);
  }

  async function keyCount(accountId: string): Promise<number> {
    const [row] = await harness().container.db.query<{ count: string }>(
      'SELECT count(*) AS count FROM idempotency_keys WHERE account_id = $1',
      [accountId],
    );
    return Number(row?.count);
  }

  function post(account: TestAccount, key: string | undefined, json: unknown) {
    return harness().request('POST', '/v1/orders/', {
      auth: account,
      json,
      headers: key === undefined ? {} : { 'idempotency-key': key },
    });
  }

  it('50 concurrent identical POSTs with one key create exactly one order; the rest get the same 200 or a 409', async () => {
    const account = await harness().merchant('Concurrent');
    const replies = await Promise.all(Array.from({ length: 50 }, () => post(account, 'concurrent-1', ORDER)));
    expect(await orderCount(account.id)).toBe(1);
    const ok = replies.filter((reply) => reply.statusCode === 200);
    const conflicts = replies.filter((reply) => reply.statusCode === 409);
    expect(ok.length + conflicts.length).toBe(50);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((reply) => reply.body)).size).toBe(1);
    for (const reply of conflicts) {
      expect(reply.json().error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_in_use' });
    }
    expect(ok.filter((reply) => reply.headers['idempotent-replayed'] === undefined)).toHaveLength(1);

    const retry = await post(account, 'concurrent-1', ORDER);
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.rawPayload.equals(ok[0]!.rawPayload)).toBe(true);
    expect(retry.headers['content-type']).toBe(ok[0]!.headers['content-type']);
    expect(await orderCount(account.id)).toBe(1);
  });

  it('replays to every one of many identical retries sent at once after the first finished', async () => {
    const account = await harness().merchant('Retries at once');
    const first = await post(account, 'finished-1', ORDER);
    expect(first.statusCode).toBe(200);
    const retries = await Promise.all(Array.from({ length: 30 }, () => post(account, 'finished-1', ORDER)));
    expect(retries.map((reply) => reply.statusCode)).toEqual(Array(30).fill(200));
    for (const reply of retries) {
      expect(reply.headers['idempotent-replayed']).toBe('true');
      expect(reply.rawPayload.equals(first.rawPayload)).toBe(true);
    }
    // Another body under the key is still refused while retries are answered.
    const [other, retry] = await Promise.all([
      post(account, 'finished-1', { ...ORDER, amount: 6000 }),
      post(account, 'finished-1', ORDER),
    ]);
    expect(other.statusCode).toBe(422);
    expect(other.json().error.code).toBe('idempotency_key_reused');
    expect(retry.statusCode).toBe(200);
    expect(await orderCount(account.id)).toBe(1);
  });

  it('replays byte for byte for the same body in another key order, in a form body, and without the trailing slash', async () => {
    const first = await post(merchant, 'replay-1', ORDER);
    expect(first.statusCode).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const reordered = await post(merchant, 'replay-1', {
      metadata: { cart: 'c-1' },
      receipt: 'idem-1',
      currency: 'INR',
      amount: 5000,
    });
    const form = await harness().request('POST', '/v1/orders', {
      auth: merchant,
      form: 'amount=5000&currency=INR&receipt=idem-1&metadata[cart]=c-1',
      headers: { 'idempotency-key': 'replay-1' },
    });
    for (const replay of [reordered, form]) {
      expect(replay.statusCode).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toBe(first.body);
      expect(replay.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    }
  });

  it('refuses the same key with another body (422) and changes nothing', async () => {
    const account = await harness().merchant('Reuse');
    expect((await post(account, 'reuse-1', ORDER)).statusCode).toBe(200);
    const other = await post(account, 'reuse-1', { ...ORDER, amount: 5001 });
    expect(other.statusCode).toBe(422);
    expect(other.json().error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    expect(await orderCount(account.id)).toBe(1);
  });

  it('keeps keys apart per account and per mode', async () => {
    const first = await harness().merchant('Scope A');
    const second = await harness().merchant('Scope B');
    const live = await harness().liveKey(first);
    const a = await post(first, 'shared-key', ORDER);
    const b = await post(second, 'shared-key', ORDER);
    const c = await post(live, 'shared-key', ORDER);
    for (const reply of [a, b, c]) {
      expect(reply.statusCode).toBe(200);
      expect(reply.headers['idempotent-replayed']).toBeUndefined();
    }
    expect(new Set([a, b, c].map((reply) => reply.json().data.id)).size).toBe(3);
  });

  it('does not store requests rejected by validation or by the handler; the key stays usable', async () => {
    const account = await harness().merchant('Rejected');
    const invalid = await post(account, 'rejected-1', { amount: 'x', currency: 'INR' });
    expect(invalid.statusCode).toBe(400);
    const refused = await post(account, 'rejected-1', { amount: 1, currency: 'INR' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.code).toBe('amount_out_of_range');
    expect(await keyCount(account.id)).toBe(0);
    const ok = await post(account, 'rejected-1', ORDER);
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['idempotent-replayed']).toBeUndefined();
    expect(await keyCount(account.id)).toBe(1);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a control character', 'abc\u007fdef'],
  ])('refuses a key that is %s with 400 invalid_idempotency_key', async (_name, key) => {
    const account = await harness().merchant('Bad key');
    const reply = await post(account, key, ORDER);
    expect(reply.statusCode).toBe(400);
    expect(reply.json().error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_idempotency_key',
    });
    expect(await orderCount(account.id)).toBe(0);
  });

  it('refuses two Idempotency-Key headers, which would otherwise be read as one key joined by a comma', async () => {
    const account = await harness().merchant('Two keys');
    const reply = await harness().app.inject({
      method: 'POST',
      url: '/v1/orders/',
      headers: { authorization: basicAuth(account.credentials), 'idempotency-key': ['two-a', 'two-b'] },
      payload: ORDER,
    });
    expect(reply.statusCode).toBe(400);
    expect(reply.json().error).toMatchObject({
      code: 'invalid_idempotency_key',
      message: 'Send one Idempotency-Key header, not several.',
    });
    expect(await orderCount(account.id)).toBe(0);
  });

  it('accepts a key of 255 printable characters', async () => {
    expect(`${'~'.repeat(200)} !"#$%&'()*+,-./${'z'.repeat(39)}`).toHaveLength(255);
    const reply = await post(merchant, `${'~'.repeat(200)} !"#$%&'()*+,-./${'z'.repeat(39)}`, ORDER);
    expect(reply.statusCode).toBe(200);
  });

  it('without a key every POST creates', async () => {
    const account = await harness().merchant('No key');
    await post(account, undefined, ORDER);
    await post(account, undefined, ORDER);
    expect(await orderCount(account.id)).toBe(2);
  });

  it('rolls back the work and stores no key when the handler fails after writing (crash consistency)', async () => {
    const account = await harness().merchant('Crash');
    const principal = {
      accountId: account.id,
      accountKind: 'merchant' as const,
      accountName: 'Crash',
      mode: 'test' as const,
      apiKey: account.credentials.api_key,
    };
    const { services } = harness().container;
    await expect(
      services.idempotency.execute(principal, 'crash-1', Buffer.alloc(32), 'atomic', async ({ db: tx }) => {
        // On the transaction's handle, as a keyed route passes it, and a nested transaction.
        await services.orders.create(principal, { amount: 5000, currency: 'INR' }, tx);
        await tx.transaction((inner) =>
          inner.query("UPDATE orders SET receipt = 'inner' WHERE account_id = $1", [account.id]),
        );
        const [seen] = await tx.query<{ count: string }>(
          'SELECT count(*) FROM orders WHERE account_id = $1',
          [account.id],
        );
        expect(Number(seen?.count)).toBe(1);
        throw new Error('process died');
      }),
    ).rejects.toThrow('process died');
    expect(await orderCount(account.id)).toBe(0);
    expect(await keyCount(account.id)).toBe(0);
    const retry = await post(account, 'crash-1', ORDER);
    expect(retry.statusCode).toBe(200);
    expect(await orderCount(account.id)).toBe(1);
  });

  it.each(['atomic', 'phased'] as const)(
    'answers 409 to the same request while the first is in flight (%s work), then replays it',
    async (mode) => {
      const account = await harness().merchant(`In flight ${mode}`);
      const principal = {
        accountId: account.id,
        accountKind: 'merchant' as const,
        accountName: 'In flight',
        mode: 'test' as const,
        apiKey: account.credentials.api_key,
      };
      const { services } = harness().container;
      // Sign in once so the concurrent request needs no database round trip to authenticate.
      await harness().request('GET', '/v1/orders/', { auth: account });
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let started = () => {};
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      // The first request with this key: the same method, path and body as the POST below, held
      // inside its work (atomic: inside its transaction; phased: between its steps) until released.
      const fingerprint = requestFingerprint('POST', '/v1/orders/', ORDER);
      const first = services.idempotency.execute(principal, `flight-${mode}`, fingerprint, mode, async () => {
        started();
        await gate;
        return { status: 200, headers: { 'content-type': 'text/plain' }, body: Buffer.from('first') };
      });
      await running;
      try {
        const duplicate = await post(account, `flight-${mode}`, ORDER);
        expect(duplicate.statusCode).toBe(409);
        expect(duplicate.json().error).toMatchObject({
          type: 'idempotency_error',
          code: 'idempotency_key_in_use',
        });
        const other = await post(account, `flight-${mode}`, { ...ORDER, amount: 6000 });
        expect(other.statusCode).toBe(422);
        expect(other.json().error.code).toBe('idempotency_key_reused');
      } finally {
        // Released whatever happened above, so a failure here cannot hold the database for the rest.
        release();
        await first;
      }
      const replay = await post(account, `flight-${mode}`, ORDER);
      expect(replay.statusCode).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toBe('first');
      expect(await orderCount(account.id)).toBe(0);
    },
  );

  it('expires records after the retention time; the purge job deletes them', async () => {
    const account = await harness().merchant('Expiry');
    expect((await post(account, 'expire-1', ORDER)).statusCode).toBe(200);
    harness().clock.advance(harness().container.config.idempotencyTtlSeconds * 1000 + 1000);
    const again = await post(account, 'expire-1', { ...ORDER, amount: 6000 });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(await orderCount(account.id)).toBe(2);
    expect((await post(account, 'expire-2', ORDER)).statusCode).toBe(200);
    harness().clock.advance(harness().container.config.idempotencyTtlSeconds * 1000 + 1000);
    expect((await post(account, 'fresh-1', ORDER)).statusCode).toBe(200);
    const job = harness().container.services.idempotency.purgeJob(1);
    let purged = 0;
    for (let batch = await job.run(new AbortController().signal); batch > 0; ) {
      expect(batch).toBe(1);
      purged += batch;
      batch = await job.run(new AbortController().signal);
    }
    expect(purged).toBeGreaterThanOrEqual(2);
    // Only the record still within its retention time is left.
    expect(await keyCount(account.id)).toBe(1);
  });
});

describeEachDatabase('database transactions', (harness) => {
  it('binds a handle to the transaction and makes a nested transaction a savepoint', async () => {
    const { db } = harness().container;
    const result = await db.transaction(async (tx) => {
      await tx.query("INSERT INTO settings (name, value) VALUES ('t-outer', '1')");
      expect(tx.inTransaction()).toBe(true);
      await expect(
        tx.transaction(async (inner) => {
          expect(inner.inTransaction()).toBe(true);
          await inner.query("INSERT INTO settings (name, value) VALUES ('t-inner', '1')");
          await inner.query("INSERT INTO settings (name, value) VALUES ('t-outer', 'dup')");
        }),
      ).rejects.toMatchObject({ code: '23505' });
      // The savepoint rolled back only the inner part; the transaction is still usable.
      await tx.transaction((inner) =>
        inner.query("INSERT INTO settings (name, value) VALUES ('t-kept', '1')"),
      );
      return tx.query("SELECT name FROM settings WHERE name LIKE 't-%' ORDER BY name");
    });
    expect(result).toEqual([{ name: 't-kept' }, { name: 't-outer' }]);
    expect(db.inTransaction()).toBe(false);
    expect(await db.query("SELECT name FROM settings WHERE name LIKE 't-%' ORDER BY name")).toEqual([
      { name: 't-kept' },
      { name: 't-outer' },
    ]);
  });

  it('rolls the whole transaction back when the work throws', async () => {
    const { db } = harness().container;
    await expect(
      db.transaction(async (tx) => {
        await tx.query("INSERT INTO settings (name, value) VALUES ('t-gone', '1')");
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await db.query("SELECT name FROM settings WHERE name = 't-gone'")).toEqual([]);
  });
});

describeEachDatabase('idempotency in the OpenAPI document', (harness) => {
  it('documents the Idempotency-Key header on POST routes', async () => {
    const reply = await harness().request('GET', '/v1/openapi.json');
    const operation = reply.json().paths['/v1/orders/'].post;
    expect(operation.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ in: 'header', name: 'idempotency-key' })]),
    );
  });
});
