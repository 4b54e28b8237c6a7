import { afterAll, beforeAll } from 'vitest';
import { FakeRazorpay } from '../helpers/providers/razorpay-fake.js';
import { razorpayUnderTest } from '../helpers/providers/razorpay-under-test.js';
import { providerSuite } from '../helpers/providers/suite.js';

/** Razorpay, as a merchant's live provider account, against its local fake (docs/connectors.md). */
let fake: FakeRazorpay;
beforeAll(async () => {
  fake = await FakeRazorpay.start();
});
afterAll(() => fake?.close());

const provider = razorpayUnderTest(() => fake);
providerSuite(() => provider);
