import { parseArgs } from 'node:util';
import { FakeCashfree } from './cashfree-fake.js';
import { FakeRazorpay } from './razorpay-fake.js';

/**
 * `npm run fake-providers`: the local fakes of Cashfree and Razorpay, for a demo of live mode on one
 * machine (docs/connectors.md). Prints the settings that point Kosh at them and the credentials to
 * add as connector accounts. Their webhooks go to the addresses given with --cashfree-webhook and
 * --razorpay-webhook (a connector account's `webhook_url`), or nowhere.
 */
const { values } = parseArgs({
  options: {
    'cashfree-webhook': { type: 'string' },
    'razorpay-webhook': { type: 'string' },
  },
});

const cashfree = await FakeCashfree.start('cf_demo_client', 'cfsk_demo_secret_0000');
const razorpay = await FakeRazorpay.start('rzp_live_demo', 'rzp_demo_key_secret', 'rzp_demo_webhook_secret');
cashfree.webhookUrl = values['cashfree-webhook'];
razorpay.webhookUrl = values['razorpay-webhook'];

process.stdout.write(`Fake providers are running (Ctrl-C stops them).

Start Kosh with:
  KOSH_CASHFREE_BASE_URL=${cashfree.url} KOSH_RAZORPAY_BASE_URL=${razorpay.url} npm run dev

Then, with an activated merchant's live key:
  curl -u "$LIVE_KEY:$LIVE_SECRET" -H 'content-type: application/json' http://localhost:3000/v1/connector-accounts/ \\
    -d '{"connector":"cashfree","credentials":{"client_id":"${cashfree.clientId}","client_secret":"${cashfree.clientSecret}"}}'
  or
    -d '{"connector":"razorpay","credentials":{"key_id":"${razorpay.keyId}","key_secret":"${razorpay.keySecret}","webhook_secret":"${razorpay.webhookSecret}"}}'

Webhooks: Cashfree → ${cashfree.webhookUrl ?? 'nowhere (pass --cashfree-webhook <webhook_url>)'}
          Razorpay → ${razorpay.webhookUrl ?? 'nowhere (pass --razorpay-webhook <webhook_url>)'}
`);

const stop = async () => {
  await Promise.all([cashfree.close(), razorpay.close()]);
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
