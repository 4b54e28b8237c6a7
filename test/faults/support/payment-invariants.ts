import { idsOf, queryIds, withClient } from './database.js';

/**
 * The money invariants, asked of the database itself after a fault run: each query returns the
 * offending ids, so an empty list is a pass. docs/payments.md: one captured payment per order;
 * `captured` is final, and the only move from `failed` to `captured` is a late authorisation, so
 * a payment with both events must have its payment.failed event before its payment.captured one.
 */
export const PAYMENT_INVARIANTS: Record<string, string> = {
  'orders with two captured payments': `
    SELECT order_id AS id FROM payments WHERE status = 'captured' GROUP BY order_id HAVING count(*) > 1`,
  'orders paid twice (order.paid events)': `
    SELECT payload->'order'->>'id' AS id FROM events WHERE type = 'order.paid'
    GROUP BY 1 HAVING count(*) > 1`,
  'payments captured twice (payment.captured events)': `
    SELECT payload->'payment'->>'id' AS id FROM events WHERE type = 'payment.captured'
    GROUP BY 1 HAVING count(*) > 1`,
  'payments both captured and failed (other than a late authorisation)': `
    SELECT captured.payload->'payment'->>'id' AS id
    FROM events captured
    JOIN events failed ON failed.type = 'payment.failed'
      AND failed.payload->'payment'->>'id' = captured.payload->'payment'->>'id'
    JOIN payments p ON p.id = captured.payload->'payment'->>'id'
    WHERE captured.type = 'payment.captured' AND (failed.id > captured.id OR p.status <> 'captured')`,
  'captured payments whose order is not paid': `
    SELECT p.id FROM payments p JOIN orders o ON o.id = p.order_id
    WHERE p.status = 'captured' AND (o.status <> 'paid' OR o.amount_paid <> o.amount)`,
  'paid orders without a captured payment': `
    SELECT o.id FROM orders o
    WHERE o.status = 'paid' AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.id AND p.status = 'captured')`,
  'captured payments without their payment.captured event': `
    SELECT p.id FROM payments p WHERE p.status = 'captured' AND NOT EXISTS
      (SELECT 1 FROM events e WHERE e.type = 'payment.captured' AND e.payload->'payment'->>'id' = p.id)`,
};

/** Runs every invariant; returns the violations per invariant and the payment counts by status. */
export async function checkPaymentInvariants(databaseUrl: string): Promise<{
  violations: Record<string, string[]>;
  statuses: Record<string, number>;
}> {
  return withClient(databaseUrl, async (client) => {
    const violations: Record<string, string[]> = {};
    for (const [name, sql] of Object.entries(PAYMENT_INVARIANTS)) {
      violations[name] = await queryIds(client, sql);
    }
    const statuses: Record<string, number> = {};
    const counted = await client.query<{ status: string; count: string }>(
      'SELECT status, count(*) AS count FROM payments GROUP BY status ORDER BY status',
    );
    for (const row of counted.rows) statuses[row.status] = Number(row.count);
    return { violations, statuses };
  });
}

/**
 * Payments still pending past their deadline (`pending_at` + the pending timeout): every payment a
 * customer acted on has an owner, the reconciler, so after it has run there must be none.
 */
export function pendingPastDeadline(databaseUrl: string, timeoutSeconds: number): Promise<string[]> {
  return idsOf(
    databaseUrl,
    `SELECT id FROM payments WHERE status = 'pending' AND pending_at < now() - make_interval(secs => $1)`,
    [timeoutSeconds],
  );
}

/**
 * Payments and refunds still open past their deadline: `created` payments older than the payment
 * expiry, `pending` ones past the pending timeout, and `pending` refunds older than that too (the
 * sandbox processes one in KOSH_SANDBOX_REFUND_SECONDS); `seconds` in the checks that use this. The
 * reconciler of some live process owns each of them, so after it has run there must be none.
 */
export function openPastDeadline(databaseUrl: string, seconds: number): Promise<string[]> {
  return idsOf(
    databaseUrl,
    `SELECT id FROM payments
     WHERE (status = 'created' AND created_at < now() - make_interval(secs => $1))
        OR (status = 'pending' AND pending_at < now() - make_interval(secs => $1))
     UNION ALL
     SELECT id FROM refunds WHERE status = 'pending' AND created_at < now() - make_interval(secs => $1)`,
    [seconds],
  );
}
