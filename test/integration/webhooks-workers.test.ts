import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Container, createContainer } from '../../src/container.js';
import type { Db } from '../../src/db/db.js';
import { openPostgres } from '../../src/db/postgres.js';
import { systemClock } from '../../src/domain/clock.js';
import { startJobs } from '../../src/jobs/runner.js';
import { createLogger } from '../../src/log.js';
import { createDeliveriesRepo } from '../../src/modules/webhooks/deliveries.repo.js';
import { createDeliveryWorker } from '../../src/modules/webhooks/delivery-worker.js';
import { createHttpSender, type Sender } from '../../src/modules/webhooks/http-sender.js';
import { webhookJobs } from '../../src/modules/webhooks/webhook-jobs.js';
import { createWebhooksRepo } from '../../src/modules/webhooks/webhooks.repo.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { samplePayload } from '../helpers/webhook-events.js';
import { TestReceiver, verifyWebhook } from '../helpers/webhook-receiver.js';

const EVENTS = 1_000;

/** Two workers, each with its own container and connection pool, on one PostgreSQL database. */
describe('two delivery workers on one PostgreSQL', () => {
  let harness: Harness;
  let receiver: TestReceiver;
  const workers: { container: Container; sent: number }[] = [];

  beforeAll(async () => {
    harness = await createHarness('postgres');
    receiver = await TestReceiver.start();
    const url = (harness.container.db as Db & { url: string }).url;
    for (let i = 0; i < 2; i++) {
      const db = openPostgres(url, {
        poolSize: 5,
        connectTimeoutMs: 5_000,
        transactionGuard: true,
        statementTimeoutMs: 30_000,
      });
      const container = await createContainer(harness.container.config, {
        db,
        clock: systemClock,
        log: createLogger('silent'),
        migrate: false,
      });
      workers.push({ container, sent: 0 });
    }
  });
  afterAll(async () => {
    for (const { container } of workers) await container.close();
    await receiver.close();
    await harness.close();
  });

  it('queues every event for the fan-out, whatever statement writes it, and the fan-out takes it once', async () => {
    const merchant = await harness.merchant();
    const { db } = harness.container;
    const ids = [`evt_queued_${Date.now()}_a`, `evt_queued_${Date.now()}_b`];
    // As the code before migration 0020 wrote events (a host not restarted yet): the trigger queues them.
    await db.query(
      `INSERT INTO events (id, account_id, mode, type, payload, created_at)
       VALUES ($1, $3, 'test', 'payment.captured', '{}', now()), ($2, $3, 'test', 'payment.captured', '{}', now())`,
      [...ids, merchant.id],
    );
    const queued = async () =>
      (
        await db.query<{ event_id: string }>(
          'SELECT event_id FROM event_fan_out WHERE event_id = ANY($1::text[]) ORDER BY event_id',
          [ids],
        )
      ).map((row) => row.event_id);
    expect(await queued()).toEqual([...ids].sort());
    while ((await harness.container.services.webhooks.fanOut(200)) > 0);
    expect(await queued()).toEqual([]);
  });

  it(`deliver ${EVENTS} events: none lost, none twice, every one verified`, async () => {
    const merchant = await harness.merchant();
    const created = await harness.request('POST', '/v1/webhooks/', {
      auth: merchant,
      json: { url: receiver.url() },
    });
    const secret = created.json().data.secret as string;
    const eventIds: string[] = [];
    for (let batch = 0; batch < EVENTS / 100; batch++) {
      await harness.container.db.transaction(async (tx) => {
        for (let i = 0; i < 100; i++) {
          const event = await harness.container.services.events.record(tx, {
            accountId: merchant.id,
            mode: 'test',
            type: 'payment.captured',
            data: samplePayload(batch * 100 + i),
          });
          eventIds.push(event.id);
        }
      });
    }

    const runners = workers.map((worker) => {
      const { container } = worker;
      const send: Sender = (request) => {
        worker.sent += 1;
        return createHttpSender(container.resolver, container.db)(request);
      };
      const delivery = createDeliveryWorker({
        db: container.db,
        deliveries: createDeliveriesRepo(),
        endpoints: createWebhooksRepo(),
        ids: container.ids,
        clock: container.clock,
        log: container.log,
        keyring: container.keyring,
        send,
        ...container.config.webhooks,
        batchSize: 10,
      });
      return startJobs(webhookJobs(container.services.webhooks, delivery, 20), container.log);
    });
    try {
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const [row] = await harness.container.db.query<{ pending: string }>(
          "SELECT count(*) AS pending FROM webhook_deliveries WHERE status <> 'succeeded'",
        );
        const [fanned] = await harness.container.db.query<{ waiting: string }>(
          'SELECT count(*) AS waiting FROM event_fan_out',
        );
        if (Number(row?.pending) === 0 && Number(fanned?.waiting) === 0 && receiver.received.length >= EVENTS)
          break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await Promise.all(runners.map((runner) => runner.stop()));
    }

    const ids = receiver.received.map((received) => String(received.headers['webhook-id']));
    expect(ids).toHaveLength(EVENTS);
    expect(new Set(ids).size).toBe(EVENTS);
    expect([...ids].sort()).toEqual([...eventIds].sort());
    for (const received of receiver.received) expect(() => verifyWebhook(secret, received)).not.toThrow();
    // Both workers took part, and together they sent each event exactly once.
    expect(workers.every((worker) => worker.sent > 0)).toBe(true);
    expect(workers.reduce((sum, worker) => sum + worker.sent, 0)).toBe(EVENTS);
    const [attempts] = await harness.container.db.query<{ count: string }>(
      'SELECT count(*) FROM webhook_attempts',
    );
    expect(Number(attempts?.count)).toBe(EVENTS);
  }, 90_000);
});
