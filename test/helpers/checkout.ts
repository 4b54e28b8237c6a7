import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Harness, TestAccount } from './harness.js';
import { createOrder, RETURN_URL } from './payments.js';

type Json = Record<string, unknown>;

export const CUSTOMER = { name: 'Asha Rao', email: 'asha@example.com', contact: '+919876543210' };

/** The checkout session calls and reads the checkout suites share, for one harness. */
export function checkoutHelpers(harness: () => Harness) {
  const create = (json: unknown, options: { account: TestAccount; key?: string }) =>
    harness().request('POST', '/v1/checkout/sessions/', {
      auth: options.account,
      json,
      headers: options.key ? { 'idempotency-key': options.key } : {},
    });

  return {
    create,

    /** A new order and an open session on it. */
    async session(account: TestAccount, overrides: Json = {}) {
      const orderId = await createOrder(harness(), account);
      const response = await create({ order_id: orderId, return_url: RETURN_URL, ...overrides }, { account });
      expect(response.statusCode, response.body).toBe(200);
      return {
        orderId,
        ...(response.json().data as Json & { id: string; expires_at: number; created_at: number }),
      };
    },

    fetchSession: (id: string, account: TestAccount) =>
      harness().request('GET', `/v1/checkout/sessions/${id}/`, { auth: account }),

    sessionEvents: (accountId: string) =>
      harness().container.db.query<{ type: string; payload: { checkout_session: Json } }>(
        `SELECT type, payload FROM events WHERE account_id = $1 AND type LIKE 'checkout_session.%' ORDER BY id`,
        [accountId],
      ),

    async sessionCount(accountId: string): Promise<number> {
      const [row] = await harness().container.db.query<{ n: string }>(
        'SELECT count(*) AS n FROM checkout_sessions WHERE account_id = $1',
        [accountId],
      );
      return Number(row?.n);
    },

    sessionMethods: async (id: string) =>
      (
        await harness().container.db.query<{ methods: string[] }>(
          'SELECT methods FROM checkout_sessions WHERE id = $1',
          [id],
        )
      )[0]?.methods,

    /** One batch of the checkout sweep job. */
    sweep: () => harness().container.jobs.checkoutSweep.run(new AbortController().signal),
  };
}

export function expectError(response: LightMyRequestResponse, status: number, code: string, field?: string) {
  expect(response.statusCode, response.body).toBe(status);
  const error = response.json().error;
  expect(error.code, response.body).toBe(code);
  if (field !== undefined) expect(error.field, response.body).toBe(field);
}
