import { beforeAll, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { createOrder, createPayment } from '../helpers/payments.js';

describeEachDatabase('fetching payments', (harness) => {
  let merchant: TestAccount;
  beforeAll(async () => {
    merchant = await harness().merchant();
  });

  it('GET /v1/payments/<id>/ answers every field in { data, message }', async () => {
    const { paymentId, orderId } = await createPayment(harness(), merchant, { metadata: { cart: 'c-1' } });
    const response = await harness().request('GET', `/v1/payments/${paymentId}`, { auth: merchant });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(['data', 'message']);
    expect(body.data).toEqual({
      id: paymentId,
      entity: 'payment',
      order_id: orderId,
      amount: 5000,
      currency: 'INR',
      status: 'created',
      method: 'netbanking',
      bank: 'ICIC',
      wallet: null,
      upi: null,
      email: 'asha@example.com',
      contact: '+919876543210',
      name: 'Asha Rao',
      description: 'Two notebooks',
      metadata: { cart: 'c-1' },
      error_code: null,
      error_reason: null,
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
      captured_at: null,
      authorised_at: null,
      bank_reference: null,
      fee: null,
      tax: null,
      amount_refunded: 0,
      refund_status: null,
      checkout_session_id: null,
    });
    expect(body.data.created_at).toBe(Math.floor(harness().clock.now().getTime() / 1000));
  });

  it("answers 404 for another account's payment, a live payment asked with a test key, and a missing one", async () => {
    const other = await harness().merchant();
    const { paymentId, orderId } = await createPayment(harness(), other);
    for (const path of [
      `/v1/payments/${paymentId}/`,
      `/v1/orders/${orderId}/payments/`,
      '/v1/payments/pay_x/',
    ]) {
      const response = await harness().request('GET', path, { auth: merchant });
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('resource_not_found');
    }
    const live = await harness().liveKey(other);
    expect((await harness().request('GET', `/v1/payments/${paymentId}/`, { auth: live })).statusCode).toBe(
      404,
    );
    const list = await harness().request('GET', '/v1/payments/', { auth: merchant });
    expect(list.json().data.map((p: { id: string }) => p.id)).not.toContain(paymentId);
  });

  it('lists payments newest first with cursor pagination, per account and per order', async () => {
    const account = await harness().merchant();
    const orderId = await createOrder(harness(), account);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      harness().clock.advance(1);
      ids.push((await createPayment(harness(), account, {}, orderId)).paymentId);
    }
    harness().clock.advance(1);
    const elsewhere = (await createPayment(harness(), account)).paymentId;

    const first = (await harness().request('GET', '/v1/payments/?limit=2', { auth: account })).json();
    expect(first.data.map((p: { id: string }) => p.id)).toEqual([elsewhere, ids[2]]);
    expect(first.has_more).toBe(true);
    const second = (
      await harness().request('GET', `/v1/payments/?limit=2&cursor=${first.next_cursor}`, { auth: account })
    ).json();
    expect(second.data.map((p: { id: string }) => p.id)).toEqual([ids[1], ids[0]]);
    expect(second).toMatchObject({ has_more: false, next_cursor: null });

    const ofOrder = (
      await harness().request('GET', `/v1/orders/${orderId}/payments/`, { auth: account })
    ).json();
    expect(ofOrder.data.map((p: { id: string }) => p.id)).toEqual([...ids].reverse());

    const bad = await harness().request('GET', '/v1/payments/?cursor=nope', { auth: account });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('invalid_cursor');
  });

  it('needs a merchant key', async () => {
    expect((await harness().request('GET', '/v1/payments/')).statusCode).toBe(401);
    const partner = await harness().partner();
    expect((await harness().request('GET', '/v1/payments/', { auth: partner })).statusCode).toBe(403);
  });

  it('is in the OpenAPI document', async () => {
    const spec = (await harness().request('GET', '/v1/openapi.json')).json();
    for (const path of [
      '/v1/payments/create/s2s/',
      '/v1/payments/{id}/',
      '/v1/payments/',
      '/v1/orders/{id}/payments/',
      '/v1/payments/{id}/authentication/',
      '/v1/payments/return-signing-secret/',
    ]) {
      expect(spec.paths[path], path).toBeDefined();
    }
  });
});
