import { beforeAll, expect, it } from 'vitest';
import { upiMethods } from '../../src/modules/methods/methods.js';
import { CUSTOMER, checkoutHelpers } from '../helpers/checkout.js';
import { dashboardHelpers, Visitor } from '../helpers/dashboard-visitor.js';
import { describeEachDatabase, type Harness, type TestAccount } from '../helpers/harness.js';
import { choose, createPayment, openPage } from '../helpers/payments.js';
import { startSecondHost } from '../helpers/second-host.js';
import { drain } from '../helpers/webhook-events.js';

/**
 * The dashboard's payment pages: filters, search and the CSV export, UPI details, events and
 * deliveries with Resend and Refund (one refund per rendering of its form), and the cost of a page
 * of a 10,000-payment account.
 */
describeEachDatabase('dashboard', (harness) => {
  let merchant: TestAccount;
  let email: string;
  const { nextAddress, userFor, signedIn, captured } = dashboardHelpers(harness, () => ({ merchant, email }));

  beforeAll(async () => {
    merchant = await harness().merchant('Dashboard Shop');
    email = await userFor(merchant);
  });

  it('lists payments with filters and search, pages through them, and exports the filtered list as the API lists it', async () => {
    const shop = await harness().merchant('Filter Shop');
    const visitor = await signedIn(shop);
    const made: string[] = [];
    for (let i = 0; i < 3; i++)
      made.push((await captured(shop, { email: `buyer${i}@example.com` })).paymentId);
    const walletPayment = (
      await createPayment(harness(), shop, { method: 'wallet', bank: undefined, wallet: 'PAYZAPP' })
    ).paymentId;

    const all = await visitor.request('GET', '/dashboard/payments/');
    for (const id of [...made, walletPayment]) expect(all.body).toContain(id);
    const capturedOnly = await visitor.request(
      'GET',
      '/dashboard/payments/?status=captured&method=netbanking',
    );
    expect(capturedOnly.body).not.toContain(walletPayment);
    for (const id of made) expect(capturedOnly.body).toContain(id);
    const byEmail = await visitor.request('GET', '/dashboard/payments/?q=buyer1%40example.com');
    expect(byEmail.body).toContain(made[1]);
    expect(byEmail.body).not.toContain(made[0]);
    const byId = await visitor.request('GET', `/dashboard/payments/?q=${made[2]}`);
    expect(byId.body).toContain(made[2]);
    expect(byId.body).not.toContain(made[0]);
    const byWallet = await visitor.request('GET', '/dashboard/payments/?wallet=PAYZAPP');
    expect(byWallet.body).toContain(walletPayment);
    expect(byWallet.body).not.toContain(made[0]);
    const bad = await visitor.request('GET', '/dashboard/payments/?status=paid');
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toMatch(/^text\/html/);

    const csv = await visitor.request('GET', '/dashboard/payments/export.csv?status=captured');
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const api = await harness().request('GET', '/v1/payments/?status=captured&limit=100', { auth: shop });
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toMatch(/^id,order_id,amount,currency,status/);
    expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual(
      api.json().data.map((payment: { id: string }) => payment.id),
    );
    expect(lines.slice(1).map((line) => line.split(',')[2])).toEqual(
      api.json().data.map((payment: { amount: number }) => String(payment.amount)),
    );
  });

  it('filters UPI payments and shows their flow and masked UPI id, never the whole id', async () => {
    const shop = await harness().merchant('UPI Shop');
    const { methods } = harness().container.services;
    const current = await methods.get(shop.id, 'test');
    await methods.set(harness().container.db, shop.id, 'test', { ...current, upi: upiMethods(true, true) });
    const visitor = await signedIn(shop);
    const netbanking = (await captured(shop)).paymentId;
    const upi = { method: 'upi', bank: undefined, return_url: undefined };
    const intent = (await createPayment(harness(), shop, { ...upi, upi: { flow: 'intent' } })).paymentId;
    const collect = (
      await createPayment(harness(), shop, { ...upi, upi: { flow: 'collect', vpa: 'asha.rao@okaxis' } })
    ).paymentId;

    const list = await visitor.request('GET', '/dashboard/payments/?method=upi');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('<option selected>upi</option>');
    expect(list.body).not.toContain(netbanking);
    expect(list.body).toContain(intent);
    expect(list.body).toContain('upi · intent');
    expect(list.body).toContain('upi · collect · as******@okaxis');
    expect(list.body).not.toContain('asha.rao@okaxis');

    const detail = await visitor.request('GET', `/dashboard/payments/${collect}/`);
    expect(detail.body).toMatch(/<dt>UPI flow<\/dt><dd>collect<\/dd>/);
    expect(detail.body).toMatch(/<dt>Request to<\/dt><dd>as\*{6}@okaxis<\/dd>/);
    expect(detail.body).toMatch(/<dt>Expires<\/dt><dd>\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/dd>/);
    expect(detail.body).not.toContain('<dt>Bank</dt>');
    expect(detail.body).not.toContain('asha.rao@okaxis');

    const settings = await visitor.request('GET', '/dashboard/settings/');
    expect(settings.body).toMatch(/<dt>UPI<\/dt><dd>intent and QR, collect<\/dd>/);
  });

  it('shows a payment with its events and deliveries; Resend makes a new delivery; Refund ends processed', async () => {
    const visitor = await signedIn();
    const endpoint = await harness().request('POST', '/v1/webhooks/', {
      auth: merchant,
      json: { url: 'http://127.0.0.1:9/never', enabled_events: ['payment.captured'] },
    });
    expect(endpoint.statusCode, endpoint.body).toBe(200);
    const { paymentId } = await captured();
    await drain(harness());

    const detail = await visitor.request('GET', `/dashboard/payments/${paymentId}/`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain('payment.captured');
    expect(detail.body).toContain('data-delivery="msg_');
    const eventId = /data-event="(evt_[^"]+)"/.exec(
      detail.body.slice(detail.body.indexOf('payment.captured') - 400),
    )?.[1];
    expect(eventId).toBeDefined();
    const attempts = async () =>
      Number(
        (
          await harness().container.db.query<{ n: string }>(
            'SELECT count(*) AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.event_id = $1',
            [eventId],
          )
        )[0]!.n,
      );
    const before = await attempts();
    expect(before).toBeGreaterThan(0);
    const resent = await visitor.request('POST', `/dashboard/events/${eventId}/resend/`, {
      csrf: visitor.csrf,
    });
    expect(resent.statusCode, resent.body).toBe(303);
    await drain(harness());
    expect(await attempts()).toBe(before + 1);

    const refunded = await visitor.submit(
      `/dashboard/payments/${paymentId}/`,
      `/dashboard/payments/${paymentId}/refunds/`,
      {
        amount: 2000,
      },
    );
    expect(refunded.statusCode, refunded.body).toBe(303);
    expect(refunded.headers.location).toBe(`/dashboard/payments/${paymentId}/?done=refunded`);
    harness().clock.advance(120_000);
    await harness().container.jobs.refundSync.run(new AbortController().signal);
    const refunds = await harness().request('GET', `/v1/payments/${paymentId}/refunds/`, { auth: merchant });
    expect(refunds.json().data).toMatchObject([{ amount: 2000, status: 'processed' }]);
    const after = await visitor.request('GET', `/dashboard/payments/${paymentId}/?done=refunded`);
    expect(after.body).toContain('Refund created.');
    expect(after.body).toContain('processed');
  });

  it('makes at most one refund per rendering of the Refund form, however often and however fast it is posted', async () => {
    const visitor = await signedIn();
    const { paymentId } = await captured();
    const page = `/dashboard/payments/${paymentId}/`;
    const action = `${page}refunds/`;
    const refunds = async () =>
      (await harness().request('GET', `/v1/payments/${paymentId}/refunds/`, { auth: merchant })).json()
        .data as { id: string; amount: number }[];

    // A resubmit: one rendering of the form, posted again after the first answer.
    expect((await visitor.request('GET', page)).statusCode).toBe(200);
    const resubmitted = { ...visitor.formFields(action), amount: 100 };
    for (let i = 0; i < 2; i++) {
      const answer = await visitor.request('POST', action, resubmitted);
      expect(answer.statusCode, answer.body).toBe(303);
      expect(answer.headers.location).toBe(`${page}?done=refunded`);
    }
    expect(await refunds()).toHaveLength(1);

    // A double-click: another rendering, posted several times at once.
    expect((await visitor.request('GET', page)).statusCode).toBe(200);
    const clicked = { ...visitor.formFields(action), amount: 100 };
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => visitor.request('POST', action, clicked)),
    );
    for (const answer of answers) {
      expect(answer.statusCode, answer.body).toBe(303);
      expect(answer.headers.location).toBe(`${page}?done=refunded`);
    }
    expect(await refunds()).toHaveLength(2);

    // Across hosts (PostgreSQL): the database, not one process's memory, turns the duplicates away.
    let expected = 2;
    if (harness().kind === 'postgres') {
      const second = await startSecondHost(harness());
      try {
        const there = new Visitor(() => ({ app: second.app }) as Harness, visitor.address);
        there.cookies = visitor.cookies;
        expect((await visitor.request('GET', page)).statusCode).toBe(200);
        const rendered = { ...visitor.formFields(action), amount: 100 };
        const both = await Promise.all(
          [visitor, there, visitor, there].map((host) => host.request('POST', action, rendered)),
        );
        for (const answer of both) {
          expect(answer.statusCode, answer.body).toBe(303);
          expect(answer.headers.location).toBe(`${page}?done=refunded`);
        }
        expected = 3;
      } finally {
        await second.close();
      }
    }
    const made = await refunds();
    expect(made.map((refund) => refund.amount)).toEqual(Array(expected).fill(100));
    const payment = await harness().request('GET', `/v1/payments/${paymentId}/`, { auth: merchant });
    expect(payment.json().data.amount_refunded).toBe(100 * expected);

    // The same rendering with another amount, and a page without the form's key (rendered before
    // it had one): a clear refusal, and nothing more is refunded.
    const changed = await visitor.request('POST', action, { ...clicked, amount: 300 });
    expect(changed.statusCode).toBe(422);
    expect(changed.body).toContain('already sent');
    const old = await visitor.request('POST', action, { csrf: visitor.csrf, amount: 100 });
    expect(old.statusCode).toBe(400);
    expect(old.headers['content-type']).toMatch(/^text\/html/);
    expect(old.body).toContain('reload the page');
    expect(await refunds()).toHaveLength(expected);
  });

  it('shows the checkout session a payment was started from, and no such row on an S2S payment', async () => {
    const visitor = await signedIn();
    const session = await checkoutHelpers(harness).session(merchant);
    const started = await harness().container.services.checkout.startPayment(session.id, {
      method: 'netbanking',
      bank: 'ICIC',
      ...CUSTOMER,
    });
    const detail = await visitor.request('GET', `/dashboard/payments/${started.payment_id}/`);
    expect(detail.statusCode, detail.body).toBe(200);
    expect(detail.body).toContain(
      `<dt>Checkout session</dt><dd><span class="mono">${session.id}</span></dd>`,
    );

    const { paymentId } = await createPayment(harness(), merchant);
    const s2s = await visitor.request('GET', `/dashboard/payments/${paymentId}/`);
    expect(s2s.statusCode, s2s.body).toBe(200);
    expect(s2s.body).not.toContain('Checkout session');
  });

  it('answers a page of a 10,000-payment account as fast as a small one: lists are paged, never loaded whole', async () => {
    const shop = await harness().merchant('Busy Shop');
    const visitor = await signedIn(shop);
    const { paymentId } = await createPayment(harness(), shop);
    await choose(harness(), paymentId, await openPage(harness(), paymentId), 'failure');
    // 9,999 more failed payments like it (ids sort after it), copied in one statement.
    const columns = (
      await harness().container.db.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns
          WHERE table_schema = 'public' AND table_name = 'payments' ORDER BY ordinal_position`,
      )
    ).map((row) => row.column_name);
    const copied = columns.map((column) =>
      column === 'id'
        ? `'pay_' || lpad(n::text, 26, '0')`
        : column === 'created_at'
          ? 'p.created_at + make_interval(secs => n)'
          : `p."${column}"`,
    );
    await harness().container.db.query(
      `INSERT INTO payments (${columns.map((column) => `"${column}"`).join(', ')})
       SELECT ${copied.join(', ')} FROM payments p, generate_series(1, 9999) n WHERE p.id = $1`,
      [paymentId],
    );
    const timed = async (url: string) => {
      harness().queries.trips.length = 0;
      const started = performance.now();
      const response = await visitor.request('GET', url);
      const ms = performance.now() - started;
      expect(response.statusCode, `${url}: ${response.body.slice(0, 300)}`).toBe(200);
      return { ms, response, trips: harness().queries.trips.length };
    };
    // Warm: plans and caches, as on a server that has been serving.
    await timed('/dashboard/payments/');
    for (const url of [
      '/dashboard/payments/',
      '/dashboard/',
      '/dashboard/payments/?status=failed&method=netbanking',
    ]) {
      const { ms, response, trips } = await timed(url);
      process.stdout.write(
        `[dashboard] ${harness().kind} ${url} with 10,000 payments: ${ms.toFixed(0)} ms, ${trips} queries\n`,
      );
      expect(ms, url).toBeLessThan(1_000);
      expect(trips, url).toBeLessThanOrEqual(4);
      if (url.startsWith('/dashboard/payments/')) {
        expect(response.body.match(/<tr>/g)).toHaveLength(26); // the heading and one page of 25
        expect(response.body).toContain('Next page');
      }
    }
  }, 60_000);

  it('reads the deliveries of the payment page and the webhooks page in one statement, however many rows', async () => {
    const shop = await harness().merchant('Round Trip Shop');
    const visitor = new Visitor(harness, nextAddress());
    expect((await visitor.login(await userFor(shop))).statusCode).toBe(303);
    const addEndpoint = async (path: string) => {
      const endpoint = await harness().request('POST', '/v1/webhooks/', {
        auth: shop,
        json: { url: `http://127.0.0.1:9/${path}`, enabled_events: ['payment.captured', 'payment.failed'] },
      });
      expect(endpoint.statusCode, endpoint.body).toBe(200);
    };
    const deliveryReads = async (path: string) => {
      harness().queries.reset();
      const response = await visitor.request('GET', path);
      expect(response.statusCode, response.body).toBe(200);
      const trips = harness().queries.trips.map((trip) => trip.text);
      return {
        trips: trips.length,
        deliveries: trips.filter((text) => /FROM webhook_deliveries/.test(text)),
      };
    };

    await addEndpoint('one');
    const { paymentId } = await captured(shop);
    await drain(harness());
    const one = await deliveryReads('/dashboard/webhooks/');
    for (const path of ['two', 'three', 'four']) await addEndpoint(path);
    const { paymentId: second } = await captured(shop);
    await drain(harness());
    const four = await deliveryReads('/dashboard/webhooks/');
    expect(four.deliveries).toHaveLength(1);
    expect(four.trips).toBe(one.trips);

    const detail = await deliveryReads(`/dashboard/payments/${paymentId}/`);
    expect(detail.deliveries).toHaveLength(1);
    expect((await deliveryReads(`/dashboard/payments/${second}/`)).trips).toBe(detail.trips);
  });

  it('pages what a page lists past its first 100: a payment’s refunds, an order’s payments, the webhook endpoints', async () => {
    const shop = await harness().merchant('Many Rows Shop');
    const visitor = await signedIn(shop);
    const { paymentId } = await captured(shop);
    /** `count` requests, ten at a time; each must succeed. */
    const make = async (
      count: number,
      send: (index: number) => Promise<{ statusCode: number; body: string }>,
    ) => {
      for (let start = 0; start < count; start += 10) {
        const batch = Array.from({ length: Math.min(10, count - start) }, (_, i) => send(start + i));
        for (const answer of await Promise.all(batch)) expect(answer.statusCode, answer.body).toBe(200);
      }
    };
    /** The page's ids of `prefix`, and where its "More …" link (`label`) leads, if it has one. */
    const read = async (path: string, prefix: string, label: string) => {
      const page = await visitor.request('GET', path);
      expect(page.statusCode, page.body).toBe(200);
      const ids = new Set(page.body.match(new RegExp(`${prefix}_[A-Za-z0-9]+`, 'g')));
      const next = new RegExp(`href="([^"]+)">${label}<`).exec(page.body)?.[1]?.replaceAll('&amp;', '&');
      return { ids, next };
    };
    const pagesThrough = async (path: string, prefix: string, label: string, made: number) => {
      const first = await read(path, prefix, label);
      expect(first.next, `${path} links to the rest`).toBeDefined();
      const second = await read(first.next as string, prefix, label);
      expect(second.next).toBeUndefined();
      const all = new Set([...first.ids, ...second.ids]);
      expect(all.size).toBe(made);
      expect([...second.ids].filter((id) => first.ids.has(id))).toEqual([]);
    };

    await make(101, () =>
      harness().request('POST', `/v1/payments/${paymentId}/refunds/`, { auth: shop, json: { amount: 1 } }),
    );
    await pagesThrough(`/dashboard/payments/${paymentId}/`, 'rfnd', 'More refunds', 101);

    // An order the customer tried to pay 101 times (each attempt left at the bank).
    const tried = (await createPayment(harness(), shop)).orderId;
    for (let start = 0; start < 100; start += 10)
      await Promise.all(Array.from({ length: 10 }, () => createPayment(harness(), shop, {}, tried)));
    await pagesThrough(`/dashboard/orders/${tried}/`, 'pay', 'More payments', 101);

    await make(101, (index) =>
      harness().request('POST', '/v1/webhooks/', {
        auth: shop,
        json: { url: `http://127.0.0.1:9/many/${index}` },
      }),
    );
    await pagesThrough('/dashboard/webhooks/', 'whk', 'More endpoints', 101);
  });
});
