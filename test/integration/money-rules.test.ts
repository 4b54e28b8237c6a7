import { expect, it } from 'vitest';
import type { Queryable } from '../../src/db/db.js';
import { describeEachDatabase } from '../helpers/harness.js';
import { choose, createPayment, openPage } from '../helpers/payments.js';

/**
 * Money rules the code keeps with compare-and-set statements are held by the database too
 * (migrations/0025): a write that breaks one is refused whoever sends it, with check_violation and
 * the rule's name, and changes nothing.
 */
describeEachDatabase('the money rules the database holds', (harness) => {
  const refused = async (write: Promise<unknown>, rule: string) => {
    const failure = await write.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure, `${rule} let the write through`).toMatchObject({ code: '23514', constraint: rule });
  };

  /** A captured payment with one pending refund of 1,000 made through the API. */
  async function refundedPayment() {
    const merchant = await harness().merchant();
    const { paymentId, orderId } = await createPayment(harness(), merchant);
    await choose(harness(), paymentId, await openPage(harness(), paymentId), 'success');
    const refund = await harness().request('POST', `/v1/payments/${paymentId}/refunds/`, {
      auth: merchant,
      json: { amount: 1000 },
    });
    expect(refund.statusCode, refund.body).toBe(200);
    return { merchant, paymentId, orderId, refundId: refund.json().data.id as string };
  }

  const rowsOf = async (paymentId: string) => {
    const { db } = harness().container;
    return {
      payment: await db.query('SELECT * FROM payments WHERE id = $1', [paymentId]),
      order: await db.query('SELECT * FROM orders WHERE id = (SELECT order_id FROM payments WHERE id = $1)', [
        paymentId,
      ]),
      refunds: await db.query('SELECT * FROM refunds WHERE payment_id = $1 ORDER BY id', [paymentId]),
    };
  };

  /** A pending refund of 500 written straight to the table, on `db` (a transaction, or the pool). */
  const insertRefund = (
    id: string,
    paymentId: string,
    change: { currency?: string; account?: string } = {},
    db: Queryable = harness().container.db,
  ) =>
    db.query(
      `INSERT INTO refunds (id, account_id, mode, payment_id, order_id, amount, currency, status, speed,
                            connector, created_at, updated_at)
       SELECT $1, coalesce($3, account_id), mode, id, order_id, 500, coalesce($4, currency), 'pending', 'normal',
              connector, now(), now()
         FROM payments WHERE id = $2`,
      [id, paymentId, change.account ?? null, change.currency ?? null],
    );

  it("refuses a refund that is not its payment's, and a refunded amount its refunds do not add up to", async () => {
    const { paymentId, refundId } = await refundedPayment();
    const other = await harness().merchant('Another shop');
    const { db } = harness().container;
    const before = await rowsOf(paymentId);
    expect(before.payment[0]).toMatchObject({ amount_refunded: '1000' });

    await refused(insertRefund(`${refundId}_usd`, paymentId, { currency: 'USD' }), 'refunds_match_payment');
    await refused(
      insertRefund(`${refundId}_other`, paymentId, { account: other.id }),
      'refunds_match_payment',
    );
    // A refund written without counting it on the payment, or counted without a refund.
    await refused(insertRefund(`${refundId}_uncounted`, paymentId), 'payments_refunds_add_up');
    await refused(
      db.query('UPDATE payments SET amount_refunded = amount_refunded + 500 WHERE id = $1', [paymentId]),
      'payments_refunds_add_up',
    );
    // A refund failed without giving its amount back to the payment.
    await refused(
      db.query("UPDATE refunds SET status = 'failed', error_code = 'refund_failed' WHERE id = $1", [
        refundId,
      ]),
      'payments_refunds_add_up',
    );
    expect(await rowsOf(paymentId)).toEqual(before);

    // Both halves in one transaction hold the rule: it is checked when the transaction commits.
    await db.transaction(async (tx) => {
      await tx.query('UPDATE payments SET amount_refunded = amount_refunded + 500 WHERE id = $1', [
        paymentId,
      ]);
      await insertRefund(`${refundId}_counted`, paymentId, {}, tx);
    });
    expect((await rowsOf(paymentId)).refunds).toHaveLength(2);
    expect((await rowsOf(paymentId)).payment[0]).toMatchObject({ amount_refunded: '1500' });
  });

  it('moves statuses only along the transition tables and never changes what a row is about', async () => {
    const { paymentId, orderId, refundId } = await refundedPayment();
    const { db } = harness().container;
    await db.transaction(async (tx) => {
      await tx.query("UPDATE refunds SET status = 'processed', processed_at = now() WHERE id = $1", [
        refundId,
      ]);
    });
    const before = await rowsOf(paymentId);
    const update = (table: string, change: string, id: string) =>
      db.query(`UPDATE ${table} SET ${change} WHERE id = $1`, [id]);

    // Captured to failed, the row's other rules kept (a failed payment may owe its money back).
    await refused(
      update(
        'payments',
        `status = 'failed', refund_due = true, authorised_at = coalesce(authorised_at, now())`,
        paymentId,
      ),
      'payments_status_moves',
    );
    await refused(update('orders', `status = 'attempted', amount_paid = 0`, orderId), 'orders_status_moves');
    await refused(
      update('refunds', `status = 'pending', processed_at = NULL`, refundId),
      'refunds_status_moves',
    );

    await refused(update('payments', `currency = 'USD'`, paymentId), 'payments_unchanged_identity');
    await refused(update('payments', 'amount = amount + 1', paymentId), 'payments_unchanged_identity');
    await refused(update('orders', `currency = 'USD'`, orderId), 'orders_unchanged_identity');
    await refused(update('refunds', 'amount = amount - 1', refundId), 'refunds_unchanged_identity');
    expect(await rowsOf(paymentId)).toEqual(before);
  });
});
