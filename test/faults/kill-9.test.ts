import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaultFixture, type FaultFixture } from './support/fixture.js';
import { checkPaymentInvariants, pendingPastDeadline } from './support/payment-invariants.js';
import { PAYMENT_WORKLOAD } from './support/payment-workload.js';
import { freePort } from './support/postgres-instance.js';
import { Service } from './support/service.js';
import {
  httpClient,
  ORDER_WORKLOAD,
  paced,
  printCounts,
  verifyAll,
  type Workload,
} from './support/workload.js';

// Sends alternate: an order, then an order + S2S payment chain (some completed on the bank page).
const WORKLOADS: Workload[] = [ORDER_WORKLOAD, PAYMENT_WORKLOAD];
const KILLS = 10;
/**
 * Sends per second, alternating an order and a payment chain (2 to 7 requests, 4.25 on average):
 * (1 + 4.25) / 2 × 75 ≈ 200 HTTP requests a second.
 */
const RATE = 75;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The pending timeout of the service under test: short, so that the check can wait past it. */
const PENDING_TIMEOUT_SECONDS = 10;

describe('kill -9 of the service under load', () => {
  let fixture: FaultFixture;
  let service: Service | undefined;

  beforeAll(async () => {
    fixture = await createFaultFixture('Fault Merchant', {
      KOSH_DB_POOL_SIZE: '5',
      KOSH_PENDING_TIMEOUT_SECONDS: String(PENDING_TIMEOUT_SECONDS),
    });
  });

  afterAll(async () => {
    service?.kill9();
    fixture?.destroy();
  });

  it(`keeps every acknowledged order and payment through ${KILLS} kill -9 at ~200 req/s`, async () => {
    service = new Service(await freePort(), fixture.env, ['--workers', '2']);
    await service.start();
    const client = httpClient(() => service!.url, fixture.auth, 5_000);
    const load = paced(client, WORKLOADS, RATE);
    for (let kill = 0; kill < KILLS; kill++) {
      await sleep(700 + Math.random() * 800);
      service.kill9();
      await service.start();
    }
    await sleep(1_000);
    await load.stop();

    // Read everything back from a freshly started service.
    service.kill9();
    await service.start();
    const counts = await verifyAll(client, WORKLOADS, load.acknowledged);
    printCounts('kill -9', counts);
    const failed = load.outcomes.filter((outcome) => outcome.status !== 200).length;
    const byStatus: Record<string, number> = {};
    for (const outcome of load.outcomes) byStatus[outcome.status] = (byStatus[outcome.status] ?? 0) + 1;
    process.stdout.write(
      `[kill -9] sends ${load.outcomes.length}, not acknowledged ${failed}, by status ${JSON.stringify(byStatus)}\n`,
    );
    const { violations, statuses } = await checkPaymentInvariants(fixture.postgres.url);
    process.stdout.write(`[kill -9] payments by status ${JSON.stringify(statuses)}\n`);
    for (const [name, ids] of Object.entries(violations)) {
      process.stdout.write(`[kill -9] ${name}: ${ids.length}\n`);
    }
    for (const count of Object.values(counts)) {
      // A floor that proves the check ran under real load: each 0.7–1.5 s serving window between
      // kills acknowledges some 40–60 orders, less on a busy machine, so 25 per kill leaves room.
      expect(count.acknowledged).toBeGreaterThan(KILLS * 25);
      expect(count.lost).toEqual([]);
    }
    // Captures happened while the service was being killed, so the invariants were exercised.
    expect(statuses.captured ?? 0).toBeGreaterThan(KILLS * 2);
    for (const ids of Object.values(violations)) expect(ids).toEqual([]);

    // A customer's choice is never lost: a payment left pending by a kill (the choice committed,
    // the outcome not yet recorded) is settled by the restarted service's reconciler. Once every
    // payment pending at the end has passed its deadline, none may still be pending.
    await sleep((PENDING_TIMEOUT_SECONDS + 2) * 1000);
    const stuck = await pendingPastDeadline(fixture.postgres.url, PENDING_TIMEOUT_SECONDS);
    const settled = await checkPaymentInvariants(fixture.postgres.url);
    process.stdout.write(
      `[kill -9] after the reconciler: payments by status ${JSON.stringify(settled.statuses)}, pending past their deadline ${stuck.length}\n`,
    );
    expect(stuck).toEqual([]);
    for (const ids of Object.values(settled.violations)) expect(ids).toEqual([]);
  }, 180_000);

  it('replaces a cluster worker killed with -9 while the others keep serving', async () => {
    if (!service?.alive) {
      service = new Service(await freePort(), fixture.env, ['--workers', '2']);
      await service.start();
    }
    const client = httpClient(() => service!.url, fixture.auth, 5_000);
    const before = service.workerPids();
    expect(before).toHaveLength(2);
    process.kill(before[0]!, 'SIGKILL');
    let replaced: number[] = [];
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      replaced = service.workerPids();
      if (replaced.length === 2 && !replaced.includes(before[0]!)) break;
      await sleep(100);
    }
    expect(replaced).toHaveLength(2);
    expect(replaced).not.toContain(before[0]);
    expect(replaced).toContain(before[1]);
    expect(service.alive).toBe(true);
    const created = await client.request('POST', '/v1/orders/', { amount: 4242, currency: 'INR' });
    expect(created.status).toBe(200);
  }, 30_000);
});
