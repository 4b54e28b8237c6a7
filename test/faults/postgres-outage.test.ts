import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { createFaultFixture, type FaultFixture } from './support/fixture.js';
import { freePort } from './support/postgres-instance.js';
import { Service } from './support/service.js';
import { httpClient, ORDER_WORKLOAD, paced, printCounts, verifyAll } from './support/workload.js';

const OUTAGE_MS = 10_000;
const DB_TIMEOUT_MS = 1_000;
/** A failed request must answer within the database timeout plus this much. */
const ANSWER_MARGIN_MS = 2_000;
const RECOVERY_LIMIT_MS = 5_000;
const FREEZE_MS = 8_000;
/**
 * A request to a hung database ends by the pool's connect timeout or the client's query timeout
 * (statement timeout + 1 s), so it is answered within about 2 s here; 4 s leaves room for a busy machine.
 */
const HANG_LIMIT_MS = 4_000;

/** The service's warnings and errors (pino level ≥ 40), so a failure here shows what the service saw. */
function printServiceErrors(service: Service | undefined): void {
  const lines = (service?.log ?? '').split('\n').filter((line) => !/"level":(10|20|30),/.test(line));
  process.stdout.write(
    `[postgres outage] service log, warnings and errors:\n${lines.slice(-60).join('\n')}\n`,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PostgreSQL stopped for 10 s under load', () => {
  let fixture: FaultFixture;
  let service: Service | undefined;

  beforeAll(async () => {
    fixture = await createFaultFixture('Outage Merchant', {
      KOSH_DB_POOL_SIZE: '5',
      KOSH_DB_CONNECT_TIMEOUT_MS: String(DB_TIMEOUT_MS),
      KOSH_DB_STATEMENT_TIMEOUT_MS: String(DB_TIMEOUT_MS),
    });
  });

  afterAll(async () => {
    await service?.stop();
    fixture?.destroy();
  });

  it('answers 503 JSON errors in bounded time, does not crash, and serves again without a restart', async () => {
    onTestFailed(() => printServiceErrors(service));
    service = new Service(await freePort(), fixture.env, ['--workers', '2']);
    await service.start();
    const primaryPid = service.child!.pid;
    const client = httpClient(() => service!.url, fixture.auth, 15_000);
    const load = paced(client, [ORDER_WORKLOAD], 50);
    await sleep(2_000);

    const ready = async () =>
      (await fetch(`${service!.url}/readyz`, { signal: AbortSignal.timeout(5_000) })).status;
    expect(await ready()).toBe(200);
    await fixture.postgres.stop('fast');
    const stoppedAt = Date.now();
    await sleep(OUTAGE_MS / 2);
    // A load balancer's readiness probe takes the host out while it cannot reach PostgreSQL.
    const readyDuringOutage = await ready();
    await sleep(OUTAGE_MS / 2);
    const restartingAt = Date.now();
    await fixture.postgres.start();
    const restartedAt = Date.now();

    // The first moment a new order is acknowledged again.
    let recoveredAt: number | undefined;
    while (Date.now() - restartedAt < 15_000) {
      const probe = await client.request('POST', '/v1/orders/', { amount: 777, currency: 'INR' });
      if (probe.status === 200) {
        recoveredAt = Date.now();
        break;
      }
      await sleep(100);
    }
    await sleep(2_000);
    await load.stop();

    // Requests sent once PostgreSQL was down and answered before it began to come back.
    const during = load.outcomes.filter((o) => o.at >= stoppedAt && o.at + o.ms < restartingAt);
    const statuses: Record<string, number> = {};
    for (const outcome of during) statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
    const slowest = Math.max(...during.map((o) => o.ms));
    const recoveryMs = recoveredAt === undefined ? Number.POSITIVE_INFINITY : recoveredAt - restartedAt;
    process.stdout.write(
      `[postgres outage] requests during the outage ${during.length} ${JSON.stringify(statuses)}, ` +
        `slowest answer ${Math.round(slowest)} ms, serving again ${recoveryMs} ms after PostgreSQL returned\n`,
    );

    expect(during.length).toBeGreaterThan((OUTAGE_MS / 1000) * 30);
    for (const outcome of during) {
      expect(outcome.status).toBe(503);
      expect(outcome.body).toMatchObject({ error: { type: 'api_error', code: 'service_unavailable' } });
      expect(outcome.ms).toBeLessThan(DB_TIMEOUT_MS + ANSWER_MARGIN_MS);
    }
    expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
    expect(readyDuringOutage).toBe(503);
    expect(await ready()).toBe(200);
    expect(service.alive).toBe(true);
    expect(service.child!.pid).toBe(primaryPid);
    expect(service.log).not.toContain('a worker died unexpectedly');

    const counts = await verifyAll(client, [ORDER_WORKLOAD], load.acknowledged);
    printCounts('postgres outage', counts);
    expect(counts.orders!.acknowledged).toBeGreaterThan(100);
    expect(counts.orders!.lost).toEqual([]);
  }, 90_000);

  it('answers within the configured timeouts when PostgreSQL hangs instead of refusing', async () => {
    onTestFailed(() => printServiceErrors(service));
    if (!service?.alive) {
      service = new Service(await freePort(), fixture.env, ['--workers', '2']);
      await service.start();
    }
    const client = httpClient(() => service!.url, fixture.auth, 15_000);
    const load = paced(client, [ORDER_WORKLOAD], 50);
    await sleep(1_000);
    const frozen = fixture.postgres.signalAll('SIGSTOP');
    const frozenAt = Date.now();
    await sleep(FREEZE_MS);
    const thawingAt = Date.now();
    fixture.postgres.signalAll('SIGCONT');

    let recoveredAt: number | undefined;
    while (Date.now() - thawingAt < 15_000) {
      const probe = await client.request('POST', '/v1/orders/', { amount: 778, currency: 'INR' });
      if (probe.status === 200) {
        recoveredAt = Date.now();
        break;
      }
      await sleep(100);
    }
    await sleep(1_000);
    await load.stop();

    // Requests sent while frozen early enough to be answered before the thaw: all must be 503s.
    const during = load.outcomes.filter((o) => o.at >= frozenAt && o.at < thawingAt - HANG_LIMIT_MS);
    const sentWhileFrozen = load.outcomes.filter((o) => o.at >= frozenAt && o.at < thawingAt);
    const slowest = Math.max(...sentWhileFrozen.map((o) => o.ms));
    const statuses: Record<string, number> = {};
    for (const outcome of sentWhileFrozen) statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
    const recoveryMs = recoveredAt === undefined ? Number.POSITIVE_INFINITY : recoveredAt - thawingAt;
    process.stdout.write(
      `[postgres frozen] ${frozen} processes stopped for ${FREEZE_MS} ms; requests sent meanwhile ` +
        `${sentWhileFrozen.length} ${JSON.stringify(statuses)}, slowest answer ${Math.round(slowest)} ms, ` +
        `serving again ${recoveryMs} ms after the thaw\n`,
    );
    expect(during.length).toBeGreaterThan(50);
    for (const outcome of during) {
      expect(outcome.status).toBe(503);
      expect(outcome.body).toMatchObject({ error: { code: 'service_unavailable' } });
    }
    for (const outcome of sentWhileFrozen) expect(outcome.ms).toBeLessThan(HANG_LIMIT_MS);
    expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
    expect(service.alive).toBe(true);

    const counts = await verifyAll(client, [ORDER_WORKLOAD], load.acknowledged);
    printCounts('postgres frozen', counts);
    expect(counts.orders!.lost).toEqual([]);
  }, 60_000);
});
