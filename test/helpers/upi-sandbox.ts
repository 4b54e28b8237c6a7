import { expect } from 'vitest';
import type { Harness, TestAccount } from './harness.js';
import { createOrder, eventsOf, paymentBody } from './payments.js';

/**
 * What the sandbox UPI suites (test/integration/payments-upi*.test.ts) share: a UPI payment's body
 * and start, its form encoding, and the sandbox UPI app's choices and the status sync.
 */

/** A UPI start's next step, as the suites read it. */
export interface Next {
  action: string;
  url?: string;
  qr_image?: string;
  expires_at?: number;
}

export const upiBody = (
  orderId: string,
  upi: Record<string, unknown>,
  overrides: Record<string, unknown> = {},
) => {
  const { bank: _bank, ...body } = paymentBody(orderId, { method: 'upi', upi, ...overrides });
  return body;
};

export async function start(
  h: Harness,
  merchant: TestAccount,
  upi: Record<string, unknown>,
  options: { form?: boolean; overrides?: Record<string, unknown>; amount?: number } = {},
) {
  const orderId = await createOrder(h, merchant, options.amount ?? 5000);
  const body = upiBody(orderId, upi, { amount: options.amount ?? 5000, ...options.overrides });
  const response = await h.request(
    'POST',
    '/v1/payments/create/s2s/',
    options.form ? { auth: merchant, form: formOf(body) } : { auth: merchant, json: body },
  );
  expect(response.statusCode, response.body).toBe(200);
  const answer = response.json() as { payment_id: string; next: Next[] };
  return { orderId, paymentId: answer.payment_id, next: answer.next };
}

/** `upi[flow]=qr` and friends: the form spelling of a JSON body, one level deep. */
export function formOf(body: Record<string, unknown>): Record<string, string> {
  const form: Record<string, string> = {};
  for (const [key, value] of Object.entries(body)) {
    if (value && typeof value === 'object') {
      for (const [inner, v] of Object.entries(value)) form[`${key}[${inner}]`] = String(v);
    } else form[key] = String(value);
  }
  return form;
}

/** The sandbox UPI app, the sync job and a payment's reads, for one harness and its `merchant`. */
export function upiSandboxHelpers(harness: () => Harness, merchant: () => TestAccount) {
  const fetchPayment = async (id: string) =>
    (await harness().request('GET', `/v1/payments/${id}/`, { auth: merchant() })).json().data;

  async function simulate(paymentId: string, choice: string) {
    const page = await harness().request('GET', `/v1/payments/${paymentId}/upi-simulator/`);
    expect(page.statusCode, page.body).toBe(200);
    const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1];
    expect(token).toBeDefined();
    return harness().request('POST', `/v1/payments/${paymentId}/upi-simulator/`, {
      form: { token: token as string, choice },
    });
  }

  const runSync = async (seconds: number) => {
    harness().clock.advance(seconds * 1000);
    await harness().container.jobs.paymentSync.run(new AbortController().signal);
  };
  const eventTypes = async (paymentId: string) =>
    (await eventsOf(harness(), merchant().id))
      .filter((event) => event.payload.payment.id === paymentId)
      .map((event) => event.type);

  return { fetchPayment, simulate, runSync, eventTypes };
}
