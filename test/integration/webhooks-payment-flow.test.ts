import { afterAll, expect, it } from 'vitest';
import { unixSeconds } from '../../src/domain/clock.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { choose, createPayment, openPage } from '../helpers/payments.js';
import { drain } from '../helpers/webhook-events.js';
import { type ReceivedWebhook, TestReceiver, verifyWebhook } from '../helpers/webhook-receiver.js';

type Json = Record<string, unknown>;

interface WebhookBody {
  id: string;
  type: string;
  mode: string;
  created_at: number;
  data: { payment: Json; order: Json };
}

/**
 * The acceptance test of issue 4: a recording receiver sees exactly the events a full sandbox payment
 * produces, each verified by the official `standardwebhooks` package and shaped as docs/webhooks.md
 * documents: { id, type, mode, created_at, data: { payment, order } }, the objects as
 * GET /v1/payments/<id>/ and GET /v1/orders/<id>/ show them.
 */
describeEachDatabase('webhooks of a full sandbox payment', (harness) => {
  const receivers: TestReceiver[] = [];
  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  async function merchantWithEndpoint() {
    const account = await harness().merchant('Flow Shop');
    const receiver = await TestReceiver.start(() => harness().clock.now());
    receivers.push(receiver);
    const response = await harness().request('POST', '/v1/webhooks/', {
      auth: account,
      json: { url: receiver.url('/kosh/webhooks') },
    });
    expect(response.statusCode, response.body).toBe(200);
    const endpoint = response.json().data as { id: string; secret: string; enabled_events: string[] };
    expect(endpoint.enabled_events).toEqual(['*']);
    return { account, receiver, secret: endpoint.secret };
  }

  async function fetchData(account: TestAccount, path: string): Promise<Json> {
    const response = await harness().request('GET', path, { auth: account });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data;
  }

  /** Verifies every delivery and checks its headers and the documented shape; returns the bodies. */
  function verifiedBodies(receiver: TestReceiver, secret: string): WebhookBody[] {
    return receiver.received.map((received: ReceivedWebhook) => {
      const verified = verifyWebhook(secret, received) as WebhookBody;
      expect(JSON.parse(received.body)).toStrictEqual(verified);
      expect(Object.keys(verified)).toEqual(['id', 'type', 'mode', 'created_at', 'data']);
      expect(Object.keys(verified.data).sort()).toEqual(['order', 'payment']);
      expect(verified.id).toMatch(/^evt_[0-9a-z]{26}$/);
      expect(received.headers['webhook-id']).toBe(verified.id);
      expect(received.headers['content-type']).toBe('application/json');
      expect(received.status).toBe(200);
      return verified;
    });
  }

  /** GET /v1/events/<id>/ returns the same object the webhook carried. */
  async function expectEventsApiAgrees(account: TestAccount, bodies: WebhookBody[]) {
    for (const body of bodies) {
      expect(await fetchData(account, `/v1/events/${body.id}/`)).toStrictEqual(body);
    }
  }

  /** Walks GET /v1/events/ one event per page, so keyset pagination on id is exercised too. */
  async function listedTypes(account: TestAccount): Promise<string[]> {
    const types: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=1&cursor=${cursor}` : '?limit=1';
      const response = await harness().request('GET', `/v1/events/${query}`, { auth: account });
      expect(response.statusCode, response.body).toBe(200);
      const page = response.json() as { data: WebhookBody[]; has_more: boolean; next_cursor: string | null };
      types.push(...page.data.map((event) => event.type));
      cursor = page.has_more ? page.next_cursor : null;
    } while (cursor);
    return types;
  }

  it('Success: payment.pending, payment.captured and order.paid, once each, in write order, as documented', async () => {
    const { account, receiver, secret } = await merchantWithEndpoint();
    const { paymentId, orderId, body } = await createPayment(harness(), account);
    expect(body.next[0]!.action).toBe('html_form');
    const createdPayment = await fetchData(account, `/v1/payments/${paymentId}/`);
    const attemptedOrder = await fetchData(account, `/v1/orders/${orderId}/`);
    expect(createdPayment.status).toBe('created');
    expect(attemptedOrder.status).toBe('attempted');

    // The customer takes a moment at the bank, so the change time differs from the creation time.
    harness().clock.advance(7_000);
    const actedAt = unixSeconds(harness().clock.now());
    const token = await openPage(harness(), paymentId);
    const answer = await choose(harness(), paymentId, token, 'success');
    expect(answer.statusCode).toBe(200);

    // The three events share one (test) millisecond: ids still sort in the order they were written,
    // so the newest-first list shows them exactly reversed.
    const written = ['payment.pending', 'payment.captured', 'order.paid'];
    expect(await listedTypes(account)).toEqual([...written].reverse());

    // Fan-out makes the deliveries in event order and the worker claims them in that order; sent one
    // at a time, they arrive in it.
    expect(await harness().container.services.webhooks.fanOut(500)).toBeGreaterThanOrEqual(3);
    const worker = harness().container.webhookDelivery;
    const { token: lease, claimed } = await worker.claim(50);
    expect(claimed.map((delivery) => delivery.event_type)).toEqual(written);
    for (const delivery of claimed) await worker.deliver(delivery, lease);
    await drain(harness());

    const bodies = verifiedBodies(receiver, secret);
    expect(bodies.map((webhook) => webhook.type)).toEqual(written);
    expect(new Set(bodies.map((webhook) => webhook.id)).size).toBe(3);

    const payment = await fetchData(account, `/v1/payments/${paymentId}/`);
    const order = await fetchData(account, `/v1/orders/${orderId}/`);
    expect(payment).toMatchObject({ status: 'captured', captured_at: actedAt, error_code: null });
    expect(order).toMatchObject({ status: 'paid', amount: 5000, amount_paid: 5000, amount_pending: 0 });

    const [pending, captured, paid] = bodies;
    const envelope = { mode: 'test', created_at: actedAt };
    expect(pending).toStrictEqual({
      id: pending!.id,
      type: 'payment.pending',
      ...envelope,
      data: {
        payment: { ...createdPayment, status: 'pending', updated_at: actedAt },
        order: attemptedOrder,
      },
    });
    expect(captured).toStrictEqual({
      id: captured!.id,
      type: 'payment.captured',
      ...envelope,
      data: { payment, order },
    });
    expect(paid).toStrictEqual({ id: paid!.id, type: 'order.paid', ...envelope, data: { payment, order } });
    expect(pending!.id < captured!.id && captured!.id < paid!.id).toBe(true);
    await expectEventsApiAgrees(account, bodies);

    // Nothing more arrives later, however long the workers run.
    harness().clock.advance(86_400_000);
    await drain(harness());
    expect(receiver.received).toHaveLength(3);
  });

  it('Failure: payment.pending and payment.failed, no order.paid, as documented', async () => {
    const { account, receiver, secret } = await merchantWithEndpoint();
    const { paymentId, orderId } = await createPayment(harness(), account, {
      method: 'wallet',
      bank: undefined,
      wallet: 'PAYZAPP',
    });
    const createdPayment = await fetchData(account, `/v1/payments/${paymentId}/`);
    const attemptedOrder = await fetchData(account, `/v1/orders/${orderId}/`);

    harness().clock.advance(3_000);
    const actedAt = unixSeconds(harness().clock.now());
    const token = await openPage(harness(), paymentId);
    expect((await choose(harness(), paymentId, token, 'failure')).statusCode).toBe(200);
    await drain(harness());

    const bodies = verifiedBodies(receiver, secret);
    expect(bodies.map((webhook) => webhook.type).sort()).toEqual(['payment.failed', 'payment.pending']);
    const byType = Object.fromEntries(bodies.map((webhook) => [webhook.type, webhook]));

    const payment = await fetchData(account, `/v1/payments/${paymentId}/`);
    const order = await fetchData(account, `/v1/orders/${orderId}/`);
    expect(payment).toMatchObject({ status: 'failed', error_code: 'payment_declined', captured_at: null });
    expect(payment.error_reason).toEqual(expect.any(String));
    // A failed payment leaves its order attempted and unpaid.
    expect(order).toStrictEqual(attemptedOrder);
    expect(order).toMatchObject({ status: 'attempted', amount_paid: 0, amount_pending: 5000 });

    const envelope = { mode: 'test', created_at: actedAt };
    expect(byType['payment.pending']).toStrictEqual({
      id: byType['payment.pending']!.id,
      type: 'payment.pending',
      ...envelope,
      data: {
        payment: { ...createdPayment, status: 'pending', updated_at: actedAt },
        order: attemptedOrder,
      },
    });
    expect(byType['payment.failed']).toStrictEqual({
      id: byType['payment.failed']!.id,
      type: 'payment.failed',
      ...envelope,
      data: { payment, order },
    });
    expect(byType['payment.pending']!.id < byType['payment.failed']!.id).toBe(true);
    await expectEventsApiAgrees(account, bodies);
    expect(await listedTypes(account)).toEqual(['payment.failed', 'payment.pending']);
  });

  it('Expiry: a payment nobody completes sends one payment.failed with payment_expired', async () => {
    const { account, receiver, secret } = await merchantWithEndpoint();
    const { paymentId, orderId } = await createPayment(harness(), account, { bank: 'HDFC' });
    const attemptedOrder = await fetchData(account, `/v1/orders/${orderId}/`);

    const expirySeconds = harness().container.config.payments.expirySeconds;
    harness().clock.advance((expirySeconds + 1) * 1000);
    const expiredAt = unixSeconds(harness().clock.now());
    expect(await harness().container.jobs.paymentExpiry.run(new AbortController().signal)).toBeGreaterThan(0);
    await drain(harness());

    const bodies = verifiedBodies(receiver, secret);
    expect(bodies.map((webhook) => webhook.type)).toEqual(['payment.failed']);

    const payment = await fetchData(account, `/v1/payments/${paymentId}/`);
    const order = await fetchData(account, `/v1/orders/${orderId}/`);
    expect(payment).toMatchObject({
      status: 'failed',
      error_code: 'payment_expired',
      updated_at: expiredAt,
      captured_at: null,
    });
    expect(order).toStrictEqual(attemptedOrder);
    expect(bodies[0]).toStrictEqual({
      id: bodies[0]!.id,
      type: 'payment.failed',
      mode: 'test',
      created_at: expiredAt,
      data: { payment, order },
    });
    await expectEventsApiAgrees(account, bodies);
  });
});
