import { RAZORPAY_ERRORS } from '../../../src/connectors/razorpay/razorpay.tables.js';
import type { Phase, ProviderUnderTest } from './provider-under-test.js';
import type { FakeRazorpay } from './razorpay-fake.js';
import { upiCustomer } from './razorpay-fake-upi.js';

/** What a shared UPI suite needs of a local fake provider, beyond `ProviderUnderTest`. */
export interface UpiProviderFake {
  /** The simulated customer in a UPI app approves (pays) or declines the attempt the provider holds for this Kosh payment; resolves once the fake recorded it and sent its webhook (per the webhook timing). */
  upiCustomer(paymentId: string, action: 'approve' | 'decline'): Promise<void>;
  /** The Kosh error code a UPI decline on the fake maps to. */
  upiDeclineCode: string;
  /** The VPA the fake reports as the payer of approved payments. */
  upiPayerVpa: string;
}

/**
 * The fake's endpoints each phase of the shared suites hits: `initiate` makes the order, `pay` the
 * payment attempt (the S2S JSON create for net banking and wallets, the S2S UPI create for UPI).
 */
const ENDPOINTS: Record<Phase, 'order' | 'pay' | 'status' | 'refund'> = {
  initiate: 'order',
  pay: 'pay',
  status: 'status',
  refund: 'refund',
};

/**
 * The local Razorpay as the shared provider suites drive it (test/helpers/providers/suite.ts and
 * the UPI suite). `fake` is read at each call: the fake starts in the test file's `beforeAll`.
 *
 * Webhook timing for UPI (`upiCustomer`): `before` and `instead` send Razorpay's webhook before
 * `upiCustomer` resolves; `after` sends it once Kosh's next question to the fake has been answered
 * (await `fake().webhooksDelivered()` to see it applied); `none` never.
 */
export function razorpayUnderTest(fake: () => FakeRazorpay): ProviderUnderTest & UpiProviderFake {
  const paymentOf = (paymentId: string) => {
    const [order] = fake().ordersFor(paymentId);
    const payments = order ? fake().paymentsFor(order.id) : [];
    const payment = payments.find((attempt) => attempt.captured) ?? payments.at(-1);
    if (!payment) throw new Error(`no Razorpay payment for ${paymentId}`);
    return payment;
  };
  return {
    name: 'razorpay',
    env: () => ({ KOSH_RAZORPAY_BASE_URL: fake().url }),
    get credentials() {
      return { key_id: fake().keyId, key_secret: fake().keySecret, webhook_secret: fake().webhookSecret };
    },
    bank: 'HDFC',
    wallet: 'phonepe',
    get declineCode() {
      return RAZORPAY_ERRORS[fake().declineReason]?.code ?? 'missing';
    },
    setWebhookUrl: (url) => {
      fake().webhookUrl = url;
    },
    setWebhookTiming: (timing) => {
      fake().webhookTiming = timing;
    },
    setFault: (phase, fault) => {
      if (fault) fake().faults[ENDPOINTS[phase]] = fault;
      else delete fake().faults[ENDPOINTS[phase]];
    },
    setRefundOutcome: (outcome) => {
      fake().refundOutcome = outcome;
    },
    setOffer: (paise) => {
      fake().offerPaise = paise;
    },
    settleRefunds: () => fake().settleRefunds('processed'),
    refundsMadeFor: (refundId) => fake().refundsFor(refundId).length,
    ordersFor: (paymentId) => fake().ordersFor(paymentId).length,
    attemptsFor: (paymentId) =>
      fake()
        .ordersFor(paymentId)
        .flatMap((order) => fake().paymentsFor(order.id)),
    sendRefundWebhook: (refundId) => fake().sendRefundWebhook(refundId),
    sendForgedWebhook: (paymentId) => fake().sendWebhook(paymentOf(paymentId), { signature: 'f'.repeat(64) }),
    close: () => fake().close(),
    upiCustomer: (paymentId, action) => upiCustomer(fake(), paymentId, action),
    get upiDeclineCode() {
      return RAZORPAY_ERRORS[fake().upiDeclineReason]?.code ?? 'missing';
    },
    get upiPayerVpa() {
      return fake().upiPayerVpa;
    },
  };
}
