import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase, type TestAccount } from '../helpers/harness.js';
import { choose, createOrder, createPayment, openPage } from '../helpers/payments.js';
import { drain } from '../helpers/webhook-events.js';
import { TestReceiver, verifyWebhook } from '../helpers/webhook-receiver.js';

type Json = Record<string, unknown>;

/** docs/refunds.md: KOSH_SANDBOX_REFUND_SECONDS is 5 by default; the suite moves its clock past it. */
const REFUND_SECONDS = 5;
/** KOSH_SYNC_LEASE_MS for this file (the default is a minute). */
const LEASE_MS = 20_000;

/**
 * Refunds over HTTP in the sandbox: full and partial, the captured amount never exceeded, the
 * payment states and amounts refused (nothing written), tenant and mode scoping, idempotency,
 * `pending → processed | failed` with its webhooks verified by the official `standardwebhooks`
 * package, the lists, and 50 refunds at once.
 */
describeEachDatabase(
  'refunds',
  (harness) => {
    let merchant: TestAccount;
    let receiver: TestReceiver;
    let secret: string;

    beforeAll(async () => {
      merchant = await harness().merchant('Refund Shop');
      receiver = await TestReceiver.start(() => harness().clock.now());
      const endpoint = await harness().request('POST', '/v1/webhooks/', {
        auth: merchant,
        json: {
          url: receiver.url('/hooks'),
          enabled_events: ['refund.created', 'refund.processed', 'refund.failed'],
        },
      });
      expect(endpoint.statusCode, endpoint.body).toBe(200);
      secret = endpoint.json().data.secret;
    });
    afterAll(async () => {
      await receiver?.close();
    });

    /** A payment the sandbox bank captured; returns its id and order id. */
    async function captured(amount = 5000, account = merchant) {
      const orderId = await createOrder(harness(), account, amount);
      const { paymentId } = await createPayment(harness(), account, { amount }, orderId);
      const chosen = await choose(harness(), paymentId, await openPage(harness(), paymentId), 'success');
      expect(chosen.statusCode).toBe(200);
      return { paymentId, orderId };
    }

    const refund = (
      paymentId: string,
      json: unknown = {},
      options: { account?: TestAccount; key?: string } = {},
    ) =>
      harness().request('POST', `/v1/payments/${paymentId}/refunds/`, {
        auth: options.account ?? merchant,
        json,
        headers: options.key ? { 'idempotency-key': options.key } : {},
      });

    const get = async (path: string, account = merchant) => {
      const response = await harness().request('GET', path, { auth: account });
      expect(response.statusCode, response.body).toBe(200);
      return response.json().data;
    };

    /** Everything a refused request could have written: refunds, the payment's sum, events. */
    async function written(paymentId: string) {
      const [row] = await harness().container.db.query<{ refunds: string; refunded: string; events: string }>(
        `SELECT (SELECT count(*) FROM refunds WHERE payment_id = $1) AS refunds,
              (SELECT amount_refunded FROM payments WHERE id = $1) AS refunded,
              (SELECT count(*) FROM events WHERE account_id = $2) AS events`,
        [paymentId, merchant.id],
      );
      return row;
    }

    const syncRefunds = async () => {
      harness().clock.advance((REFUND_SECONDS + 1) * 1000);
      // The request that made a refund holds it for a lease; past that the reconciler asks.
      harness().clock.advance(60_000);
      return harness().container.jobs.refundSync.run(new AbortController().signal);
    };

    it('refunds a payment in full by default: the refund is pending, the payment stays captured and counts it', async () => {
      const { paymentId, orderId } = await captured(5000);
      const response = await refund(paymentId);
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json();
      expect(body.message).toEqual(expect.any(String));
      expect(body.data).toEqual({
        id: expect.stringMatching(/^rfnd_[0-9a-z]{26}$/),
        entity: 'refund',
        payment_id: paymentId,
        order_id: orderId,
        amount: 5000,
        currency: 'INR',
        status: 'pending',
        speed: 'normal',
        receipt: null,
        metadata: {},
        error_code: null,
        error_reason: null,
        created_at: expect.any(Number),
        processed_at: null,
      });
      expect(await get(`/v1/refunds/${body.data.id}/`)).toEqual(body.data);
      expect(await get(`/v1/payments/${paymentId}/`)).toMatchObject({
        status: 'captured',
        amount_refunded: 5000,
        refund_status: 'full',
      });
      expect(await get(`/v1/orders/${orderId}/`)).toMatchObject({ status: 'paid', amount_paid: 5000 });
      const before = await written(paymentId);
      const again = await refund(paymentId);
      expect(again.statusCode).toBe(400);
      expect(again.json().error).toMatchObject({ code: 'refund_exceeds_captured' });
      // No amount was sent: no field is blamed.
      expect(again.json().error.field).toBeNull();
      expect(await written(paymentId)).toEqual(before);
    });

    it('takes partial refunds while their sum fits, refuses the one that would pass the captured amount, writing nothing', async () => {
      const { paymentId } = await captured(5000);
      const first = await refund(paymentId, {
        amount: 2000,
        receipt: 'rf-1',
        speed: 'instant',
        metadata: { reason: 'damaged' },
      });
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json().data).toMatchObject({
        amount: 2000,
        receipt: 'rf-1',
        speed: 'instant',
        metadata: { reason: 'damaged' },
      });
      expect((await refund(paymentId, { amount: 2000 })).statusCode).toBe(200);
      expect(await get(`/v1/payments/${paymentId}/`)).toMatchObject({
        amount_refunded: 4000,
        refund_status: 'partial',
      });

      const before = await written(paymentId);
      const third = await refund(paymentId, { amount: 1001 });
      expect(third.statusCode).toBe(400);
      expect(third.json().error.code).toBe('refund_exceeds_captured');
      expect(third.json().error.message).toContain('1000');
      expect(await written(paymentId)).toEqual(before);

      const rest = await refund(paymentId);
      expect(rest.statusCode, rest.body).toBe(200);
      expect(rest.json().data.amount).toBe(1000);
      expect(await get(`/v1/payments/${paymentId}/`)).toMatchObject({
        amount_refunded: 5000,
        refund_status: 'full',
      });
    });

    it('refuses a refund of a failed, created or pending payment (409 payment_not_captured), writing nothing', async () => {
      const failed = (await createPayment(harness(), merchant)).paymentId;
      await choose(harness(), failed, await openPage(harness(), failed), 'failure');
      const created = (await createPayment(harness(), merchant)).paymentId;
      const pending = (await createPayment(harness(), merchant)).paymentId;
      await choose(harness(), pending, await openPage(harness(), pending), 'pending_success');
      for (const [paymentId, status] of [
        [failed, 'failed'],
        [created, 'created'],
        [pending, 'pending'],
      ] as const) {
        expect((await get(`/v1/payments/${paymentId}/`)).status).toBe(status);
        const before = await written(paymentId);
        const response = await refund(paymentId, { amount: 100 });
        expect(response.statusCode, response.body).toBe(409);
        expect(response.json().error).toMatchObject({
          code: 'payment_not_captured',
          type: 'invalid_request_error',
        });
        expect(response.json().error.message).toContain(status);
        expect(await written(paymentId)).toEqual(before);
      }
    });

    it("answers 404 for another account's payment and refund, and for an unknown payment", async () => {
      const other = await harness().merchant('Other Shop');
      const { paymentId } = await captured(3000, other);
      const before = await written(paymentId);
      const response = await refund(paymentId, { amount: 100 });
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('resource_not_found');
      expect(await written(paymentId)).toEqual(before);
      const theirs = await refund(paymentId, { amount: 100 }, { account: other });
      expect(theirs.statusCode).toBe(200);
      const id = theirs.json().data.id;
      expect((await harness().request('GET', `/v1/refunds/${id}/`, { auth: merchant })).statusCode).toBe(404);
      expect(
        (await harness().request('GET', `/v1/payments/${paymentId}/refunds/`, { auth: merchant })).statusCode,
      ).toBe(404);
      expect((await get(`/v1/refunds/?payment_id=${paymentId}`)).length).toBe(0);
      expect((await refund('pay_00000000000000000000000000', { amount: 1 })).statusCode).toBe(404);
    });

    it.each([
      ['amount 0', { amount: 0 }, 'invalid_field', 'amount'],
      ['amount -1', { amount: -1 }, 'invalid_field', 'amount'],
      ['amount 1.5', { amount: 1.5 }, 'invalid_field', 'amount'],
      ['amount "100" in JSON', { amount: '100' }, 'invalid_field', 'amount'],
      ['amount above the captured amount', { amount: 5001 }, 'refund_exceeds_captured', 'amount'],
      ['amount beyond any integer', { amount: 1e308 }, 'invalid_field', 'amount'],
      ['an unknown speed', { speed: 'fast' }, 'invalid_field', 'speed'],
      ['an empty receipt', { receipt: '' }, 'invalid_field', 'receipt'],
      ['a receipt of 41 characters', { receipt: 'r'.repeat(41) }, 'invalid_field', 'receipt'],
      ['metadata not an object', { metadata: 'x' }, 'invalid_field', 'metadata'],
      ['an unknown field', { amout: 100 }, 'unknown_field', 'amout'],
      ['a server-owned field', { status: 'processed' }, 'server_owned_field', 'status'],
      ['a server-owned payment_id', { payment_id: 'pay_x' }, 'server_owned_field', 'payment_id'],
    ])('refuses %s with a clear 400, writing nothing', async (_name, json, code, field) => {
      const { paymentId } = await captured(5000);
      const before = await written(paymentId);
      const response = await refund(paymentId, json);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.headers['content-type']).toContain('application/json');
      expect(response.json().error).toMatchObject({ code, field });
      expect(await written(paymentId)).toEqual(before);
    });

    it('takes a form body, its amount a string as forms send it', async () => {
      const { paymentId } = await captured(5000);
      const response = await harness().request('POST', `/v1/payments/${paymentId}/refunds/`, {
        auth: merchant,
        form: { amount: '100', speed: 'normal', receipt: 'form-1' },
      });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().data).toMatchObject({ amount: 100, receipt: 'form-1' });
    });

    it('keeps receipts unique per account and mode: a second refund with one is 409, nothing counted', async () => {
      const { paymentId } = await captured(5000);
      const receipt = `dup-${harness().kind}`;
      expect((await refund(paymentId, { amount: 100, receipt })).statusCode).toBe(200);
      const before = await written(paymentId);
      const response = await refund(paymentId, { amount: 100, receipt });
      expect(response.statusCode).toBe(409);
      expect(response.json().error).toMatchObject({ code: 'refund_receipt_in_use', field: 'receipt' });
      expect(await written(paymentId)).toEqual(before);
    });

    it('replays the same refund for the same Idempotency-Key; another body with it is 422', async () => {
      const { paymentId } = await captured(5000);
      const first = await refund(paymentId, { amount: 700 }, { key: `refund-key-${harness().kind}` });
      expect(first.statusCode, first.body).toBe(200);
      const replay = await refund(paymentId, { amount: 700 }, { key: `refund-key-${harness().kind}` });
      expect(replay.statusCode).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json()).toEqual(first.json());
      const other = await refund(paymentId, { amount: 800 }, { key: `refund-key-${harness().kind}` });
      expect(other.statusCode).toBe(422);
      expect(other.json().error.code).toBe('idempotency_key_reused');
      expect(await get(`/v1/payments/${paymentId}/`)).toMatchObject({ amount_refunded: 700 });
      expect(await get(`/v1/payments/${paymentId}/refunds/`)).toHaveLength(1);
    });

    it('goes pending → processed, with refund.created then refund.processed delivered and verified', async () => {
      receiver.received.length = 0;
      const { paymentId } = await captured(5000);
      const created = (await refund(paymentId, { amount: 1500 })).json().data;
      expect(created.status).toBe('pending');
      harness().clock.advance(1_000);
      // Not yet: the sandbox bank takes KOSH_SANDBOX_REFUND_SECONDS.
      expect(await syncRefunds()).toBeGreaterThan(0);
      const processed = await get(`/v1/refunds/${created.id}/`);
      expect(processed).toMatchObject({ status: 'processed', error_code: null });
      expect(processed.processed_at).toBeGreaterThanOrEqual(created.created_at);
      expect(await get(`/v1/payments/${paymentId}/`)).toMatchObject({
        status: 'captured',
        amount_refunded: 1500,
      });
      // Asked again, nothing moves: processed is final.
      await syncRefunds();
      expect(await get(`/v1/refunds/${created.id}/`)).toEqual(processed);

      await drain(harness());
      const bodies = receiver.received
        .map(
          (received) =>
            verifyWebhook(secret, received) as { type: string; data: { refund: Json; payment: Json } },
        )
        .filter((body) => body.data.refund.id === created.id);
      expect(bodies.map((body) => body.type)).toEqual(['refund.created', 'refund.processed']);
      for (const body of bodies) expect(Object.keys(body.data).sort()).toEqual(['payment', 'refund']);
      expect(bodies[0]?.data.refund).toEqual(created);
      expect(bodies[1]?.data.refund).toEqual(processed);
      expect(bodies[1]?.data.payment).toMatchObject({
        id: paymentId,
        amount_refunded: 1500,
        refund_status: 'partial',
      });
    });

    it('takes over a refund whose reconciler died holding it once KOSH_SYNC_LEASE_MS has passed, not before', async () => {
      const { paymentId } = await captured(5000);
      const made = (await refund(paymentId, { amount: 700 })).json().data;
      harness().clock.advance((REFUND_SECONDS + 1) * 1000);
      // What a reconciler's claim writes (its lease), left by a process killed before it asked the provider.
      await harness().container.db.query('UPDATE refunds SET next_sync_at = $2 WHERE id = $1', [
        made.id,
        new Date(harness().clock.now().getTime() + LEASE_MS),
      ]);
      const run = () => harness().container.jobs.refundSync.run(new AbortController().signal);
      harness().clock.advance(LEASE_MS - 1_000);
      await run();
      expect((await get(`/v1/refunds/${made.id}/`)).status).toBe('pending');
      harness().clock.advance(2_000);
      await run();
      expect((await get(`/v1/refunds/${made.id}/`)).status).toBe('processed');
    });

    it('the failing path (metadata sandbox_refund = fail) ends failed and frees its amount for another refund', async () => {
      receiver.received.length = 0;
      const { paymentId } = await captured(5000);
      const doomed = (await refund(paymentId, { metadata: { sandbox_refund: 'fail' } })).json().data;
      expect(doomed).toMatchObject({ status: 'pending', amount: 5000 });
      expect((await refund(paymentId, { amount: 1 })).statusCode).toBe(400);
      await syncRefunds();
      const failed = await get(`/v1/refunds/${doomed.id}/`);
      expect(failed).toMatchObject({
        status: 'failed',
        error_code: 'refund_declined',
        error_reason: expect.stringContaining('sandbox_refund'),
        processed_at: null,
      });
      expect(await get(`/v1/payments/${paymentId}/`)).toMatchObject({
        amount_refunded: 0,
        refund_status: null,
      });
      const retried = await refund(paymentId);
      expect(retried.statusCode, retried.body).toBe(200);
      expect(retried.json().data.amount).toBe(5000);
      await drain(harness());
      const types = receiver.received
        .map((received) => verifyWebhook(secret, received) as { type: string; data: { refund: Json } })
        .filter((body) => body.data.refund.id === doomed.id)
        .map((body) => body.type);
      expect(types).toEqual(['refund.created', 'refund.failed']);
    });

    it('lists refunds newest first, by payment and status, page by page', async () => {
      const { paymentId } = await captured(5000);
      const ids: string[] = [];
      for (const amount of [100, 200, 300]) {
        // Ids sort by the millisecond they were made in (and at random within one).
        harness().clock.advance(1);
        ids.unshift((await refund(paymentId, { amount })).json().data.id);
      }
      expect((await get(`/v1/payments/${paymentId}/refunds/`)).map((r: Json) => r.id)).toEqual(ids);
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = `?payment_id=${paymentId}&limit=1${cursor ? `&cursor=${cursor}` : ''}`;
        const response = await harness().request('GET', `/v1/refunds/${query}`, { auth: merchant });
        expect(response.statusCode, response.body).toBe(200);
        const page = response.json() as { data: Json[]; has_more: boolean; next_cursor: string | null };
        paged.push(...page.data.map((r) => String(r.id)));
        cursor = page.next_cursor;
      } while (cursor);
      expect(paged).toEqual(ids);
      await syncRefunds();
      const processed = await get(`/v1/refunds/?payment_id=${paymentId}&status=processed&limit=100`);
      expect(processed.map((r: Json) => r.id)).toEqual(ids);
      expect(await get(`/v1/refunds/?payment_id=${paymentId}&status=pending`)).toEqual([]);
      for (const query of ['status=done', 'cursor=pay_x', 'limit=0', 'colour=red']) {
        const response = await harness().request('GET', `/v1/refunds/?${query}`, { auth: merchant });
        expect(response.statusCode, query).toBe(400);
      }
      expect((await harness().request('GET', '/v1/refunds/rfnd_nope/', { auth: merchant })).statusCode).toBe(
        404,
      );
    });

    it('is in the OpenAPI document, with the statuses it answers', async () => {
      const spec = (await harness().request('GET', '/v1/openapi.json')).json();
      const create = spec.paths['/v1/payments/{id}/refunds/']?.post;
      expect(Object.keys(create?.responses ?? {})).toEqual(
        expect.arrayContaining(['200', '400', '404', '409', '422']),
      );
      expect(Object.keys(create.requestBody.content)).toEqual(
        expect.arrayContaining(['application/json', 'application/x-www-form-urlencoded']),
      );
      for (const [path, method] of [
        ['/v1/refunds/{id}/', 'get'],
        ['/v1/payments/{id}/refunds/', 'get'],
        ['/v1/refunds/', 'get'],
      ] as const) {
        expect(spec.paths[path]?.[method], `${method} ${path}`).toBeDefined();
      }
      expect(
        spec.paths['/v1/refunds/{id}/'].get.responses['200'].content['application/json'].schema,
      ).toMatchObject({
        properties: { data: { $ref: '#/components/schemas/Refund' } },
      });
      expect(spec.components.schemas.Refund.properties).toHaveProperty('processed_at');
    });

    describe('50 refunds of one payment at once', () => {
      it('exactly 40 of 1/40 each succeed; the sum is the payment amount; no payment anywhere is over-refunded', async () => {
        const { paymentId } = await captured(4000);
        const answers = await Promise.all(
          Array.from({ length: 50 }, () => refund(paymentId, { amount: 100 })),
        );
        const ok = answers.filter((answer) => answer.statusCode === 200);
        const refused = answers.filter((answer) => answer.statusCode !== 200);
        expect(ok).toHaveLength(40);
        expect(refused).toHaveLength(10);
        for (const answer of refused) expect(answer.json().error.code).toBe('refund_exceeds_captured');
        const payment = await get(`/v1/payments/${paymentId}/`);
        expect(payment).toMatchObject({ amount_refunded: 4000, refund_status: 'full' });
        expect(ok.reduce((sum, answer) => sum + answer.json().data.amount, 0)).toBe(payment.amount_refunded);
        const [count] = await harness().container.db.query<{ n: string }>(
          'SELECT count(*) AS n FROM refunds WHERE payment_id = $1',
          [paymentId],
        );
        expect(Number(count?.n)).toBe(40);
        // The invariants, asked of the whole database.
        expect(
          await harness().container.db.query(
            `SELECT p.id FROM payments p
            WHERE (SELECT coalesce(sum(r.amount), 0) FROM refunds r WHERE r.payment_id = p.id AND r.status <> 'failed') > p.amount
               OR (SELECT coalesce(sum(r.amount), 0) FROM refunds r WHERE r.payment_id = p.id AND r.status <> 'failed') <> p.amount_refunded`,
          ),
        ).toEqual([]);
      });
    });
  },
  { KOSH_SYNC_LEASE_MS: String(LEASE_MS) },
);
