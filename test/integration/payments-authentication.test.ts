import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { choose, createPayment, eventsOf, openPage, RETURN_URL, returnFields } from '../helpers/payments.js';

describeEachDatabase('payment authentication pages', (harness) => {
  let merchant: TestAccount;
  let secret: string;
  beforeAll(async () => {
    merchant = await harness().merchant('Chai & Co');
    const response = await harness().request('GET', '/v1/payments/return-signing-secret/', {
      auth: merchant,
    });
    expect(response.statusCode).toBe(200);
    secret = response.json().data.secret;
    expect(secret).toMatch(/^rss_[A-Za-z0-9_-]{43}$/);
  });

  const sign = (fields: Record<string, string>) =>
    createHmac('sha256', secret)
      .update(`${fields.payment_id}|${fields.order_id}|${fields.status}`)
      .digest('hex');

  function expectPageHeaders(headers: Record<string, unknown>) {
    const csp = String(headers['content-security-policy']);
    expect(csp).toMatch(/script-src 'nonce-[A-Za-z0-9+/=]{24}'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(headers['cache-control']).toBe('no-store');
    expect(headers['referrer-policy']).toBe('no-referrer');
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(String(headers['content-type'])).toMatch(/^text\/html/);
    return csp;
  }

  it('shows the sandbox page with merchant, amount in rupees, bank and the three choices', async () => {
    const { paymentId } = await createPayment(harness(), merchant);
    const page = await harness().request(
      'GET',
      `/v1/payments/${paymentId}/authentication/?paymentMode=NET_BANKING&bankCode=ICIC`,
    );
    expect(page.statusCode).toBe(200);
    const csp = expectPageHeaders(page.headers);
    expect(page.body).toContain('Chai &amp; Co');
    expect(page.body).toContain('₹50.00');
    expect(page.body).toContain('ICICI Bank');
    for (const choice of ['success', 'failure', 'cancel']) {
      expect(page.body).toContain(`name="choice" value="${choice}"`);
    }
    expect(page.body).toContain(
      `method="POST" action="http://localhost:3000/v1/payments/${paymentId}/authentication/"`,
    );
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(page.body).toContain(`nonce="${nonce}"`);
    // A fresh nonce per response.
    const again = await harness().request('GET', `/v1/payments/${paymentId}/authentication/`);
    expect(again.headers['content-security-policy']).not.toBe(csp);
  });

  const flows = [
    {
      choice: 'success',
      status: 'captured',
      errorCode: null,
      types: ['payment.pending', 'payment.captured', 'order.paid'],
    },
    {
      choice: 'failure',
      status: 'failed',
      errorCode: 'payment_declined',
      types: ['payment.pending', 'payment.failed'],
    },
    {
      choice: 'cancel',
      status: 'failed',
      errorCode: 'payment_cancelled',
      types: ['payment.pending', 'payment.failed'],
    },
  ] as const;

  describe.each(flows)('choosing $choice', ({ choice, status, errorCode, types }) => {
    it('moves the payment and the order, records the events, and posts the browser back signed', async () => {
      const account = await harness().merchant();
      const accountSecret = (
        await harness().request('GET', '/v1/payments/return-signing-secret/', { auth: account })
      ).json().data.secret;
      const { paymentId, orderId } = await createPayment(harness(), account, {
        method: 'wallet',
        bank: undefined,
        wallet: 'AIRTELMONEY',
      });
      const token = await openPage(harness(), paymentId);
      const response = await choose(harness(), paymentId, token, choice);
      expect(response.statusCode).toBe(200);
      const csp = expectPageHeaders(response.headers);
      // The return (and a redirect the merchant answers it with) may go to an https: address.
      expect(csp).toContain("form-action 'self' http://localhost:3000 https:;");
      expect(response.body).toContain(`method="POST" action="${RETURN_URL}"`);
      expect(response.body).toMatch(
        /<script nonce="[^"]+">document\.getElementById\('kosh-return'\)\.submit\(\);<\/script>/,
      );
      expect(response.body).toContain('<noscript><button type="submit">');
      const fields = returnFields(response.body);
      expect(fields).toEqual({
        payment_id: paymentId,
        order_id: orderId,
        status,
        signature: createHmac('sha256', accountSecret)
          .update(`${paymentId}|${orderId}|${status}`)
          .digest('hex'),
      });

      const payment = (await harness().request('GET', `/v1/payments/${paymentId}/`, { auth: account })).json()
        .data;
      expect(payment).toMatchObject({ status, error_code: errorCode });
      if (status === 'captured') {
        expect(payment.captured_at).toEqual(expect.any(Number));
        expect(payment.error_reason).toBeNull();
      } else {
        expect(payment.captured_at).toBeNull();
        expect(payment.error_reason).toEqual(expect.any(String));
      }
      const order = (await harness().request('GET', `/v1/orders/${orderId}/`, { auth: account })).json().data;
      expect(order).toMatchObject(
        status === 'captured'
          ? { status: 'paid', amount_paid: 5000, amount_pending: 0 }
          : { status: 'attempted', amount_paid: 0, amount_pending: 5000 },
      );
      expect(order.bank_details).toEqual({
        method: 'wallet',
        wallet: 'airtelmoney',
        wallet_name: 'Airtel Payments Bank',
      });
      expect(order.return_url).toBe(RETURN_URL);

      // Written in one millisecond, the events still sort by id in the order they were written.
      const events = await eventsOf(harness(), account.id);
      expect(events.map((event) => event.type)).toEqual(types);
      const byType = Object.fromEntries(events.map((event) => [event.type, event.payload]));
      expect(byType['payment.pending']!.payment.status).toBe('pending');
      expect(byType['payment.pending']!.order.status).toBe('attempted');
      // The payment as the choice left it, before the bank's answer: what the answer changed, undone.
      expect(byType['payment.pending']!.payment).toEqual({
        ...payment,
        status: 'pending',
        error_code: null,
        error_reason: null,
        captured_at: null,
        authorised_at: null,
        bank_reference: null,
        fee: null,
        tax: null,
      });
      const final = byType[status === 'captured' ? 'payment.captured' : 'payment.failed']!;
      expect(final.payment).toEqual(payment);
      expect(final.order).toEqual(order);
      if (status === 'captured') expect(byType['order.paid']).toEqual(final);

      // The token worked once; visiting or posting again changes nothing and sends the browser back.
      const replay = await choose(harness(), paymentId, token, choice === 'success' ? 'failure' : 'success');
      expect(returnFields(replay.body)).toEqual(fields);
      const revisit = await harness().request('GET', `/v1/payments/${paymentId}/authentication/`);
      expect(revisit.statusCode).toBe(200);
      expect(returnFields(revisit.body)).toEqual(fields);
      expect((await eventsOf(harness(), account.id)).length).toBe(types.length);
    });
  });

  it('refuses a wrong token without changing the payment', async () => {
    const { paymentId } = await createPayment(harness(), merchant);
    const token = await openPage(harness(), paymentId);
    const wrong = await choose(harness(), paymentId, `${token}x`, 'success');
    expect(wrong.statusCode).toBe(409);
    expectPageHeaders(wrong.headers);
    // Opening the page again replaces the token: the old one no longer works either.
    const fresh = await openPage(harness(), paymentId);
    expect((await choose(harness(), paymentId, token, 'success')).statusCode).toBe(409);
    const payment = (await harness().request('GET', `/v1/payments/${paymentId}/`, { auth: merchant })).json()
      .data;
    expect(payment.status).toBe('created');
    expect((await choose(harness(), paymentId, fresh, 'success')).statusCode).toBe(200);
  });

  it("answers HEAD without replacing the open page's token: a link checker or prefetcher changes nothing", async () => {
    const { paymentId } = await createPayment(harness(), merchant);
    const token = await openPage(harness(), paymentId);
    const head = await harness().request('HEAD', `/v1/payments/${paymentId}/authentication/`);
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expectPageHeaders(head.headers);
    expect((await harness().request('HEAD', '/v1/payments/pay_unknown/authentication/')).statusCode).toBe(
      404,
    );
    expect((await choose(harness(), paymentId, token, 'success')).statusCode).toBe(200);
  });

  it("settles the choice from the page's copy of the payment only while the payment is as the page read it", async () => {
    const account = await harness().merchant();
    const { db } = harness().container;
    const { queries } = harness();
    const { paymentId } = await createPayment(harness(), account);
    const token = await openPage(harness(), paymentId);
    // Written after the page read it, as a reconciler's note would be: the page's copy is stale.
    await db.query(
      `UPDATE payments SET bank_reference = 'NOTED-AFTER-THE-PAGE', updated_at = updated_at + interval '1 second'
        WHERE id = $1`,
      [paymentId],
    );
    queries.reset();
    const chosen = await choose(harness(), paymentId, token, 'success');
    expect(returnFields(chosen.body)).toMatchObject({ payment_id: paymentId, status: 'captured' });
    // The update from the copy found the payment changed and wrote nothing; the payment was read again.
    const trips = queries.wire.map((trip) => trip.join(' + '));
    expect(trips[0]).toBe('BEGIN + payments_change_status + orders_find_for_update + orders_change_status');
    expect(trips).toContain('payments_find_by_id');
    const events = await eventsOf(harness(), account.id);
    expect(events.map((event) => event.type)).toEqual(['payment.pending', 'payment.captured', 'order.paid']);
    // The events tell of the payment as it was, not as the page's copy had it.
    expect(events[0]!.payload.payment).toMatchObject({
      status: 'pending',
      bank_reference: 'NOTED-AFTER-THE-PAGE',
    });
    // A later page and choice read afresh and settle from the new copy as usual.
    const second = await createPayment(harness(), account);
    const secondToken = await openPage(harness(), second.paymentId);
    queries.reset();
    const settled = await choose(harness(), second.paymentId, secondToken, 'success');
    expect(returnFields(settled.body)).toMatchObject({ payment_id: second.paymentId, status: 'captured' });
    expect(queries.wire.flat()).not.toContain('payments_find_by_id');
  });

  it('records the choice alone when its outcome cannot be recorded with it: the customer goes back pending, the reconciler captures', async () => {
    const account = await harness().merchant();
    const { db } = harness().container;
    const { paymentId, orderId } = await createPayment(harness(), account);
    const token = await openPage(harness(), paymentId);
    // The order.paid event of this account cannot be written, so no capture of its order commits.
    await db.query(`CREATE FUNCTION refuse_order_paid() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.type = 'order.paid' AND NEW.account_id = '${account.id}' THEN
          RAISE EXCEPTION 'order.paid refused for this test';
        END IF;
        RETURN NEW;
      END $$`);
    await db.query(
      'CREATE TRIGGER refuse_order_paid BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_order_paid()',
    );
    try {
      const chosen = await choose(harness(), paymentId, token, 'success');
      expect(chosen.statusCode).toBe(200);
      expect(returnFields(chosen.body)).toMatchObject({ payment_id: paymentId, status: 'pending' });
    } finally {
      await db.query('DROP TRIGGER refuse_order_paid ON events');
      await db.query('DROP FUNCTION refuse_order_paid()');
    }
    // The choice is committed on its own (pending, with when to ask), the capture is not.
    const [pending] = await db.query<{ status: string; next_sync_at: Date | null }>(
      'SELECT status, next_sync_at FROM payments WHERE id = $1',
      [paymentId],
    );
    expect(pending).toMatchObject({ status: 'pending' });
    expect(pending!.next_sync_at).not.toBeNull();
    expect((await eventsOf(harness(), account.id)).map((event) => event.type)).toEqual(['payment.pending']);
    // The token is used up: the same post again only shows where the payment stands.
    const again = await choose(harness(), paymentId, token, 'success');
    expect(returnFields(again.body)).toMatchObject({ payment_id: paymentId, status: 'pending' });
    // The reconciler asks the sandbox at the payment's next ask and captures it.
    harness().clock.advance(Math.max(0, pending!.next_sync_at!.getTime() - harness().clock.now().getTime()));
    await harness().container.jobs.paymentSync.run(new AbortController().signal);
    const payment = (await harness().request('GET', `/v1/payments/${paymentId}/`, { auth: account })).json()
      .data;
    expect(payment.status).toBe('captured');
    const order = (await harness().request('GET', `/v1/orders/${orderId}/`, { auth: account })).json().data;
    expect(order.status).toBe('paid');
    expect((await eventsOf(harness(), account.id)).map((event) => event.type)).toEqual([
      'payment.pending',
      'payment.captured',
      'order.paid',
    ]);
  });

  it('answers an HTML 404 for an unknown payment and an HTML 400 for a bad choice', async () => {
    const missing = await harness().request(
      'GET',
      '/v1/payments/pay_0000000000000000000000000z/authentication/',
    );
    expect(missing.statusCode).toBe(404);
    expectPageHeaders(missing.headers);
    const { paymentId } = await createPayment(harness(), merchant);
    const token = await openPage(harness(), paymentId);
    const bad = await choose(harness(), paymentId, token, 'maybe');
    expect(bad.statusCode).toBe(400);
    expectPageHeaders(bad.headers);
  });

  it("answers the UPI page's status only for a UPI payment", async () => {
    const { paymentId } = await createPayment(harness(), merchant);
    const status = await harness().request('GET', `/v1/payments/${paymentId}/upi-status/`);
    expect(status.statusCode).toBe(404);
    expect(status.json().error).toMatchObject({
      code: 'resource_not_found',
      message: `No UPI payment with id '${paymentId}'.`,
    });
  });

  it('never writes "><script> unescaped into html_content or any page', async () => {
    const attack = '"><script>alert(1)</script>';
    const account = await harness().merchant(`Evil ${attack}`);
    const { paymentId, body } = await createPayment(harness(), account, {
      name: `Asha ${attack}`,
      description: `Desc ${attack}`,
      metadata: { note: attack, [attack.slice(0, 30)]: 'x' },
      return_url: `https://merchant.example/return?next=${encodeURIComponent(attack)}&a="><script>`,
    });
    const pages: string[] = [body.next[0]!.html_content!];
    const choosePage = await harness().request('GET', `/v1/payments/${paymentId}/authentication/`);
    pages.push(choosePage.body);
    const token = /name="token" value="([^"]+)"/.exec(choosePage.body)![1]!;
    pages.push((await choose(harness(), paymentId, token, 'success')).body);
    pages.push((await harness().request('GET', `/v1/payments/${paymentId}/authentication/`)).body);
    for (const html of pages) {
      expect(html).not.toContain('"><script>');
      expect(html).not.toContain('<script>alert');
    }
    expect(pages[1]).toContain('Evil &quot;&gt;&lt;script&gt;');
    expect(pages[2]).toContain('action="https://merchant.example/return?next=');
    const payment = (await harness().request('GET', `/v1/payments/${paymentId}/`, { auth: account })).json()
      .data;
    expect(payment.name).toBe(`Asha ${attack}`);
    expect(payment.metadata.note).toBe(attack);
  });

  it('keeps one return signing secret per account and mode', async () => {
    const again = await harness().request('GET', '/v1/payments/return-signing-secret/', { auth: merchant });
    expect(again.json().data).toEqual({
      secret,
      algorithm: 'HMAC-SHA256',
      signed_payload: 'payment_id|order_id|status',
    });
    const other = await harness().merchant();
    const theirs = await harness().request('GET', '/v1/payments/return-signing-secret/', { auth: other });
    expect(theirs.json().data.secret).not.toBe(secret);
    expect(sign({ payment_id: 'a', order_id: 'b', status: 'c' })).toMatch(/^[0-9a-f]{64}$/);
  });
});
