import { beforeAll, expect, it } from 'vitest';
import { createPaymentExpiryJob } from '../../src/modules/payments/payments.expiry.js';
import { createPaymentsRepo } from '../../src/modules/payments/payments.repo.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { choose, createPayment, eventsOf, openPage } from '../helpers/payments.js';

describeEachDatabase('payment expiry', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant();
  });

  const fetch = async (id: string) =>
    (await harness().request('GET', `/v1/payments/${id}/`, { auth: merchant })).json().data;

  it('fails untouched created payments after the expiry time, and only those', async () => {
    const job = harness().container.jobs.paymentExpiry;
    const expirySeconds = harness().container.config.payments.expirySeconds;
    expect(expirySeconds).toBe(900);
    await job.run(new AbortController().signal); // clear anything older from other tests

    const untouched = await createPayment(harness(), merchant);
    const captured = await createPayment(harness(), merchant);
    await choose(harness(), captured.paymentId, await openPage(harness(), captured.paymentId), 'success');
    const stillPending = await createPayment(harness(), merchant);
    await harness().container.db.query(
      "UPDATE payments SET status = 'pending', pending_at = now() WHERE id = $1",
      [stillPending.paymentId],
    );

    harness().clock.advance((expirySeconds - 1) * 1000);
    const young = await createPayment(harness(), merchant);
    expect(await job.run(new AbortController().signal)).toBe(0);
    expect((await fetch(untouched.paymentId)).status).toBe('created');

    harness().clock.advance(2000);
    expect(await job.run(new AbortController().signal)).toBe(1);
    expect(await fetch(untouched.paymentId)).toMatchObject({
      status: 'failed',
      error_code: 'payment_expired',
      error_reason: expect.stringContaining('900 seconds'),
    });
    expect((await fetch(captured.paymentId)).status).toBe('captured');
    expect((await fetch(stillPending.paymentId)).status).toBe('pending');
    expect((await fetch(young.paymentId)).status).toBe('created');
    expect(await job.run(new AbortController().signal)).toBe(0);

    const order = (
      await harness().request('GET', `/v1/orders/${untouched.orderId}/`, { auth: merchant })
    ).json().data;
    expect(order).toMatchObject({ status: 'attempted', amount_paid: 0 });
    const expiredEvents = (await eventsOf(harness(), merchant.id)).filter(
      (event) => event.payload.payment.id === untouched.paymentId,
    );
    expect(expiredEvents.map((event) => event.type)).toEqual(['payment.failed']);
    expect(expiredEvents[0]!.payload.payment.error_code).toBe('payment_expired');

    // An expired payment's page sends the browser back with status failed; its token no longer works.
    const page = await harness().request('GET', `/v1/payments/${untouched.paymentId}/authentication/`);
    expect(page.body).toContain('name="status" value="failed"');
  });

  it('refuses a choice on a page opened before the expiry time and used after it', async () => {
    const { paymentId } = await createPayment(harness(), merchant);
    const token = await openPage(harness(), paymentId);
    harness().clock.advance(901_000);
    const late = await choose(harness(), paymentId, token, 'success');
    expect(late.statusCode).toBe(200);
    expect(late.body).toContain('name="status" value="failed"');
    expect(await fetch(paymentId)).toMatchObject({ status: 'failed', error_code: 'payment_expired' });
    const types = (await eventsOf(harness(), merchant.id))
      .filter((event) => event.payload.payment.id === paymentId)
      .map((event) => event.type);
    expect(types).toEqual(['payment.failed']);
  });

  it('expires in batches and two sweepers at once never expire a payment twice', async () => {
    const { container, clock } = harness();
    const signal = new AbortController().signal;
    clock.advance(901_000);
    await container.jobs.paymentExpiry.run(signal);
    const job = createPaymentExpiryJob({
      db: container.db,
      repo: createPaymentsRepo(),
      states: container.services.paymentStates,
      clock,
      expirySeconds: 900,
      batchSize: 2,
    });
    const account = await harness().merchant();
    for (let i = 0; i < 5; i++) await createPayment(harness(), account);
    clock.advance(901_000);
    const first = await Promise.all([job.run(signal), job.run(signal)]);
    expect(first.every((count) => count <= 2)).toBe(true);
    let total = first[0]! + first[1]!;
    for (let round = 0; round < 5 && total < 5; round++) total += await job.run(signal);
    expect(total).toBe(5);
    expect(await job.run(signal)).toBe(0);
    const events = await eventsOf(harness(), account.id);
    expect(events.filter((event) => event.type === 'payment.failed')).toHaveLength(5);
  });

  it('is registered as a background job', async () => {
    const { backgroundJobs } = await import('../../src/jobs/jobs.js');
    expect(backgroundJobs(harness().container).map((job) => job.name)).toContain('payment-expiry');
  });
});
