import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth } from '../helpers/harness.js';
import { FILES, multipart, proprietorBody } from '../helpers/onboarding.js';
import { idsOf } from './support/database.js';
import { createFaultFixture, type FaultFixture } from './support/fixture.js';
import { checkPaymentInvariants, openPastDeadline } from './support/payment-invariants.js';
import { chooseSuccess, PAYMENT_WORKLOAD, paymentBody, REFUND_WORKLOAD } from './support/payment-workload.js';
import { freePort } from './support/postgres-instance.js';
import { Service } from './support/service.js';
import { WebhookReceiver } from './support/webhook-receiver.js';
import {
  type Client,
  eventIdsOf,
  httpClient,
  ORDER_WORKLOAD,
  paced,
  printCounts,
  verifyAll,
  type Workload,
} from './support/workload.js';

/**
 * Two hosts behind a load balancer (docs/deployment.md): two `kosh serve` processes with their own
 * data folders and ports on one PostgreSQL, driven round-robin. Nothing may live on one host only.
 */
const PAYMENT_EVENTS = [
  'payment.pending',
  'payment.captured',
  'payment.failed',
  'order.paid',
  'refund.created',
  'refund.processed',
  'refund.failed',
];
/** Short deadlines so that the checks can wait past them: created payments expire, pending ones time out. */
const EXPIRY_SECONDS = 10;
const SETTLE_SECONDS = 2;
/** How soon a change made on one host must be seen on the other (the bound). */
const PROPAGATION_MS = 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A client that sends each request to the next host in turn, as a round-robin load balancer does. */
function roundRobin(hosts: () => Service[], auth: string): Client {
  let next = 0;
  return httpClient(
    () => {
      const live = hosts();
      return live[next++ % live.length]!.url;
    },
    auth,
    10_000,
  );
}

/** Every page of the key's payment, order and refund events. */
const eventIds = (client: Client, filter = '') => eventIdsOf(client, PAYMENT_EVENTS, filter);

/** The events among `ids` with a failed delivery attempt on record (a timeout, an error answer). */
async function eventsWithFailedAttempts(url: string, ids: string[]): Promise<Set<string>> {
  return new Set(
    await idsOf(
      url,
      `SELECT DISTINCT d.event_id AS id FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE NOT a.succeeded AND d.event_id = ANY($1::text[])`,
      [ids],
    ),
  );
}

async function waitUntil(check: () => Promise<boolean>, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(200);
  }
  return check();
}

describe('two hosts on one PostgreSQL', () => {
  let fixture: FaultFixture;
  const hosts: Service[] = [];
  const dataDirs: string[] = [];
  let receiver: WebhookReceiver;
  let client: Client;

  beforeAll(async () => {
    fixture = await createFaultFixture('Two Hosts Merchant', {
      KOSH_ALLOW_LOOPBACK_WEBHOOKS: 'true',
      KOSH_WEBHOOK_TIMEOUT_MS: '2000',
      KOSH_WEBHOOK_LEASE_MS: '5000',
      KOSH_WEBHOOK_POLL_INTERVAL_MS: '100',
      KOSH_WEBHOOK_BATCH_SIZE: '10',
      KOSH_PAYMENT_EXPIRY_SECONDS: String(EXPIRY_SECONDS),
      KOSH_PENDING_TIMEOUT_SECONDS: String(EXPIRY_SECONDS),
      KOSH_SANDBOX_SETTLE_SECONDS: String(SETTLE_SECONDS),
      KOSH_DB_POOL_SIZE: '5',
      // Caches that would stay stale for ten minutes: only the database's notifications can make a
      // change on one host visible on the other within a second.
      KOSH_KEY_CACHE_TTL_MS: '600000',
      KOSH_METHODS_CACHE_TTL_MS: '600000',
    });
    for (const name of ['a', 'b']) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `kosh-host-${name}-`));
      dataDirs.push(dataDir);
      hosts.push(
        new Service(await freePort(), { ...fixture.env, KOSH_DATA_DIR: dataDir }, ['--workers', '1']),
      );
    }
    await Promise.all(hosts.map((host) => host.start()));
    client = roundRobin(() => hosts.filter((host) => host.alive), fixture.auth);
    receiver = new WebhookReceiver(await freePort());
    await receiver.listen();
    receiver.state = 'up';
    const endpoint = await client.request('POST', '/v1/webhooks/', {
      url: receiver.url,
      enabled_events: PAYMENT_EVENTS,
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
    receiver.secret = endpoint.body.data.secret;
  }, 90_000);

  afterAll(async () => {
    await receiver?.close();
    for (const host of hosts) host.kill9();
    fixture?.destroy();
    for (const dataDir of dataDirs) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const [a, b] = [() => hosts[0]!, () => hosts[1]!];
  const call = (host: Service, method: string, url: string, auth: string, body?: unknown) =>
    fetch(`${host.url}${url}`, {
      method,
      headers: {
        authorization: auth,
        connection: 'close',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  /** Another test key of the check's merchant, issued with `kosh keys create`. */
  async function newTestKey(): Promise<{ api_key: string; secret_key: string }> {
    const { stdout } = await fixture.kosh([
      'keys',
      'create',
      '--account',
      fixture.accountId,
      '--mode',
      'test',
      '--json',
    ]);
    return JSON.parse(stdout);
  }

  /** A partner made with `kosh partner create`, and a merchant it onboarded through `host`. */
  async function partnerWithMerchant(name: string, host: Service): Promise<{ partner: string; mid: string }> {
    const { stdout } = await fixture.kosh(['partner', 'create', '--name', name, '--json']);
    const partner = basicAuth(JSON.parse(stdout));
    const onboarded = await call(host, 'POST', '/v1/api-portal/merchants/', partner, proprietorBody());
    expect(onboarded.status).toBe(200);
    return { partner, mid: ((await onboarded.json()) as { data: { id: string } }).data.id };
  }

  /** Polls `host` until `seen` holds; the milliseconds it took. */
  async function timeUntil(seen: () => Promise<boolean>): Promise<number> {
    const started = performance.now();
    while (!(await seen())) {
      if (performance.now() - started > 10_000) break;
      await sleep(20);
    }
    return performance.now() - started;
  }

  it('refuses on one host, within a second, a key revoked on the other', async () => {
    const second = await newTestKey();
    const secondAuth = basicAuth(second);
    // Both hosts have the key in their caches.
    for (const host of hosts) expect((await call(host, 'GET', '/v1/orders/', secondAuth)).status).toBe(200);
    const revoked = await call(a(), 'DELETE', `/v1/keys/${second.api_key}/`, fixture.auth);
    expect(revoked.status).toBe(200);
    const took = await timeUntil(
      async () => (await call(b(), 'GET', '/v1/orders/', secondAuth)).status === 401,
    );
    process.stdout.write(`[two hosts] key revoked on a, refused by b after ${took.toFixed(0)} ms\n`);
    expect(took).toBeLessThan(PROPAGATION_MS);
    expect((await call(a(), 'GET', '/v1/orders/', secondAuth)).status).toBe(401);
  });

  it('offers on one host, within a second, a methods change a partner made on the other', async () => {
    const { partner, mid } = await partnerWithMerchant('Two Hosts Partner', a());
    const issued = await call(b(), 'POST', `/v1/api-portal/merchants/${mid}/keys/`, partner, {
      mode: 'test',
    });
    expect(issued.status).toBe(200);
    const merchant = basicAuth(
      ((await issued.json()) as { data: { api_key: string; secret_key: string } }).data,
    );
    const upiIntent = async (host: Service) => {
      const response = await call(host, 'GET', '/v1/payments/methods/', merchant);
      expect(response.status).toBe(200);
      return ((await response.json()) as { upi: { intent: boolean } }).upi.intent;
    };
    expect(await upiIntent(a())).toBe(true);
    expect(await upiIntent(b())).toBe(true);
    const changed = await call(a(), 'PATCH', `/v1/api-portal/merchants/${mid}/methods/`, partner, {
      upi: { intent: false, collect: false },
    });
    expect(changed.status).toBe(200);
    const took = await timeUntil(async () => !(await upiIntent(b())));
    process.stdout.write(`[two hosts] methods changed on a, seen on b after ${took.toFixed(0)} ms\n`);
    expect(took).toBeLessThan(PROPAGATION_MS);
  });

  it('downloads through one host a KYC document uploaded through the other, and through neither a file', async () => {
    const { partner, mid } = await partnerWithMerchant('Documents Partner', b());
    const { payload, headers } = multipart([
      { name: 'document_type', value: 'pan' },
      { name: 'file', filename: 'pan.pdf', content: FILES.pdf, contentType: 'application/pdf' },
    ]);
    const uploaded = await fetch(`${a().url}/v1/api-portal/merchants/kyc-document/${mid}/`, {
      method: 'POST',
      headers: { ...headers, authorization: partner },
      body: payload,
    });
    expect(uploaded.status).toBe(200);
    const document = ((await uploaded.json()) as { data: { id: string } }).data;
    for (const host of [b(), a()]) {
      const downloaded = await call(
        host,
        'GET',
        `/v1/api-portal/merchants/${mid}/kyc-documents/${document.id}/file`,
        partner,
      );
      expect(downloaded.status, host.url).toBe(200);
      expect(Buffer.from(await downloaded.arrayBuffer())).toEqual(FILES.pdf);
    }
    // The bytes are in PostgreSQL: neither host's data folder holds a document.
    for (const dataDir of dataDirs) expect(fs.existsSync(path.join(dataDir, 'documents'))).toBe(false);
  });

  it('keeps a dashboard session made on one host working on the other', async () => {
    const account = fixture.accountId;
    const password = 'two hosts, one session';
    await fixture.kosh([
      'users',
      'create',
      '--account',
      account,
      '--email',
      'ops@two-hosts.example',
      '--password',
      password,
    ]);
    const loginPage = await fetch(`${a().url}/dashboard/login/`, { redirect: 'manual' });
    const loginCookie = /kosh_login_csrf=[^;]+/.exec(loginPage.headers.get('set-cookie') ?? '')?.[0] ?? '';
    const csrf = /name="csrf" value="([^"]+)"/.exec(await loginPage.text())?.[1] ?? '';
    const login = await fetch(`${a().url}/dashboard/login/`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: loginCookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, email: 'ops@two-hosts.example', password }).toString(),
    });
    expect(login.status).toBe(303);
    const session = /kosh_session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')?.[0];
    expect(session).toBeDefined();
    for (const host of [b(), a()]) {
      const home = await fetch(`${host.url}/dashboard/`, {
        redirect: 'manual',
        headers: { cookie: session! },
      });
      expect(home.status, host.url).toBe(200);
      expect(await home.text()).toContain('Two Hosts Merchant');
    }
  });

  it('delivers each webhook once and settles each payment once with both hosts working', async () => {
    const before = new Set(await eventIds(client));
    // Ten charges completed on the bank page, ten left pending for the reconcilers to settle
    // (the sandbox answers a pending_success payment after KOSH_SANDBOX_SETTLE_SECONDS).
    const payments = await Promise.all(
      Array.from({ length: 20 }, async (_, index) => {
        const order = await client.request('POST', '/v1/orders/', { amount: 3000 + index, currency: 'INR' });
        expect(order.status).toBe(200);
        const created = await client.request(
          'POST',
          '/v1/payments/create/s2s/',
          paymentBody(order.body.data.id, 3000 + index, index % 2 === 1),
        );
        expect(created.status).toBe(200);
        const id: string = created.body.payment_id;
        if (index < 10) expect(await chooseSuccess(client, id)).toBe('captured');
        else {
          const page = await client.request('GET', `/v1/payments/${id}/authentication/`);
          const token = /name="token" value="([^"]+)"/.exec(String(page.body))?.[1];
          const chosen = await client.request(
            'POST',
            `/v1/payments/${id}/authentication/`,
            { token, choice: 'pending_success' },
            'form',
          );
          expect(chosen.status).toBe(200);
        }
        return id;
      }),
    );
    let statuses: string[] = [];
    await waitUntil(async () => {
      statuses = await Promise.all(
        payments.map(async (id) => (await client.request('GET', `/v1/payments/${id}/`)).body?.data?.status),
      );
      return statuses.every((status) => status === 'captured');
    }, 30_000);
    expect(statuses).toEqual(payments.map(() => 'captured'));
    // Three events per charge: payment.pending, payment.captured and order.paid.
    let recorded: string[] = [];
    await waitUntil(async () => {
      recorded = (await eventIds(client)).filter((id) => !before.has(id));
      return recorded.length >= payments.length * 3 && recorded.every((id) => receiver.delivered.has(id));
    }, 30_000);
    expect(recorded).toHaveLength(payments.length * 3);
    expect(recorded.filter((id) => !receiver.delivered.has(id))).toEqual([]);
    // Both hosts' delivery workers and reconcilers ran over the same rows: none twice.
    expect(recorded.filter((id) => receiver.deliveries(id) !== 1)).toEqual([]);
    const { violations } = await checkPaymentInvariants(fixture.postgres.url);
    for (const ids of Object.values(violations)) expect(ids).toEqual([]);
  }, 90_000);

  it('loses nothing acknowledged when one host is killed with -9 under load, and the survivor finishes every open payment', async () => {
    const workloads: Workload[] = [ORDER_WORKLOAD, PAYMENT_WORKLOAD, REFUND_WORKLOAD];
    const before = new Set(await eventIds(client));
    const load = paced(client, workloads, 40);
    await sleep(4_000);
    a().kill9();
    // The load balancer notices at once (the client sends only to live hosts from here on).
    await sleep(4_000);
    await load.stop();

    const counts = await verifyAll(client, workloads, load.acknowledged);
    printCounts('two hosts, kill -9', counts);
    for (const count of Object.values(counts)) {
      expect(count.acknowledged).toBeGreaterThan(30);
      expect(count.lost).toEqual([]);
    }
    // Refunds were acknowledged on both sides of the kill, not only orders and payments.
    expect(load.acknowledged.filter((ack) => ack.id.startsWith('rfnd_')).length).toBeGreaterThan(10);

    // The survivor's reconciler and delivery worker take over what the dead host had leased.
    await sleep((EXPIRY_SECONDS + 3) * 1000);
    const open = await waitUntil(
      async () => (await openPastDeadline(fixture.postgres.url, EXPIRY_SECONDS)).length === 0,
      15_000,
    );
    expect(await openPastDeadline(fixture.postgres.url, EXPIRY_SECONDS)).toEqual([]);
    expect(open).toBe(true);
    const { violations, statuses } = await checkPaymentInvariants(fixture.postgres.url);
    process.stdout.write(`[two hosts, kill -9] payments by status ${JSON.stringify(statuses)}\n`);
    for (const ids of Object.values(violations)) expect(ids).toEqual([]);

    let recorded: string[] = [];
    await waitUntil(async () => {
      recorded = (await eventIds(client)).filter((id) => !before.has(id));
      return recorded.every((id) => receiver.delivered.has(id));
    }, 30_000);
    const twice = recorded.filter((id) => receiver.deliveries(id) > 1);
    // A delivery the receiver took but answered after the sender's timeout (a loaded machine) is
    // recorded as a failed attempt and sent again by design; those are told apart from the kill's.
    const failedBefore = await eventsWithFailedAttempts(fixture.postgres.url, twice);
    const resentByTheKill = twice.filter((id) => !failedBefore.has(id));
    process.stdout.write(
      `[two hosts, kill -9] events ${recorded.length}, delivered ${recorded.filter((id) => receiver.delivered.has(id)).length}, delivered more than once ${twice.length} (${twice.length - resentByTheKill.length} after a recorded failed attempt)\n`,
    );
    expect(recorded.length).toBeGreaterThan(40);
    expect(recorded.filter((id) => !receiver.delivered.has(id))).toEqual([]);
    // At least once (Standard Webhooks): besides a recorded failed attempt, only a delivery in flight
    // on the killed host may be sent again, at most one batch of its delivery worker.
    expect(resentByTheKill.length).toBeLessThanOrEqual(Number(fixture.env.KOSH_WEBHOOK_BATCH_SIZE ?? 10));
  }, 120_000);

  it('holds a key to its documented limit over both hosts together (within 10 %, never above)', async () => {
    // The same two hosts restarted with the documented limits kept: 100 a second, bursts of 200.
    await Promise.all(hosts.map((host) => host.stop()));
    const limited = { KOSH_RATE_LIMIT_TEST_PER_SECOND: '100', KOSH_RATE_LIMIT_TEST_BURST: '200' };
    for (const [index, host] of hosts.entries()) {
      hosts[index] = new Service(host.port, { ...host.env, ...limited }, host.extraArgs, true);
    }
    await Promise.all(hosts.map((host) => host.start()));
    const auth = basicAuth(await newTestKey());
    let sent = 0;
    let allowed = 0;
    let refused = 0;
    let first = 0;
    let last = 0;
    // 6 s: to exhaust the bucket the loops must send more than 200 + 100 × 6 requests in that time
    // (133 a second), a third of what a loaded 2-core machine manages; over 2 s it took 200 a second.
    const until = performance.now() + 6_000;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (performance.now() < until) {
          const host = hosts[sent++ % hosts.length]!;
          const at = performance.now();
          const response = await call(host, 'GET', '/v1/orders/?limit=1', auth);
          await response.arrayBuffer();
          first ||= at;
          last = Math.max(last, at);
          if (response.status === 200) allowed++;
          else if (response.status === 429) refused++;
          else throw new Error(`unexpected ${response.status}`);
        }
      }),
    );
    // What the documented bucket lets through between the first request and the last one sent.
    const documented = 200 + 100 * ((last - first) / 1000);
    process.stdout.write(
      `[two hosts] one key, both hosts, ${((last - first) / 1000).toFixed(2)} s: ${allowed} allowed, ${refused} refused; the documented limit ${documented.toFixed(0)}\n`,
    );
    expect(refused).toBeGreaterThan(0);
    expect(allowed).toBeLessThanOrEqual(Math.ceil(documented) + 1);
    expect(allowed).toBeGreaterThanOrEqual(Math.floor(documented * 0.9));
  }, 60_000);
});
