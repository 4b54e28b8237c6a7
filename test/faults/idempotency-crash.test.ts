import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withClient } from './support/database.js';
import { createFaultFixture, type FaultFixture } from './support/fixture.js';
import { paymentBody } from './support/payment-workload.js';
import { freePort } from './support/postgres-instance.js';
import { koshCommand, Service } from './support/service.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const PDF = Buffer.concat([
  Buffer.from('%PDF-1.7\n1 0 obj\n<<>>\nendobj\n'),
  Buffer.alloc(64, 7),
  Buffer.from('\n%%EOF\n'),
]);
const LOCK_SECONDS = 2;

/**
 * `kill -9` of the service after a keyed request's work (the document stored, the payment recorded
 * and started) and before its answer is stored: a retry with the same Idempotency-Key, once the
 * dead attempt's lock has run out, resumes it. One document (its bytes stored once) and one
 * payment made, never two. The crash is placed exactly by a fault-suite crash point (KOSH_FAILPOINTS).
 */
describe('kill -9 between the outside call and the stored answer of a keyed request', () => {
  let fixture: FaultFixture;
  let service: Service | undefined;
  let partnerAuth: string;

  beforeAll(async () => {
    fixture = await createFaultFixture('Crash Merchant', {
      KOSH_IDEMPOTENCY_LOCK_SECONDS: String(LOCK_SECONDS),
      KOSH_ALLOW_LOOPBACK_WEBHOOKS: 'true',
      // A sandbox refund is processed as soon as the simulated bank is asked.
      KOSH_SANDBOX_REFUND_SECONDS: '0',
    });
    const { stdout } = await koshCommand(['partner', 'create', '--name', 'Crash Partner', '--json'], {
      ...fixture.env,
      KOSH_LOG_LEVEL: 'warn',
    });
    const partner = JSON.parse(stdout);
    partnerAuth = `Basic ${Buffer.from(`${partner.api_key}:${partner.secret_key}`).toString('base64')}`;
  });

  afterAll(async () => {
    service?.kill9();
    fixture?.destroy();
  });

  /** Starts the service; with `crash`, armed to die at that crash point (by default, right before a keyed answer is stored). */
  async function start(crash: boolean | string): Promise<Service> {
    const failpoint = crash === true ? 'idempotency-before-store' : crash;
    const env = { ...fixture.env, ...(failpoint ? { KOSH_FAILPOINTS: failpoint } : {}) };
    service = new Service(await freePort(), env, ['--workers', '1']);
    await service.start();
    return service;
  }

  async function send(url: string, init: RequestInit): Promise<{ status: number | 'died'; body?: unknown }> {
    try {
      const response = await fetch(url, init);
      return { status: response.status, body: await response.json() };
    } catch {
      return { status: 'died' };
    }
  }

  /** Retries as a client would, until the dead attempt's lock has run out and the request resumes. */
  async function retry(url: string, init: () => RequestInit) {
    const deadline = Date.now() + (LOCK_SECONDS + 10) * 1000;
    for (;;) {
      const answer = await send(url, init());
      if (answer.status !== 409 || Date.now() > deadline) return answer;
      await sleep(250);
    }
  }

  it('a KYC upload: resumed on retry, one document and its bytes stored once', async () => {
    let running = await start(false);
    const created = await send(`${running.url}/v1/api-portal/merchants/`, {
      method: 'POST',
      headers: { authorization: partnerAuth, 'content-type': 'application/json' },
      body: JSON.stringify({
        legal_name: 'Crash Stores',
        display_name: 'Crash Stores',
        email: 'owner@crash.example',
        contact: '+919876543210',
        business_type: 'proprietorship',
        business_category: 'ecommerce',
        business_subcategory: 'grocery',
        address: { line1: '1 MG Road', city: 'Bengaluru', state: 'KA', postal_code: '560001', country: 'IN' },
        pan: 'ABCPS1234D',
      }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const mid = (created.body as { data: { id: string } }).data.id;
    await running.stop();

    const upload = () => {
      const form = new FormData();
      form.append('document_type', 'pan');
      form.append('file', new Blob([PDF], { type: 'application/pdf' }), 'pan.pdf');
      return {
        method: 'POST',
        headers: { authorization: partnerAuth, 'idempotency-key': 'crash-upload-1' },
        body: form,
      } satisfies RequestInit;
    };
    running = await start(true);
    const first = await send(`${running.url}/v1/api-portal/merchants/kyc-document/${mid}/`, upload());
    expect(first.status).toBe('died');
    await sleep(200);
    expect(running.alive).toBe(false);
    // On PostgreSQL the bytes are stored in the database, with the document's row.
    const documents = path.join(String(fixture.env.KOSH_DATA_DIR), 'documents');
    const storedBytes = () =>
      withClient(fixture.postgres.url, async (client) => {
        const { rows } = await client.query<{ count: number }>(
          'SELECT count(*)::int AS count FROM kyc_document_contents',
        );
        return rows[0]!.count;
      });
    expect(await storedBytes()).toBe(1);
    expect(fs.existsSync(documents)).toBe(false);

    running = await start(false);
    const resumed = await retry(`${running.url}/v1/api-portal/merchants/kyc-document/${mid}/`, upload);
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    const again = await send(`${running.url}/v1/api-portal/merchants/kyc-document/${mid}/`, upload());
    expect(again.body).toEqual(resumed.body);
    const list = await send(`${running.url}/v1/api-portal/merchants/${mid}/kyc-documents/`, {
      headers: { authorization: partnerAuth },
    });
    expect((list.body as { data: unknown[] }).data).toHaveLength(1);
    expect(await storedBytes()).toBe(1);
    expect(fs.existsSync(documents)).toBe(false);
    await running.stop();
  }, 90_000);

  it('an S2S payment: resumed on retry, one payment, the same answer', async () => {
    let running = await start(false);
    const order = await send(`${running.url}/v1/orders/`, {
      method: 'POST',
      headers: { authorization: fixture.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 5000, currency: 'INR' }),
    });
    const orderId = (order.body as { data: { id: string } }).data.id;
    await running.stop();
    const pay = () => ({
      method: 'POST',
      headers: {
        authorization: fixture.auth,
        'content-type': 'application/json',
        'idempotency-key': 'crash-payment-1',
      },
      body: JSON.stringify(paymentBody(orderId, 5000, false)),
    });
    running = await start(true);
    expect((await send(`${running.url}/v1/payments/create/s2s/`, pay())).status).toBe('died');

    running = await start(false);
    const resumed = await retry(`${running.url}/v1/payments/create/s2s/`, pay);
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    const paymentId = (resumed.body as { payment_id: string }).payment_id;
    const payments = await send(`${running.url}/v1/orders/${orderId}/payments/`, {
      headers: { authorization: fixture.auth },
    });
    expect((payments.body as { data: { id: string }[] }).data.map((payment) => payment.id)).toEqual([
      paymentId,
    ]);
    const replay = await send(`${running.url}/v1/payments/create/s2s/`, pay());
    expect(replay.body).toEqual(resumed.body);
    await running.stop();
  }, 90_000);

  it('a refund recorded by a process killed before it reached the provider: processed once, sent once', async () => {
    let running = await start(false);
    const api = (path: string, init: RequestInit = {}) =>
      send(`${running.url}${path}`, {
        ...init,
        headers: { authorization: fixture.auth, 'content-type': 'application/json', ...init.headers },
      });
    const order = await api('/v1/orders/', {
      method: 'POST',
      body: JSON.stringify({ amount: 5000, currency: 'INR' }),
    });
    const orderId = (order.body as { data: { id: string } }).data.id;
    const payment = await api('/v1/payments/create/s2s/', {
      method: 'POST',
      body: JSON.stringify(paymentBody(orderId, 5000, false)),
    });
    const paymentId = (payment.body as { payment_id: string }).payment_id;
    const page = await (await fetch(`${running.url}/v1/payments/${paymentId}/authentication/`)).text();
    const token = /name="token" value="([^"]+)"/.exec(page)?.[1] ?? '';
    await fetch(`${running.url}/v1/payments/${paymentId}/authentication/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, choice: 'success' }).toString(),
    });
    expect((await api(`/v1/payments/${paymentId}/`)).body).toMatchObject({ data: { status: 'captured' } });
    await running.stop();

    const refund = () => ({
      method: 'POST',
      headers: { 'idempotency-key': 'crash-refund-1' },
      body: JSON.stringify({ amount: 1500 }),
    });
    running = await start('refund-before-submit');
    expect((await api(`/v1/payments/${paymentId}/refunds/`, refund())).status).toBe('died');
    await sleep(200);
    expect(running.alive).toBe(false);
    const sent = (log: string) =>
      log.split('\n').filter((line) => line.includes('"msg":"refund sent to connector"'));
    expect(sent(running.log)).toEqual([]);

    running = await start(false);
    const resumed = await retry(`${running.url}/v1/payments/${paymentId}/refunds/`, () => ({
      ...refund(),
      headers: { ...refund().headers, authorization: fixture.auth, 'content-type': 'application/json' },
    }));
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    const made = (resumed.body as { data: { id: string; status: string; amount: number } }).data;
    expect(made).toMatchObject({ status: 'processed', amount: 1500 });
    expect(sent(running.log)).toHaveLength(1);
    expect(sent(running.log)[0]).toContain(made.id);
    expect((await api(`/v1/payments/${paymentId}/refunds/`)).body).toMatchObject({ data: [{ id: made.id }] });
    expect((await api(`/v1/payments/${paymentId}/`)).body).toMatchObject({ data: { amount_refunded: 1500 } });
    expect((await api(`/v1/payments/${paymentId}/refunds/`, refund())).body).toEqual(resumed.body);
    const events = await withClient(fixture.postgres.url, (client) =>
      client.query<{ type: string }>(
        `SELECT type FROM events WHERE payload->'refund'->>'id' = $1 ORDER BY id`,
        [made.id],
      ),
    );
    expect(events.rows.map((row) => row.type)).toEqual(['refund.created', 'refund.processed']);
    await running.stop();
  }, 90_000);
});
