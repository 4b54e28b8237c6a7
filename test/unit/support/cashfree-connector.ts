import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { createCashfreeConnector } from '../../../src/connectors/cashfree/cashfree.connector.js';
import type {
  Connector,
  ConnectorPayment,
  InitiateResult,
  NextStep,
} from '../../../src/connectors/connector.js';
import { connectorPayment } from '../../helpers/connector-objects.js';
import { FakeCashfree, type FakeCashfreeOrder } from '../../helpers/providers/cashfree-fake.js';

/**
 * What the Cashfree connector's tests against FakeCashfree share (test/unit/cashfree-connector*.test.ts):
 * the fake and a connector on it, the fake's settings reset before each test, and a payment walked
 * through the fake's bank page.
 */

export function started(result: InitiateResult) {
  if (result.outcome !== 'started') throw new Error(`not started: ${JSON.stringify(result)}`);
  return result;
}

/** A FakeCashfree, and a connector on it with a 1 s timeout (the fake's `timeout` fault holds 2.5 s). */
async function startCashfreeFake(): Promise<{ fake: FakeCashfree; connector: Connector }> {
  const fake = await FakeCashfree.start();
  fake.timeoutMs = 2_500;
  const connector = createCashfreeConnector({
    baseUrl: fake.url,
    credentials: { client_id: fake.clientId, client_secret: fake.clientSecret },
    timeoutMs: 1_000,
  });
  return { fake, connector };
}

/** The fake's settings back to what each test starts from. */
function resetCashfreeFake(fake: FakeCashfree): void {
  fake.faults = {};
  fake.refundOutcome = 'PENDING';
  fake.replayIdempotencyKeys = true;
  fake.duplicateRefundAnswer = { status: 409, code: 'refund_already_exists' };
  fake.webhookTiming = 'none';
  fake.webhookUrl = undefined;
  fake.disabledBanks.clear();
}

/**
 * The hooks of a suite against FakeCashfree, registered where it is called: the fake and its
 * connector started once and handed to `use`, the fake's settings reset before each test, the fake
 * closed after the suite.
 */
export function useCashfreeFake(use: (started: { fake: FakeCashfree; connector: Connector }) => void): void {
  let fake: FakeCashfree | undefined;
  beforeAll(async () => {
    const started = await startCashfreeFake();
    fake = started.fake;
    use(started);
  });
  afterAll(async () => {
    await fake?.close();
  });
  beforeEach(() => {
    if (fake) resetCashfreeFake(fake);
  });
}

/** A payment's steps through the fake; `current` is read at each call (the fake starts in `beforeAll`). */
export function cashfreeSteps(current: () => { fake: FakeCashfree; connector: Connector }) {
  const orderOf = (payment: ConnectorPayment): FakeCashfreeOrder => {
    const orders = current().fake.ordersFor(payment.id);
    expect(orders).toHaveLength(1);
    return orders[0] as FakeCashfreeOrder;
  };

  /** The browser at the bank's page, arriving the way Cashfree said (a POST form or a GET link). */
  async function visitBank(next: NextStep): Promise<string> {
    const response =
      next.kind === 'form'
        ? await fetch(next.url, { method: 'POST', body: new URLSearchParams(next.fields) })
        : next.kind === 'redirect'
          ? await fetch(next.url)
          : undefined;
    if (!response) throw new Error(`no page for ${next.kind}`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('value="success"');
    return html;
  }

  /** The customer's choice on the bank's page (the fake's `/bank/<id>/decide`). */
  async function decide(cfPaymentId: unknown, choice: 'success' | 'failure' | 'pending' | 'drop') {
    return fetch(`${current().fake.origin}/bank/${String(cfPaymentId)}/decide`, {
      method: 'POST',
      body: new URLSearchParams({ choice }),
      redirect: 'manual',
    });
  }

  async function pay(
    overrides: Partial<ConnectorPayment> = {},
    choice: 'success' | 'failure' | 'pending' | 'drop' = 'success',
  ): Promise<ConnectorPayment> {
    const payment = connectorPayment(overrides);
    const result = started(await current().connector.initiate(payment));
    await visitBank(result.next);
    const back = await decide(result.data?.cf_payment_id, choice);
    expect(back.status).toBe(302);
    return payment;
  }

  return { orderOf, visitBank, decide, pay };
}
