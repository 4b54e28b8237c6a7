import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaultFixture, type FaultFixture } from './support/fixture.js';
import { paymentBody } from './support/payment-workload.js';
import { freePort } from './support/postgres-instance.js';
import { Service } from './support/service.js';
import { httpClient } from './support/workload.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TOKEN = /name="token" value="([^"]+)"/;
const RETURNED_STATUS = /name="status" value="([^"]+)"/;

/**
 * The customer chooses Success while another session holds the order's row lock for longer than
 * the statement timeout: the choice and its outcome cannot commit together, so the choice is
 * committed alone with the move to pending, the page still sends the customer back (pending or,
 * if the lock went in time, captured) and the reconciler captures the payment once the lock is gone.
 */
describe('a statement timeout between the choice and its outcome', () => {
  let fixture: FaultFixture;
  let service: Service | undefined;

  beforeAll(async () => {
    fixture = await createFaultFixture('Timeout Merchant', { KOSH_DB_STATEMENT_TIMEOUT_MS: '1000' });
  });

  afterAll(async () => {
    await service?.stop();
    fixture?.destroy();
  });

  it('loses no choice: the payment ends captured and its order paid', async () => {
    service = new Service(await freePort(), fixture.env, ['--workers', '1']);
    await service.start();
    const client = httpClient(() => service!.url, fixture.auth, 15_000);
    const order = await client.request('POST', '/v1/orders/', { amount: 5000, currency: 'INR' });
    expect(order.status).toBe(200);
    const orderId: string = order.body.data.id;
    const created = await client.request(
      'POST',
      '/v1/payments/create/s2s/',
      paymentBody(orderId, 5000, false),
    );
    expect(created.status).toBe(200);
    const paymentId: string = created.body.payment_id;
    const page = await client.request('GET', `/v1/payments/${paymentId}/authentication/`);
    const token = TOKEN.exec(String(page.body))?.[1];
    expect(token).toBeDefined();

    // psql's part: hold the order's row lock for 2 s, twice the statement timeout.
    const holder = new pg.Client({ connectionString: fixture.postgres.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM orders WHERE id = $1 FOR UPDATE', [orderId]);
      const chosen = client.request(
        'POST',
        `/v1/payments/${paymentId}/authentication/`,
        { token, choice: 'success' },
        'form',
      );
      await sleep(2_000);
      await holder.query('COMMIT');
      const answer = await chosen;
      expect(answer.status).toBe(200);
      const returned = RETURNED_STATUS.exec(String(answer.body))?.[1];
      expect(['pending', 'captured']).toContain(returned);
      process.stdout.write(`[statement timeout] the page answered 200 with status ${returned}\n`);
    } finally {
      await holder.end();
    }

    let status = '';
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const payment = await client.request('GET', `/v1/payments/${paymentId}/`);
      status = payment.body.data.status;
      if (status === 'captured') break;
      await sleep(250);
    }
    expect(status).toBe('captured');
    const paid = await client.request('GET', `/v1/orders/${orderId}/`);
    expect(paid.body.data.status).toBe('paid');
  }, 60_000);
});
