import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../../src/db/db.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { MAIN } from '../helpers/process.js';
import { recordEvent } from '../helpers/webhook-events.js';
import { TestReceiver } from '../helpers/webhook-receiver.js';

/**
 * `kill -9` of a real `kosh worker` process in the middle of a delivery: after the lease runs out a
 * new process delivers the event. Real processes and real time (a 5 s lease), on PostgreSQL.
 */
let harness: Harness;
let receiver: TestReceiver;
const children: ChildProcess[] = [];

function startWorker(databaseUrl: string): ChildProcess {
  const child = spawn(process.execPath, [MAIN, 'worker'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      // The worker decrypts the endpoints' signing secrets with the same key as the harness.
      KOSH_ENCRYPTION_KEY: harness.container.config.encryptionKey?.toString('base64'),
      KOSH_ALLOW_LOOPBACK_WEBHOOKS: 'true',
      KOSH_WEBHOOK_LEASE_MS: '5000',
      KOSH_WEBHOOK_TIMEOUT_MS: '2000',
      KOSH_WEBHOOK_POLL_INTERVAL_MS: '100',
      KOSH_LOG_LEVEL: 'warn',
    },
    stdio: 'ignore',
  });
  children.push(child);
  return child;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  harness = await createHarness('postgres');
  receiver = await TestReceiver.start();
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await receiver.close();
  await harness.close();
});

it('an event whose worker was killed mid-delivery is delivered by the next process', async () => {
  const url = (harness.container.db as Db & { url: string }).url;
  const merchant = await harness.merchant();
  await harness.request('POST', '/v1/webhooks/', { auth: merchant, json: { url: receiver.url() } });
  const event = await recordEvent(harness, merchant);

  receiver.hold = true;
  const first = startWorker(url);
  await until(() => receiver.received.length === 1, 30_000);
  first.kill('SIGKILL');
  await new Promise((resolve) => first.once('exit', resolve));

  receiver.hold = false;
  const killedAt = Date.now();
  startWorker(url);
  await until(() => receiver.received.length === 2, 30_000);
  // Not before the first worker's lease ran out: it might still have been delivering.
  expect(Date.now() - killedAt).toBeGreaterThanOrEqual(3_000);
  expect(receiver.received.map((received) => received.headers['webhook-id'])).toEqual([event.id, event.id]);
  await until(async () => {
    const rows = await harness.container.db.query<{ status: string }>(
      'SELECT status FROM webhook_deliveries WHERE event_id = $1',
      [event.id],
    );
    return rows[0]?.status === 'succeeded';
  }, 10_000);
}, 90_000);

it('two kosh worker processes on one PostgreSQL deliver 1,000 events: none lost, none twice', async () => {
  const url = (harness.container.db as Db & { url: string }).url;
  const merchant = await harness.merchant();
  await harness.request('POST', '/v1/webhooks/', { auth: merchant, json: { url: receiver.url() } });
  receiver.received.length = 0;
  const eventIds = new Set<string>();
  for (let i = 0; i < 1_000; i++) eventIds.add((await recordEvent(harness, merchant)).id);

  startWorker(url);
  startWorker(url);
  await until(
    () => new Set(receiver.received.map((r) => r.headers['webhook-id'])).size >= eventIds.size,
    120_000,
  );
  // Every delivery is recorded as succeeded, and every request the receiver got is an attempt the
  // workers recorded: nothing is in flight any more, so a duplicate would already be counted.
  await until(async () => {
    const [row] = await harness.container.db.query<{ open: string; attempts: string }>(
      `SELECT (SELECT count(*) FROM webhook_deliveries WHERE account_id = $1 AND status <> 'succeeded') AS open,
              (SELECT count(*) FROM webhook_attempts WHERE account_id = $1) AS attempts`,
      [merchant.id],
    );
    return Number(row?.open) === 0 && Number(row?.attempts) === receiver.received.length;
  }, 30_000);
  const delivered = receiver.received.map((received) => String(received.headers['webhook-id']));
  expect(new Set(delivered)).toEqual(eventIds);
  expect(delivered.length).toBe(eventIds.size);
}, 180_000);
