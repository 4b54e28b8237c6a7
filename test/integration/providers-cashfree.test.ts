import { afterAll, beforeAll } from 'vitest';
import { CASHFREE_ERRORS } from '../../src/connectors/cashfree/cashfree.tables.js';
import { FakeCashfree } from '../helpers/providers/cashfree-fake.js';
import type { Phase } from '../helpers/providers/provider-under-test.js';
import { providerSuite } from '../helpers/providers/suite.js';

/** Cashfree, as a merchant's live provider account, against its local fake (docs/connectors.md). */
let fake: FakeCashfree;
beforeAll(async () => {
  fake = await FakeCashfree.start();
});
afterAll(() => fake?.close());

const ENDPOINTS: Record<Phase, 'create' | 'pay' | 'status' | 'refund'> = {
  initiate: 'create',
  pay: 'pay',
  status: 'status',
  refund: 'refund',
};
const orderOf = (paymentId: string) => {
  const [order] = fake.ordersFor(paymentId);
  if (!order) throw new Error(`no Cashfree order for ${paymentId}`);
  return order;
};

providerSuite(() => ({
  name: 'cashfree',
  env: () => ({ KOSH_CASHFREE_BASE_URL: fake.url }),
  get credentials() {
    return { client_id: fake.clientId, client_secret: fake.clientSecret };
  },
  bank: 'HDFC',
  wallet: 'phonepe',
  declineCode: CASHFREE_ERRORS.TRANSACTION_DECLINED?.code ?? 'missing',
  setWebhookUrl: (url) => {
    fake.webhookUrl = url;
  },
  setWebhookTiming: (timing) => {
    fake.webhookTiming = timing;
  },
  setFault: (phase, fault) => {
    if (fault) fake.faults[ENDPOINTS[phase]] = fault;
    else delete fake.faults[ENDPOINTS[phase]];
  },
  setRefundOutcome: (outcome) => {
    fake.refundOutcome = outcome === 'processed' ? 'SUCCESS' : 'PENDING';
  },
  setOffer: (paise) => {
    fake.offerPaise = paise;
  },
  settleRefunds: () => fake.settleRefunds('SUCCESS'),
  refundsMadeFor: (refundId) => fake.refundsFor(refundId).length,
  ordersFor: (paymentId) => fake.ordersFor(paymentId).length,
  attemptsFor: (paymentId) =>
    fake
      .ordersFor(paymentId)
      .flatMap((order) => order.payments.map((attempt) => ({ captured: attempt.status === 'SUCCESS' }))),
  sendRefundWebhook: (refundId) => fake.sendRefundWebhook(refundId),
  sendForgedWebhook: (paymentId) => fake.sendWebhook(orderOf(paymentId), { signature: 'Zm9yZ2Vk' }),
  close: () => fake.close(),
}));
