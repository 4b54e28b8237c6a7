import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/postgres.js';
import { createDeliveryWorker } from '../../src/modules/webhooks/delivery-worker.js';
import { createHttpSender } from '../../src/modules/webhooks/http-sender.js';
import { createRepos } from '../../src/repos.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { recordEvent } from '../helpers/webhook-events.js';
import { TestReceiver } from '../helpers/webhook-receiver.js';

/**
 * A webhook sent while the database cannot record its outcome (a restart, a failover, a lock held
 * past the statement timeout). PostgreSQL only: PGlite has one connection and no statement timeout.
 */
describe('webhook delivery while the database is unavailable [postgres]', () => {
  let harness: Harness;
  let receiver: TestReceiver;

  beforeAll(async () => {
    harness = await createHarness('postgres', {}, { realClock: true });
    receiver = await TestReceiver.start(() => new Date());
  });
  afterAll(async () => {
    await receiver?.close();
    await harness?.close();
  });

  it('records the attempt once the database answers again, so the receiver gets the event once', async () => {
    const url = (harness.container.db as { url?: string }).url!;
    // A worker whose statements give up after 300 ms, as a host's do after KOSH_DB_STATEMENT_TIMEOUT_MS.
    const db = openPostgres(url, {
      poolSize: 2,
      connectTimeoutMs: 2_000,
      statementTimeoutMs: 300,
      transactionGuard: true,
    });
    const { config, keyring, log, clock } = harness.container;
    const worker = createDeliveryWorker({
      db,
      deliveries: createRepos().deliveries,
      endpoints: createRepos().webhooks,
      ids: harness.container.ids,
      clock,
      send: createHttpSender(harness.container.resolver, db, { allowLoopback: true }),
      log,
      keyring,
      ...config.webhooks,
    });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const merchant = await harness.merchant('Outage');
      const created = await harness.request('POST', '/v1/webhooks/', {
        auth: merchant,
        json: { url: receiver.url() },
      });
      expect(created.statusCode).toBe(200);
      const event = await recordEvent(harness, merchant);
      await harness.container.services.webhooks.fanOut(500);

      // Recording the attempt waits on a lock held for 1.5 s: the first tries time out.
      await admin.query('BEGIN');
      await admin.query('LOCK TABLE webhook_attempts IN ACCESS EXCLUSIVE MODE');
      const released = new Promise((resolve) => setTimeout(resolve, 1_500)).then(() => admin.query('COMMIT'));
      expect(await worker.runOnce()).toBe(1);
      await released;

      expect(receiver.received.map((request) => request.headers['webhook-id'])).toEqual([event.id]);
      const listed = await harness.request('GET', `/v1/events/${event.id}/deliveries/`, { auth: merchant });
      const [delivery] = listed.json().data;
      expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 1 });
      expect(delivery.attempts).toHaveLength(1);
      expect(delivery.attempts[0]).toMatchObject({ status_code: 200, succeeded: true });
      // Nothing is left leased or due: no other worker sends it again.
      expect(await harness.container.webhookDelivery.runOnce()).toBe(0);
      expect(receiver.received).toHaveLength(1);
      expect(harness.logs()).toContain('the database is unavailable; trying again');
    } finally {
      await admin.end();
      await db.close();
    }
  });
});
