import { expect } from 'vitest';
import type { Harness, TestAccount } from './harness.js';

export const RETURN_URL = 'https://merchant.example/return';

export async function createOrder(h: Harness, account: TestAccount, amount = 5000): Promise<string> {
  const response = await h.request('POST', '/v1/orders/', {
    auth: account,
    json: { amount, currency: 'INR' },
  });
  expect(response.statusCode).toBe(200);
  return response.json().data.id;
}

export function paymentBody(
  orderId: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    amount: 5000,
    currency: 'INR',
    contact: '+919876543210',
    name: 'Asha Rao',
    email: 'asha@example.com',
    order_id: orderId,
    return_url: RETURN_URL,
    method: 'netbanking',
    bank: 'ICIC',
    description: 'Two notebooks',
    ...overrides,
  };
}

/** An order and a payment on it; returns both ids and the S2S response body. */
export async function createPayment(
  h: Harness,
  account: TestAccount,
  overrides: Record<string, unknown> = {},
  orderId?: string,
) {
  const order = orderId ?? (await createOrder(h, account));
  const response = await h.request('POST', '/v1/payments/create/s2s/', {
    auth: account,
    json: paymentBody(order, overrides),
  });
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json() as {
    payment_id: string;
    next: { action: string; html_content?: string; url?: string }[];
  };
  return { orderId: order, paymentId: body.payment_id, body };
}

/** Opens the sandbox page and returns its single-use token. */
export async function openPage(h: Harness, paymentId: string): Promise<string> {
  const page = await h.request('GET', `/v1/payments/${paymentId}/authentication/`);
  expect(page.statusCode, page.body).toBe(200);
  const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1];
  expect(token).toBeDefined();
  return token as string;
}

export async function choose(h: Harness, paymentId: string, token: string, choice: string) {
  return h.request('POST', `/v1/payments/${paymentId}/authentication/`, { form: { token, choice } });
}

/** The hidden fields of the return form. */
export function returnFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[match[1] as string] = match[2] as string;
  }
  return fields;
}

export interface EventPayload {
  payment: Record<string, unknown> & { id: string; status: string };
  order: Record<string, unknown> & { id: string; status: string };
}

export async function eventsOf(
  h: Harness,
  accountId: string,
): Promise<{ type: string; payload: EventPayload }[]> {
  return h.container.db.query('SELECT type, payload FROM events WHERE account_id = $1 ORDER BY id', [
    accountId,
  ]);
}
