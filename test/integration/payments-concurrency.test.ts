import { beforeAll, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { choose, createOrder, createPayment, eventsOf, openPage, returnFields } from '../helpers/payments.js';

describeEachDatabase('one captured payment per order', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant();
  });

  it('20 concurrent completions of two payments on one order end with exactly one captured', async () => {
    const orderId = await createOrder(harness(), merchant);
    const first = await createPayment(harness(), merchant, {}, orderId);
    const second = await createPayment(harness(), merchant, { bank: 'HDFC' }, orderId);
    const tokens = [await openPage(harness(), first.paymentId), await openPage(harness(), second.paymentId)];
    const ids = [first.paymentId, second.paymentId];

    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => choose(harness(), ids[i % 2]!, tokens[i % 2]!, 'success')),
    );
    for (const response of responses) expect(response.statusCode).toBe(200);

    const payments = (
      await harness().request('GET', `/v1/orders/${orderId}/payments/`, { auth: merchant })
    ).json().data as { id: string; status: string; error_code: string | null }[];
    expect(payments).toHaveLength(2);
    const captured = payments.filter((payment) => payment.status === 'captured');
    expect(captured).toHaveLength(1);
    const other = payments.find((payment) => payment.status !== 'captured')!;
    expect(other).toMatchObject({ status: 'failed', error_code: 'order_already_paid' });

    const order = (await harness().request('GET', `/v1/orders/${orderId}/`, { auth: merchant })).json().data;
    expect(order).toMatchObject({ status: 'paid', amount_paid: 5000, amount_pending: 0 });
    expect(order.bank_details.bank).toBe(captured[0]!.id === first.paymentId ? 'ICIC' : 'HDFC');

    const events = (await eventsOf(harness(), merchant.id)).filter(
      (event) => event.payload.order.id === orderId,
    );
    const count = (type: string) => events.filter((event) => event.type === type).length;
    expect(count('order.paid')).toBe(1);
    expect(count('payment.captured')).toBe(1);
    expect(count('payment.pending')).toBe(2);
    expect(count('payment.failed')).toBe(1);
    // The bank took the other payment's money too: its event says so, with the authorisation.
    const late = events.filter((event) => event.type === 'payment.late_authorisation');
    expect(late).toHaveLength(1);
    expect(late[0]!.payload.payment).toMatchObject({
      id: other.id,
      status: 'failed',
      error_code: 'order_already_paid',
      authorised_at: expect.any(Number),
    });
  });

  it('does not send the customer of a payment on to the bank once another payment paid its order', async () => {
    const orderId = await createOrder(harness(), merchant);
    const waiting = await createPayment(harness(), merchant, {}, orderId);
    const redirected = await createPayment(harness(), merchant, { bank: 'HDFC' }, orderId);
    const paying = await createPayment(harness(), merchant, {}, orderId);
    await choose(harness(), paying.paymentId, await openPage(harness(), paying.paymentId), 'success');

    for (const { paymentId } of [waiting, redirected]) {
      const page = await harness().request('GET', `/v1/payments/${paymentId}/authentication/`);
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toMatch(/name="token"|name="choice"/);
      expect(returnFields(page.body)).toMatchObject({ payment_id: paymentId, status: 'failed' });
      const payment = (
        await harness().request('GET', `/v1/payments/${paymentId}/`, { auth: merchant })
      ).json().data;
      // Stopped before the bank: nothing was taken, so nothing is owed back.
      expect(payment).toMatchObject({
        status: 'failed',
        error_code: 'order_already_paid',
        authorised_at: null,
      });
      expect(payment.error_reason).toContain('nothing was taken');
      expect(payment.amount_refunded).toBe(0);
    }
  });

  it('the database itself refuses a second captured payment on an order', async () => {
    const orderId = await createOrder(harness(), merchant);
    const first = await createPayment(harness(), merchant, {}, orderId);
    const second = await createPayment(harness(), merchant, {}, orderId);
    const capture = (id: string) =>
      harness().container.db.query(
        "UPDATE payments SET status = 'captured', captured_at = now() WHERE id = $1",
        [id],
      );
    await capture(first.paymentId);
    await expect(capture(second.paymentId)).rejects.toMatchObject({ code: '23505' });
  });

  it('takes a late authorisation on a failed payment only while the order is unpaid', async () => {
    const { container } = harness();
    const states = container.services.paymentStates;
    const row = async (id: string) =>
      (await container.db.query<never>('SELECT * FROM payments WHERE id = $1', [id]))[0]!;

    const orderId = await createOrder(harness(), merchant);
    const late = await createPayment(harness(), merchant, {}, orderId);
    await choose(harness(), late.paymentId, await openPage(harness(), late.paymentId), 'failure');
    const captured = await states.apply(late.paymentId, { outcome: 'captured' }, { asked: true });
    expect(captured?.status).toBe('captured');
    const order = (await harness().request('GET', `/v1/orders/${orderId}/`, { auth: merchant })).json().data;
    expect(order).toMatchObject({ status: 'paid', amount_paid: 5000 });

    // A second failed payment on the now paid order stays failed; the authorisation is recorded on
    // it (the money goes back), once, and in its own event.
    const orderTwo = await createOrder(harness(), merchant);
    const loser = await createPayment(harness(), merchant, {}, orderTwo);
    const winner = await createPayment(harness(), merchant, {}, orderTwo);
    await choose(harness(), loser.paymentId, await openPage(harness(), loser.paymentId), 'cancel');
    await choose(harness(), winner.paymentId, await openPage(harness(), winner.paymentId), 'success');
    const refused = await states.apply(loser.paymentId, { outcome: 'captured' }, { asked: true });
    expect(refused).toMatchObject({ status: 'failed', error_code: 'order_already_paid', refund_due: true });
    expect(refused?.authorised_at).toBeInstanceOf(Date);
    await states.apply(loser.paymentId, { outcome: 'captured' }, { asked: true });
    const lateEvents = await container.db.query(
      `SELECT id FROM events WHERE type = 'payment.late_authorisation' AND payload->'payment'->>'id' = $1`,
      [loser.paymentId],
    );
    expect(lateEvents).toHaveLength(1);
    expect(((await row(loser.paymentId)) as { status: string }).status).toBe('failed');
  });
});
