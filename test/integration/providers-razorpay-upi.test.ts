import { afterAll, beforeAll } from 'vitest';
import { FakeRazorpay } from '../helpers/providers/razorpay-fake.js';
import { razorpayUnderTest } from '../helpers/providers/razorpay-under-test.js';
import { upiProviderSuite } from '../helpers/providers/upi-suite.js';

/**
 * UPI through Razorpay, as a merchant's live provider account, against its local fake: the shared
 * UPI acceptance (test/helpers/providers/upi-suite.ts), the same as Cashfree's.
 */
let fake: FakeRazorpay;
beforeAll(async () => {
  fake = await FakeRazorpay.start();
  // Held past Kosh's deadline (the suite's KOSH_PROVIDER_TIMEOUT_MS), and no longer.
  fake.timeoutMs = 1_500;
});
afterAll(() => fake?.close());

const provider = razorpayUnderTest(() => fake);
upiProviderSuite(() => provider);
