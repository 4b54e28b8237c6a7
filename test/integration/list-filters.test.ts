import { beforeAll, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { choose, createOrder, createPayment, openPage } from '../helpers/payments.js';

type Json = Record<string, unknown> & { id: string };

/**
 * The list filters: `GET /v1/payments/?status&method&order_id&bank&wallet&email&contact&from&to` and
 * `GET /v1/orders/?status&receipt&from&to` narrow the list and page through it like the plain one.
 */
const MISSING_ORDER = 'order_00000000000000000000000000';

describeEachDatabase('list filters', (harness) => {
  let merchant: TestAccount;
  let other: TestAccount;
  const ids: Record<string, string> = {};
  let start: number;

  beforeAll(async () => {
    const h = harness();
    merchant = await h.merchant('Filter Shop');
    other = await h.merchant('Other Filter Shop');
    start = Math.floor(h.clock.now().getTime() / 1000);
    const paid = await createOrder(h, merchant);
    const captured = await createPayment(h, merchant, {}, paid);
    await choose(h, captured.paymentId, await openPage(h, captured.paymentId), 'success');
    h.clock.advance(60_000);
    const failed = await createPayment(h, merchant, { method: 'wallet', bank: undefined, wallet: 'payzapp' });
    await choose(h, failed.paymentId, await openPage(h, failed.paymentId), 'failure');
    h.clock.advance(60_000);
    const open = await createPayment(h, merchant);
    const receipted = await h.request('POST', '/v1/orders/', {
      auth: merchant,
      json: { amount: 700, currency: 'INR', receipt: 'rcpt-filter-1' },
    });
    // Another merchant's payment in the same state never shows.
    const theirs = await createPayment(h, other);
    await choose(h, theirs.paymentId, await openPage(h, theirs.paymentId), 'success');
    Object.assign(ids, {
      paidOrder: paid,
      captured: captured.paymentId,
      failed: failed.paymentId,
      failedOrder: failed.orderId,
      open: open.paymentId,
      openOrder: open.orderId,
      receipted: receipted.json().data.id,
    });
  });

  const list = async (path: string) => {
    const response = await harness().request('GET', path, { auth: merchant });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json().data as Json[]).map((item) => item.id);
  };

  it('narrows payments by status, method, order and time', async () => {
    expect(await list('/v1/payments/?status=captured')).toEqual([ids.captured]);
    expect(await list('/v1/payments/?status=failed&method=wallet')).toEqual([ids.failed]);
    expect(await list('/v1/payments/?method=wallet&status=captured')).toEqual([]);
    expect(await list(`/v1/payments/?order_id=${ids.openOrder}`)).toEqual([ids.open]);
    expect(await list('/v1/payments/?order_id=order_00000000000000000000000000')).toEqual([]);
    expect(await list(`/v1/payments/?from=${start + 60}`)).toEqual([ids.open, ids.failed]);
    expect(await list(`/v1/payments/?from=${start + 60}&to=${start + 120}`)).toEqual([ids.failed]);
    expect(await list(`/v1/payments/?to=${start + 60}`)).toEqual([ids.captured]);
  });

  it('narrows payments by bank, wallet, customer email and phone (codes and email in any case)', async () => {
    expect(await list('/v1/payments/?bank=icic')).toEqual([ids.open, ids.captured]);
    expect(await list('/v1/payments/?bank=HDFC')).toEqual([]);
    expect(await list('/v1/payments/?wallet=PAYZAPP')).toEqual([ids.failed]);
    expect(await list('/v1/payments/?email=ASHA%40example.com&status=captured')).toEqual([ids.captured]);
    expect(await list('/v1/payments/?email=someone%40example.com')).toEqual([]);
    expect(await list('/v1/payments/?contact=%2B919876543210&method=wallet')).toEqual([ids.failed]);
    expect(await list('/v1/payments/?contact=%2B910000000000')).toEqual([]);
  });

  it('pages through a filtered list', async () => {
    const first = await harness().request('GET', `/v1/payments/?limit=1&from=${start}`, { auth: merchant });
    const page = first.json();
    expect(page.data.map((p: Json) => p.id)).toEqual([ids.open]);
    expect(page.has_more).toBe(true);
    const second = await list(`/v1/payments/?limit=5&from=${start}&cursor=${page.next_cursor}`);
    expect(second).toEqual([ids.failed, ids.captured]);
  });

  it('narrows orders by status, receipt and time', async () => {
    expect(await list('/v1/orders/?status=paid')).toEqual([ids.paidOrder]);
    expect(await list('/v1/orders/?receipt=rcpt-filter-1')).toEqual([ids.receipted]);
    expect(await list('/v1/orders/?status=created')).toEqual([ids.receipted]);
    expect((await list('/v1/orders/?status=attempted')).sort()).toEqual(
      [ids.failedOrder, ids.openOrder].sort(),
    );
    expect(await list(`/v1/orders/?to=${start + 60}`)).toEqual([ids.paidOrder]);
  });

  it.each([
    '/v1/payments/?status=done',
    '/v1/payments/?method=card',
    '/v1/payments/?from=yesterday',
    '/v1/payments/?from=-1',
    '/v1/payments/?bank_code=HDFC',
    `/v1/payments/?email=${'e'.repeat(255)}`,
    '/v1/orders/?status=captured',
    `/v1/orders/?receipt=${'r'.repeat(41)}`,
    '/v1/orders/?to=1.5',
  ])('refuses %s with a clear 400', async (path) => {
    const response = await harness().request('GET', path, { auth: merchant });
    expect(response.statusCode).toBe(400);
    expect(['invalid_field', 'unknown_field']).toContain(response.json().error.code);
  });

  it.each([
    ['/v1/payments/?id=x', 'id'],
    ['/v1/payments/?created_at=1', 'created_at'],
    ['/v1/events/?status=x', 'status'],
    ['/v1/webhooks/?status=x', 'status'],
    [`/v1/orders/${MISSING_ORDER}/payments/?status=captured`, 'status'],
  ])('refuses %s as an unknown query parameter, not as a field Kosh sets', async (path, name) => {
    const response = await harness().request('GET', path, { auth: merchant });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({
      code: 'unknown_field',
      field: name,
      message: `Unknown query parameter '${name}'; check its spelling.`,
    });
  });
});
