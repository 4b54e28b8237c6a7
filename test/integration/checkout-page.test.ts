import { beforeAll, expect, it } from 'vitest';
import { CHECKOUT_MAX_ATTEMPTS } from '../../src/modules/checkout/checkout-page.service.js';
import { upiMethods } from '../../src/modules/methods/methods.js';
import { CUSTOMER, checkoutHelpers } from '../helpers/checkout.js';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { choose, createPayment, openPage, RETURN_URL, returnFields } from '../helpers/payments.js';

const DESKTOP =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const PHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148';

/**
 * The customer's hosted checkout page over HTTP (docs/checkout.md): what it offers, the payment each
 * choice starts through the S2S core, refusals that write nothing, a failed attempt then a
 * success, and closed sessions. Chromium walks it in test/browser/checkout.browser.test.ts.
 */
describeEachDatabase('the hosted checkout page', (harness) => {
  let merchant: TestAccount;
  const helpers = checkoutHelpers(harness);
  const page = (id: string, query = '') => harness().request('GET', `/checkout/${id}/${query}`);
  // The test clock stands still: each choice is a millisecond later, so payments sort by created_at.
  const post = (id: string, form: Record<string, string>, headers: Record<string, string> = {}) => {
    harness().clock.advance(1);
    return harness().request('POST', `/checkout/${id}/`, {
      form,
      headers: { 'user-agent': DESKTOP, ...headers },
    });
  };
  const paymentsOf = (sessionId: string) =>
    harness().container.db.query<{
      id: string;
      status: string;
      method: string;
      upi_flow: string | null;
      bank: string | null;
    }>(
      'SELECT id, status, method, upi_flow, bank FROM payments WHERE checkout_session_id = $1 ORDER BY created_at',
      [sessionId],
    );

  beforeAll(async () => {
    merchant = await harness().merchant('Notebook Shop');
  });

  it('shows the merchant, the amount and the methods, UPI first, under 30 KB with a strict CSP', async () => {
    const session = await helpers.session(merchant);
    const response = await page(session.id);
    expect(response.statusCode, response.body).toBe(200);
    const html = response.body;
    expect(Buffer.byteLength(html)).toBeLessThanOrEqual(30 * 1024);
    const csp = response.headers['content-security-policy'] as string;
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).toContain(`<style nonce="${nonce}">`);
    // Nothing from another origin: no absolute address at all in the page.
    expect(html).not.toMatch(/(src|href|action)="https?:/);
    expect(html).toContain('Notebook Shop');
    expect(html).toContain('<h1>₹50.00</h1>');
    expect(html).toContain('Pay ₹50.00');
    expect(html).toContain('Test mode');
    const upi = html.indexOf('id="pay-upi"');
    expect(upi).toBeGreaterThan(0);
    expect(html).toMatch(/id="pay-upi" checked/);
    expect(upi).toBeLessThan(html.indexOf('id="bank-ICIC"'));
    expect(html.indexOf('id="bank-ICIC"')).toBeLessThan(html.indexOf('id="wallet-payzapp"'));
    // Collect is off for sandbox accounts; the customer's details are asked (the merchant gave none).
    expect(html).not.toContain('upi_collect');
    for (const field of ['name', 'email', 'contact']) expect(html).toContain(`id="${field}" name="${field}"`);
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('opens the link with the parameters messaging apps append to it', async () => {
    const session = await helpers.session(merchant);
    const shared = await page(session.id, '?utm_source=whatsapp&utm_medium=chat&fbclid=IwAR0abc');
    expect(shared.statusCode, shared.body).toBe(200);
    expect(shared.body).toContain('Notebook Shop');
    expect(shared.body).toContain('name="pay"');
    // Kosh's own parameter is still checked.
    expect((await page(session.id, `?q=${'x'.repeat(61)}`)).statusCode).toBe(400);
  });

  it('offers only what the session allows, and does not ask for details the merchant gave', async () => {
    const session = await helpers.session(merchant, { methods: ['wallet'], customer: CUSTOMER });
    const html = (await page(session.id)).body;
    expect(html).not.toContain('id="pay-upi"');
    expect(html).not.toContain('id="banks"');
    expect(html).toContain('id="wallet-payzapp"');
    expect(html).not.toContain('id="email"');
  });

  it('offers a request to a UPI ID only where the account has collect, and starts it with the ID typed', async () => {
    const account = await harness().merchant('Collect Shop');
    const { methods } = harness().container.services;
    const current = await methods.get(account.id, 'test');
    await methods.set(harness().container.db, account.id, 'test', {
      ...current,
      upi: upiMethods(true, true),
    });
    const session = await helpers.session(account, { customer: CUSTOMER });
    const html = (await page(session.id)).body;
    expect(html).toContain('value="upi_collect" id="pay-collect"');
    expect(html).toContain('id="vpa" name="vpa"');
    const missing = await post(session.id, { pay: 'upi_collect' });
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toMatch(/id="vpa"[^>]*aria-invalid="true"/);
    const bad = await post(session.id, { pay: 'upi_collect', vpa: 'not a vpa' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('value="not a vpa"');
    expect(await paymentsOf(session.id)).toEqual([]);
    const started = await post(session.id, { pay: 'upi_collect', vpa: 'asha@okaxis' });
    expect(started.statusCode).toBe(303);
    const [payment] = await paymentsOf(session.id);
    expect(payment).toMatchObject({ method: 'upi', upi_flow: 'collect' });
  });

  it("puts the account's most used banks first, and narrows the list by ?q= without script", async () => {
    const account = await harness().merchant('Bank Habits');
    for (let i = 0; i < 2; i++) {
      const { paymentId } = await createPayment(harness(), account, { bank: 'UBIN' });
      expect(
        (await choose(harness(), paymentId, await openPage(harness(), paymentId), 'success')).statusCode,
      ).toBe(200);
    }
    const session = await helpers.session(account);
    const html = (await page(session.id)).body;
    const mostUsed = html.slice(html.indexOf('Most used'), html.indexOf('All other banks'));
    // Union Bank of India, used twice, first; then the catalogue's order (the country's most used).
    const codes = (markup: string) => [...markup.matchAll(/id="bank-([A-Z_]+)"/g)].map((match) => match[1]);
    expect(codes(mostUsed)).toEqual(['UBIN', 'ICIC', 'HDFC', 'SBIN', 'UTIB', 'KKBK']);
    const fresh = (await page((await helpers.session(merchant)).id)).body;
    const freshCodes = codes(fresh);
    expect(freshCodes.slice(0, 6)).toEqual(['ICIC', 'HDFC', 'SBIN', 'UTIB', 'KKBK', 'PUNB_R']);
    // The rest by name.
    const others = freshCodes
      .slice(6)
      .map((code) => new RegExp(`for="bank-${code}">([^<]+)<`).exec(fresh)?.[1] ?? '');
    expect(others).toHaveLength(14);
    expect(others).toEqual([...others].sort((a, b) => a.localeCompare(b, 'en')));
    const narrowed = (await page(session.id, '?q=hdfc')).body;
    expect(narrowed).toContain('id="bank-HDFC"');
    expect(narrowed).not.toContain('id="bank-ICIC"');
    expect(narrowed).toContain('value="hdfc"');
    const none = (await page(session.id, '?q=nowhere')).body;
    expect(none).toMatch(/<p class="hint" id="no-bank">No bank matches/);
  });

  it('starts one payment per choice: an html_form bank by an auto-submitted GET, a redirect bank and UPI by 303', async () => {
    const session = await helpers.session(merchant);
    const icici = await post(session.id, { pay: 'bank:ICIC', ...CUSTOMER });
    expect(icici.statusCode, icici.body).toBe(200);
    const [first] = await paymentsOf(session.id);
    expect(first).toMatchObject({ method: 'netbanking', bank: 'ICIC', status: 'created' });
    expect(icici.body).toContain(`action="http://localhost:3000/v1/payments/${first?.id}/authentication/"`);
    expect(icici.body).toContain('method="GET"');
    expect(returnFields(icici.body)).toEqual({ paymentMode: 'NET_BANKING', bankCode: 'ICIC' });

    const hdfc = await post(session.id, { pay: 'bank:HDFC', ...CUSTOMER });
    expect(hdfc.statusCode).toBe(303);
    const desktop = await post(session.id, { pay: 'upi', ...CUSTOMER });
    const phone = await post(session.id, { pay: 'upi', ...CUSTOMER }, { 'user-agent': PHONE });
    const made = await paymentsOf(session.id);
    expect(made.map((payment) => payment.upi_flow ?? payment.bank)).toEqual(['ICIC', 'HDFC', 'qr', 'intent']);
    expect(hdfc.headers.location).toBe(`http://localhost:3000/v1/payments/${made[1]?.id}/authentication/`);
    expect(desktop.headers.location).toBe(`http://localhost:3000/v1/payments/${made[2]?.id}/authentication/`);
    expect(phone.statusCode).toBe(303);
    // Every payment of the session is an ordinary payment of its order.
    const fetched = await harness().request('GET', `/v1/payments/${made[0]?.id}/`, { auth: merchant });
    expect(fetched.json().data.order_id).toBe(session.orderId);
  });

  it('refuses an incomplete or invalid choice on the page itself, keeping what was typed, and writes nothing', async () => {
    const session = await helpers.session(merchant);
    const cases: Array<[Record<string, string>, RegExp, string]> = [
      [{ ...CUSTOMER }, /Choose how to pay/, 'pay'],
      [{ ...CUSTOMER, email: 'not-an-email', pay: 'bank:ICIC' }, /email must be an email address/, 'email'],
      [{ ...CUSTOMER, contact: '12', pay: 'upi' }, /contact must be a phone number/, 'contact'],
      [{ ...CUSTOMER, pay: 'bank:NOPE' }, /NOPE/, 'pay'],
      [{ ...CUSTOMER, pay: 'upi_collect', vpa: 'asha@okhdfc' }, /not enabled/, 'pay'],
      [{ name: 'Asha Rao', pay: 'upi' }, /required/, 'email'],
    ];
    for (const [form, message, field] of cases) {
      const refused = await post(session.id, form);
      expect(refused.statusCode, JSON.stringify(form)).toBe(400);
      expect(refused.headers['content-type']).toContain('text/html');
      expect(refused.body).toMatch(/<div class="alert" role="alert" id="error">/);
      expect(refused.body).toMatch(message);
      if (field !== 'pay') expect(refused.body).toMatch(new RegExp(`id="${field}"[^>]*aria-invalid="true"`));
      expect(refused.body).toContain(`value="${form.name}"`);
    }
    const foreign = await post(session.id, { pay: 'upi', ...CUSTOMER }, { 'sec-fetch-site': 'cross-site' });
    expect(foreign.statusCode).toBe(403);
    // A browser without Fetch Metadata: its Origin names where the form was posted from.
    for (const origin of ['https://evil.example', 'null', 'http://localhost:3000.evil.example']) {
      expect((await post(session.id, { pay: 'upi', ...CUSTOMER }, { origin })).statusCode, origin).toBe(403);
    }
    const extra = await post(session.id, { pay: 'upi', ...CUSTOMER, amount: '1' });
    expect(extra.statusCode).toBe(400);
    expect(extra.headers['content-type']).toContain('text/html');
    expect(await paymentsOf(session.id)).toEqual([]);
    const unknown = await page('cs_00000000000000000000000000');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('Payment link not found');
  });

  it('brings a failed attempt back to the page to try again; the success returns to the merchant, signed, and completes the session', async () => {
    const session = await helpers.session(merchant);
    // Posted from the page itself, as a browser without Fetch Metadata names it.
    await post(session.id, { pay: 'bank:HDFC', ...CUSTOMER }, { origin: 'http://localhost:3000' });
    const [failed] = await paymentsOf(session.id);
    const declined = await choose(harness(), failed!.id, await openPage(harness(), failed!.id), 'failure');
    expect(declined.statusCode).toBe(303);
    expect(declined.headers.location).toBe(`http://localhost:3000/checkout/${session.id}/`);
    const again = await page(session.id);
    expect(again.body).toMatch(
      /<div class="alert" role="alert" id="last-attempt"><p><strong>Your payment by HDFC Bank did not go through/,
    );
    expect(again.body).toContain('No money was taken.');
    // An attempt Kosh stopped waiting for (expired at the bank's page) may still be authorised by
    // the bank: the page never says that no money was taken.
    const second = await post(session.id, { pay: 'bank:SBIN', ...CUSTOMER });
    expect(second.statusCode).toBe(200);
    const [, abandoned] = await paymentsOf(session.id);
    harness().clock.advance((harness().container.config.payments.expirySeconds + 1) * 1000);
    await harness().request('GET', `/v1/payments/${abandoned!.id}/authentication/`);
    const afterExpiry = await page(session.id);
    expect(afterExpiry.body).toContain('did not go through');
    expect(afterExpiry.body).not.toContain('No money was taken');
    expect(afterExpiry.body).toContain('you do not pay twice');

    await post(session.id, { pay: 'wallet:payzapp', ...CUSTOMER });
    const [, , paid] = await paymentsOf(session.id);
    const success = await choose(harness(), paid!.id, await openPage(harness(), paid!.id), 'success');
    expect(success.statusCode).toBe(200);
    expect(success.body).toContain(`action="${RETURN_URL}"`);
    expect(returnFields(success.body)).toMatchObject({ payment_id: paid!.id, status: 'captured' });

    const completed = (await helpers.fetchSession(session.id, merchant)).json().data;
    expect(completed).toMatchObject({ status: 'completed', payment_id: paid!.id });
    // The completed page starts nothing: it says the order is paid and links to the captured
    // payment's page, which sends the signed return again.
    const returnPage = `http://localhost:3000/v1/payments/${paid!.id}/authentication/`;
    const revisit = await page(session.id);
    expect(revisit.statusCode).toBe(200);
    expect(revisit.body).toContain('<h2 class="done">This order is paid</h2>');
    expect(revisit.body).toContain(`<a class="pay" id="return" href="${returnPage}">Return to Notebook Shop`);
    expect(revisit.body).not.toContain('<form');
    const retry = await post(session.id, { pay: 'upi', ...CUSTOMER });
    expect(retry.statusCode).toBe(409);
    expect(retry.body).toContain('<h2 class="done">This order is paid</h2>');
    expect(retry.body).not.toContain('<form');
    expect(await paymentsOf(session.id)).toHaveLength(3);
    const returned = await harness().request('GET', new URL(returnPage).pathname);
    expect(returnFields(returned.body)).toMatchObject({ payment_id: paid!.id, status: 'captured' });
  });

  it('shows an expired session as expired (410) and never starts a payment from it', async () => {
    const account = await harness().merchant('Expired Links');
    const session = await helpers.session(account, { expires_in_minutes: 5 });
    harness().clock.advance(5 * 60_000);
    const expired = await page(session.id);
    expect(expired.statusCode).toBe(410);
    expect(expired.body).toContain('This payment link has expired');
    expect(expired.body).not.toContain('<form');
    const refused = await post(session.id, { pay: 'upi', ...CUSTOMER });
    expect(refused.statusCode).toBe(410);
    expect(await paymentsOf(session.id)).toEqual([]);
  });

  it('past expires_at with a payment in progress, offers no new payment and leads back to that one', async () => {
    const account = await harness().merchant('Closing Links');
    const session = await helpers.session(account, { expires_in_minutes: 5 });
    expect((await post(session.id, { pay: 'bank:HDFC', ...CUSTOMER })).statusCode).toBe(303);
    const [started] = await paymentsOf(session.id);
    harness().clock.advance(5 * 60_000);
    const shown = await page(session.id);
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('This payment link takes no new payments');
    expect(shown.body).toContain(`/v1/payments/${started!.id}/authentication/`);
    expect(shown.body).not.toContain('<form');
    const refused = await post(session.id, { pay: 'wallet:payzapp', ...CUSTOMER });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('This payment link takes no new payments');
    expect(await paymentsOf(session.id)).toHaveLength(1);
  });

  it('starts nothing from the link of a merchant that was suspended, and takes it back when re-activated', async () => {
    const account = await harness().merchant('Suspended Shop');
    const session = await helpers.session(account);
    const { accounts } = harness().container.services;
    await harness().container.db.transaction((tx) => accounts.setStatus(tx, account.id, 'suspended'));
    const shown = await page(session.id);
    expect(shown.statusCode).toBe(403);
    expect(shown.body).toContain('This payment link is not available');
    expect(shown.body).not.toContain('<form');
    for (const pay of ['upi', 'bank:HDFC', 'wallet:payzapp']) {
      const refused = await post(session.id, { pay, ...CUSTOMER });
      expect(refused.statusCode, pay).toBe(403);
      expect(refused.body).toContain('This payment link is not available');
    }
    expect(await paymentsOf(session.id)).toEqual([]);

    await harness().container.db.transaction((tx) => accounts.setStatus(tx, account.id, 'activated'));
    expect((await page(session.id)).statusCode).toBe(200);
    expect((await post(session.id, { pay: 'bank:HDFC', ...CUSTOMER })).statusCode).toBe(303);
    expect(await paymentsOf(session.id)).toHaveLength(1);
  });

  it(`stops a session at ${CHECKOUT_MAX_ATTEMPTS} payments`, async () => {
    const session = await helpers.session(merchant, { customer: CUSTOMER });
    for (let i = 0; i < CHECKOUT_MAX_ATTEMPTS; i++) {
      expect((await post(session.id, { pay: 'bank:HDFC' })).statusCode).toBe(303);
    }
    const refused = await post(session.id, { pay: 'bank:HDFC' });
    expect(refused.statusCode).toBe(429);
    expect(refused.body).toContain('too many attempts');
    expect(await paymentsOf(session.id)).toHaveLength(CHECKOUT_MAX_ATTEMPTS);
  });

  it(`holds a session to ${CHECKOUT_MAX_ATTEMPTS} payments when its posts arrive at once`, async () => {
    const session = await helpers.session(merchant, { customer: CUSTOMER });
    const answers = await Promise.all(
      Array.from({ length: CHECKOUT_MAX_ATTEMPTS + 10 }, () => post(session.id, { pay: 'bank:HDFC' })),
    );
    const codes = answers.map((answer) => answer.statusCode);
    expect(codes.filter((code) => code === 303)).toHaveLength(CHECKOUT_MAX_ATTEMPTS);
    expect(codes.filter((code) => code === 429)).toHaveLength(10);
    for (const answer of answers.filter((reply) => reply.statusCode === 429))
      expect(answer.body).toContain('too many attempts');
    expect(await paymentsOf(session.id)).toHaveLength(CHECKOUT_MAX_ATTEMPTS);
  });

  it('tells the customer of a second payment that took money after the order was paid, and when it is back', async () => {
    const session = await helpers.session(merchant, { customer: CUSTOMER });
    // Two tabs: a bank payment left at the bank, then a wallet payment that pays the order.
    expect((await post(session.id, { pay: 'bank:HDFC' })).statusCode).toBe(303);
    expect((await post(session.id, { pay: 'wallet:payzapp' })).statusCode).toBe(303);
    const [first, second] = await paymentsOf(session.id);
    const firstToken = await openPage(harness(), first!.id);
    await choose(harness(), second!.id, await openPage(harness(), second!.id), 'success');
    // The capture completed the session in its own transaction, before any read of it.
    const [row] = await harness().container.db.query<{ status: string; payment_id: string }>(
      'SELECT status, payment_id FROM checkout_sessions WHERE id = $1',
      [session.id],
    );
    expect(row).toEqual({ status: 'completed', payment_id: second!.id });
    expect((await page(session.id)).body).not.toContain('id="owed-back"');
    // The first tab's bank says yes after all: the money is taken, and owed back.
    await choose(harness(), first!.id, firstToken, 'success');
    const told = await page(session.id);
    expect(told.body).toContain('<h2 class="done">This order is paid</h2>');
    expect(told.body).toContain(`(payment ${second!.id})`);
    expect(told.body).toContain('id="owed-back"');
    expect(told.body).toContain(`₹50.00 (payment ${first!.id}): being refunded to the account it came from.`);

    const { jobs } = harness().container;
    for (let i = 0; i < 3; i++) {
      harness().clock.advance(60_000);
      await jobs.paymentSync.run(new AbortController().signal);
      await jobs.refundSync.run(new AbortController().signal);
    }
    const owed = (await harness().request('GET', `/v1/payments/${first!.id}/`, { auth: merchant })).json()
      .data;
    expect(owed).toMatchObject({ status: 'failed', error_code: 'order_already_paid', amount_refunded: 5000 });
    expect((await page(session.id)).body).toContain(
      `₹50.00 (payment ${first!.id}): refunded to the account it came from.`,
    );
  });
});
