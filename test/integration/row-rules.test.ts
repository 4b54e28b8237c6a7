import { expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/harness.js';
import { createPayment } from '../helpers/payments.js';

/**
 * The rules of every order and payment row are held by the database (migrations/0021: a trigger,
 * formerly CHECK constraints): a write that breaks one is refused whoever sends it, with
 * check_violation and the rule's name, and changes nothing.
 */
describeEachDatabase('the rules of orders and payments', (harness) => {
  // Each change breaks exactly the rule named (the rules before it in the trigger still hold).
  const paymentRules: [rule: string, change: string][] = [
    ['payments_mode_check', `mode = 'sandbox'`],
    ['payments_amount_check', 'amount = 0'],
    ['payments_status_check', `status = 'lost'`],
    ['payments_method_check', `method = 'card'`],
    ['payments_instrument_check', `wallet = 'PAYTM'`],
    ['payments_check1', `error_code = 'BAD_REQUEST_ERROR'`],
    ['payments_check2', `status = 'captured', captured_at = NULL`],
    ['payments_pending_at_check', `status = 'pending', pending_at = NULL`],
    ['payments_fee_check', 'fee = -1'],
    ['payments_tax_check', 'tax = -1'],
    ['payments_sync_attempts_check', 'sync_attempts = -1'],
    ['payments_refund_due_check', 'refund_due = true'],
    ['payments_amount_refunded_check', 'amount_refunded = amount + 1'],
    ['payments_refunded_only_taken_money_check', 'amount_refunded = 1'],
    ['payments_return_url_check', 'return_url = NULL'],
    [
      'payments_upi_flow_check',
      `method = 'upi', bank = NULL, upi_flow = 'push', expires_at = now(), next_sync_at = now()`,
    ],
    [
      'payments_upi_vpa_check',
      `method = 'upi', bank = NULL, upi_flow = 'collect', upi_vpa = 'ab', expires_at = now(), next_sync_at = now()`,
    ],
    [
      'payments_upi_reconciled',
      `method = 'upi', bank = NULL, upi_flow = 'qr', expires_at = now(), next_sync_at = NULL`,
    ],
  ];
  const orderRules: [rule: string, change: string][] = [
    ['orders_mode_check', `mode = 'sandbox'`],
    ['orders_amount_check', 'amount = 0'],
    ['orders_status_check', `status = 'gone'`],
    ['orders_check', 'amount_paid = -1'],
    ['orders_check1', `status = 'paid', amount_paid = 0`],
  ];

  const refused = async (sql: string, params: unknown[], rule: string, table: string) => {
    const failure = await harness()
      .container.db.query(sql, params)
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure, `${rule} let the write through`).toMatchObject({ code: '23514', constraint: rule });
    expect(String((failure as Error).message)).toContain(`"${table}"`);
  };

  it('refuses a payment or an order that breaks any of its rules, naming the rule, and changes nothing', async () => {
    const merchant = await harness().merchant();
    const { paymentId, orderId } = await createPayment(harness(), merchant);
    const { db } = harness().container;
    const before = await db.query('SELECT * FROM payments WHERE id = $1', [paymentId]);
    for (const [rule, change] of paymentRules) {
      await refused(`UPDATE payments SET ${change} WHERE id = $1`, [paymentId], rule, 'payments');
    }
    expect(await db.query('SELECT * FROM payments WHERE id = $1', [paymentId])).toEqual(before);

    const order = await db.query('SELECT * FROM orders WHERE id = $1', [orderId]);
    for (const [rule, change] of orderRules) {
      await refused(`UPDATE orders SET ${change} WHERE id = $1`, [orderId], rule, 'orders');
    }
    expect(await db.query('SELECT * FROM orders WHERE id = $1', [orderId])).toEqual(order);
  });

  it('checks new rows as they are inserted, and lets a rule that is unknown (NULL) pass, as a CHECK does', async () => {
    const merchant = await harness().merchant();
    const { paymentId, orderId } = await createPayment(harness(), merchant);
    const { db } = harness().container;
    await refused(
      `INSERT INTO orders (id, account_id, mode, amount, currency, status, metadata, created_at, updated_at)
       VALUES ($1, $2, 'test', -5, 'INR', 'created', '{}', now(), now())`,
      [`${orderId}_x`, merchant.id],
      'orders_amount_check',
      'orders',
    );
    expect(await db.query('SELECT id FROM orders WHERE id = $1', [`${orderId}_x`])).toEqual([]);
    await refused(
      `INSERT INTO payments (id, account_id, mode, order_id, amount, currency, status, method, bank,
                             instrument_name, email, contact, name, return_url, connector, created_at, updated_at)
       SELECT $1, account_id, mode, id, amount, currency, 'created', 'netbanking', NULL, 'HDFC Bank',
              'a@example.com', '9999999999', 'A', 'https://shop.example/return', 'sandbox', now(), now()
         FROM orders WHERE id = $2`,
      [`${paymentId}_x`, orderId],
      'payments_instrument_check',
      'payments',
    );
    // A netbanking payment has no UPI flow: the flow's rule is unknown (NULL) for it, so it holds.
    const [row] = await db.query<{ upi_flow: string | null; fee: number | null }>(
      'UPDATE payments SET fee = NULL WHERE id = $1 RETURNING upi_flow, fee',
      [paymentId],
    );
    expect(row).toEqual({ upi_flow: null, fee: null });
  });
});
