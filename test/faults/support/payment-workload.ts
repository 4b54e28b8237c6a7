import { type Acknowledged, type Client, type Outcome, readBack, type Workload } from './workload.js';

/** The token of the sandbox bank page, or the `status` the return form reports after a choice. */
const TOKEN = /name="token" value="([^"]+)"/;
const RETURNED_STATUS = /name="status" value="([^"]+)"/;

export function paymentBody(orderId: string, amount: number, wallet: boolean): Record<string, unknown> {
  return {
    amount,
    currency: 'INR',
    contact: '+919876543210',
    name: 'Asha Rao',
    email: 'asha@example.com',
    order_id: orderId,
    return_url: 'https://merchant.example/return',
    ...(wallet ? { method: 'wallet', wallet: 'AIRTELMONEY' } : { method: 'netbanking', bank: 'ICIC' }),
  };
}

/** Opens the bank page and chooses Success; the status the return form reports, if it answered. */
export async function chooseSuccess(client: Client, paymentId: string): Promise<string | undefined> {
  const page = await client.request('GET', `/v1/payments/${paymentId}/authentication/`);
  const token = page.status === 200 ? TOKEN.exec(String(page.body))?.[1] : undefined;
  if (!token) return undefined;
  const chosen = await client.request(
    'POST',
    `/v1/payments/${paymentId}/authentication/`,
    { token, choice: 'success' },
    'form',
  );
  return chosen.status === 200 ? RETURNED_STATUS.exec(String(chosen.body))?.[1] : undefined;
}

let chains = 0;

/**
 * Create an order, then an S2S payment on it (net banking or wallet). Half the chains also
 * complete the payment (Success on the bank page), a quarter leave it waiting, and a quarter make a
 * second payment on the same order and complete both at once, so two captures race for one order while the
 * service is being killed. Acknowledged: each order and payment a 200 returned, and `captured`
 * for each payment whose return form said so (captured is final).
 */
export const PAYMENT_WORKLOAD: Workload = {
  name: 'payments',
  async send(client, sequence) {
    const chain = chains++;
    const amount = 2000 + (sequence % 100_000);
    const order = await client.request('POST', '/v1/orders/', { amount, currency: 'INR' });
    if (order.status !== 200) return { outcome: order };
    const orderId: string = order.body.data.id;
    const acknowledged: Acknowledged[] = [
      { workload: 'payments', id: orderId, expected: { amount, currency: 'INR' } },
    ];
    const payments: Acknowledged[] = [];
    let outcome: Outcome = order;
    const attempts = chain % 4 === 3 ? 2 : 1;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const created = await client.request(
        'POST',
        '/v1/payments/create/s2s/',
        paymentBody(orderId, amount, (chain + attempt) % 2 === 1),
      );
      outcome = created;
      if (created.status !== 200) break;
      payments.push({
        workload: 'payments',
        id: created.body.payment_id,
        expected: { order_id: orderId, amount },
      });
    }
    if (chain % 4 <= 1 || (chain % 4 === 3 && payments.length === 2)) {
      const statuses = await Promise.all(payments.map((payment) => chooseSuccess(client, payment.id)));
      statuses.forEach((status, index) => {
        if (status === 'captured') payments[index]!.expected.status = 'captured';
      });
    }
    acknowledged.push(...payments);
    return { outcome, acknowledged };
  },
  async verify(client, acknowledged) {
    const kind = acknowledged.id.startsWith('order_') ? 'orders' : 'payments';
    const outcome = await readBack(client, `/v1/${kind}/${acknowledged.id}/`);
    if (outcome.status !== 200) return false;
    const object = outcome.body.data;
    return Object.entries(acknowledged.expected).every(([key, value]) => object[key] === value);
  },
};

/**
 * A whole charge (order, S2S payment, Success on the bank page), then a full refund of it.
 * Acknowledged: the order and payment as in PAYMENT_WORKLOAD, and each refund a 200 returned,
 * with its payment and amount (its status moves on by itself, so it is not compared).
 */
export const REFUND_WORKLOAD: Workload = {
  name: 'refunds',
  async send(client, sequence) {
    const amount = 3000 + (sequence % 100_000);
    const order = await client.request('POST', '/v1/orders/', { amount, currency: 'INR' });
    if (order.status !== 200) return { outcome: order };
    const orderId: string = order.body.data.id;
    const acknowledged: Acknowledged[] = [
      { workload: 'refunds', id: orderId, expected: { amount, currency: 'INR' } },
    ];
    const created = await client.request(
      'POST',
      '/v1/payments/create/s2s/',
      paymentBody(orderId, amount, false),
    );
    if (created.status !== 200) return { outcome: created, acknowledged };
    const paymentId: string = created.body.payment_id;
    const payment: Acknowledged = {
      workload: 'refunds',
      id: paymentId,
      expected: { order_id: orderId, amount },
    };
    acknowledged.push(payment);
    if ((await chooseSuccess(client, paymentId)) !== 'captured') return { outcome: created, acknowledged };
    payment.expected.status = 'captured';
    const refund = await client.request('POST', `/v1/payments/${paymentId}/refunds/`, {});
    if (refund.status === 200) {
      acknowledged.push({
        workload: 'refunds',
        id: refund.body.data.id,
        expected: { payment_id: paymentId, amount },
      });
    }
    return { outcome: refund, acknowledged };
  },
  async verify(client, acknowledged) {
    const kind = acknowledged.id.startsWith('order_')
      ? 'orders'
      : acknowledged.id.startsWith('pay_')
        ? 'payments'
        : 'refunds';
    const outcome = await readBack(client, `/v1/${kind}/${acknowledged.id}/`);
    if (outcome.status !== 200) return false;
    const object = outcome.body.data;
    return Object.entries(acknowledged.expected).every(([key, value]) => object[key] === value);
  },
};
