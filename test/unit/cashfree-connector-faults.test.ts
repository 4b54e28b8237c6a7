import { describe, expect, it } from 'vitest';
import { createCashfreeConnector } from '../../src/connectors/cashfree/cashfree.connector.js';
import type { Connector } from '../../src/connectors/connector.js';
import { connectorPayment, connectorRefund } from '../helpers/connector-objects.js';
import type { CashfreeFault, FakeCashfree } from '../helpers/providers/cashfree-fake.js';
import { cashfreeSteps, started, useCashfreeFake } from './support/cashfree-connector.js';

/**
 * The Cashfree connector against FakeCashfree: answers that cannot be read (unknown, never failed)
 * and wrong credentials.
 */

describe('Cashfree connector against FakeCashfree', () => {
  let fake: FakeCashfree;
  let connector: Connector;

  useCashfreeFake((suite) => {
    ({ fake, connector } = suite);
  });

  const { orderOf, pay } = cashfreeSteps(() => ({ fake, connector }));

  describe('an answer that cannot be read is unknown, never failed', () => {
    const FAULTS: CashfreeFault[] = ['timeout', 'bad_gateway_html', 'garbage', 'reset'];

    it.each(FAULTS)('create order: %s', async (fault) => {
      const payment = connectorPayment();
      fake.faults.create = fault;
      const result = await connector.initiate(payment);
      expect(result.outcome).toBe('unknown');
      // The fake acted before the answer was lost: the order is there, and only one.
      expect(fake.ordersFor(payment.id)).toHaveLength(1);
      fake.faults = {};
      started(await connector.initiate(payment));
      expect(fake.ordersFor(payment.id)).toHaveLength(1);
    });

    it.each(FAULTS)('start the payment: %s', async (fault) => {
      const payment = connectorPayment();
      fake.faults.pay = fault;
      expect((await connector.initiate(payment)).outcome).toBe('unknown');
      expect(orderOf(payment).payments).toHaveLength(1);
      fake.faults = {};
      expect((await connector.status(payment)).outcome).toBe('not_started');
    });

    it.each(FAULTS)('status: %s', async (fault) => {
      const payment = await pay({}, 'failure');
      fake.faults.status = fault;
      const status = await connector.status(payment);
      expect(status.outcome).toBe('unknown');
      expect(status.errorCode).toBeUndefined();
      fake.faults = {};
      expect((await connector.status(payment)).outcome).toBe('failed');
    });

    it.each(FAULTS)('refund: %s', async (fault) => {
      const payment = await pay();
      const refund = connectorRefund(payment);
      fake.faults.refund = fault;
      expect((await connector.refund(refund)).outcome).toBe('unknown');
      expect(fake.refundsFor(refund.id)).toHaveLength(1);
      fake.faults = {};
      expect((await connector.refund(refund)).outcome).toBe('pending');
      expect(fake.refundsFor(refund.id)).toHaveLength(1);
    });

    it.each(FAULTS)('refund status: %s', async (fault) => {
      const payment = await pay();
      const refund = connectorRefund(payment);
      await connector.refund(refund);
      fake.faults.refundStatus = fault;
      expect((await connector.refundStatus(refund)).outcome).toBe('unknown');
      fake.faults = {};
      expect((await connector.refundStatus(refund)).outcome).toBe('pending');
    });
  });

  describe('wrong credentials', () => {
    it.each([
      ['client secret', (id: string) => ({ client_id: id, client_secret: 'cfsk_wrong' })],
      ['client id', () => ({ client_id: 'cf_app_wrong', client_secret: fake.clientSecret })],
    ])('a wrong %s is never a success', async (_, credentials) => {
      const wrong = createCashfreeConnector({
        baseUrl: fake.url,
        credentials: credentials(fake.clientId),
        timeoutMs: 1_000,
      });
      const payment = connectorPayment();
      const result = await wrong.initiate(payment);
      expect(result).toMatchObject({ outcome: 'failed', errorCode: 'provider_authentication_failed' });
      expect(fake.ordersFor(payment.id)).toHaveLength(0);

      const paid = await pay();
      expect((await wrong.status(paid)).outcome).toBe('unknown');
      const refund = connectorRefund(paid);
      expect(await wrong.refund(refund)).toMatchObject({
        outcome: 'failed',
        errorCode: 'provider_authentication_failed',
      });
      expect(fake.refundsFor(refund.id)).toHaveLength(0);
      expect((await wrong.refundStatus(refund)).outcome).toBe('unknown');
    });

    it('a webhook signed with another secret is not verified', async () => {
      const payment = await pay();
      const { headers, body } = fake.buildWebhook(orderOf(payment));
      const other = createCashfreeConnector({
        baseUrl: fake.url,
        credentials: { client_id: fake.clientId, client_secret: 'cfsk_other' },
      });
      expect(await other.parseWebhook?.({ headers, rawBody: Buffer.from(body) })).toMatchObject({
        verified: false,
      });
    });
  });
});
