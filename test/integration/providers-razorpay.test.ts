import { afterAll, beforeAll } from 'vitest';
import { RAZORPAY_ERRORS } from '../../src/connectors/razorpay/razorpay.tables.js';
import { FakeRazorpay } from '../helpers/providers/razorpay-fake.js';
import { type Phase, providerSuite } from '../helpers/providers/suite.js';

/** Razorpay, as a merchant's live provider account, against its local fake (docs/connectors.md). */
let fake: FakeRazorpay;
beforeAll(async () => {
  fake = await FakeRazorpay.start();
});
afterAll(() => fake?.close());

const ENDPOINTS: Record<Phase, 'order' | 'pay' | 'status' | 'refund'> = {
  initiate: 'order',
  pay: 'pay',
  status: 'status',
  refund: 'refund',
};
const paymentOf = (paymentId: string) => {
  const [order] = fake.ordersFor(paymentId);
  const [payment] = order ? fake.paymentsFor(order.id) : [];
  if (!payment) throw new Error(`no Razorpay payment for ${paymentId}`);
  return payment;
};

providerSuite(() => ({
  name: 'razorpay',
  env: () => ({ KOSH_RAZORPAY_BASE_URL: fake.url }),
  get credentials() {
    return { key_id: fake.keyId, key_secret: fake.keySecret, webhook_secret: fake.webhookSecret };
  },
  bank: 'HDFC',
  wallet: 'phonepe',
  get declineCode() {
    return RAZORPAY_ERRORS[fake.declineReason]?.code ?? 'missing';
  },
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
    fake.refundOutcome = outcome;
  },
  settleRefunds: () => fake.settleRefunds('processed'),
  refundsMadeFor: (refundId) => fake.refundsFor(refundId).length,
  ordersFor: (paymentId) => fake.ordersFor(paymentId).length,
  attemptsFor: (paymentId) => fake.ordersFor(paymentId).flatMap((order) => fake.paymentsFor(order.id)),
  sendForgedWebhook: (paymentId) => fake.sendWebhook(paymentOf(paymentId), { signature: 'f'.repeat(64) }),
  close: () => fake.close(),
}));
