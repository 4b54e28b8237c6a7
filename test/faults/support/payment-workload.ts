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
