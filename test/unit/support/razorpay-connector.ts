import qs from 'qs';
import { afterEach, beforeEach, expect } from 'vitest';
import type {
  BrowserDetails,
  BrowserReturn,
  Connector,
  ConnectorPayment,
  InitiateResult,
  StatusResult,
} from '../../../src/connectors/connector.js';
import { createRazorpayConnector } from '../../../src/connectors/razorpay/razorpay.connector.js';
import { FORM_PARSE_OPTIONS } from '../../../src/http/body.js';
import { connectorPayment } from '../../helpers/connector-objects.js';
import { unescapeHtml } from '../../helpers/html.js';
import { FakeRazorpay } from '../../helpers/providers/razorpay-fake.js';

/**
 * What the Razorpay connector's tests against FakeRazorpay share (test/unit/razorpay-connector-*.test.ts):
 * the sample payment and browser, what Kosh records of an answer, and the customer's way to the
 * fake bank and back.
 */

/** Razorpay's own sample customer and order, as its documentation shows them. */
export const newPayment = (overrides: Partial<ConnectorPayment> = {}): ConnectorPayment =>
  connectorPayment({
    amount: 50_000,
    customer: { name: 'Gaurav Kumar', email: 'gaurav.kumar@example.com', contact: '+919876543210' },
    description: 'Order #1',
    ...overrides,
  });

export const BROWSER: BrowserDetails = {
  ip: '203.0.113.7',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0',
  referer: 'https://shop.example/checkout',
};

/** What Kosh records of a connector's answer (provider_reference, provider_status, provider_data). */
export function record(payment: ConnectorPayment, answer: InitiateResult | StatusResult): ConnectorPayment {
  const result = answer as {
    reference?: string | null;
    rawStatus?: string | null;
    data?: Record<string, unknown>;
  };
  return {
    ...payment,
    provider: {
      ...payment.provider,
      reference: result.reference ?? payment.provider.reference,
      status: result.rawStatus ?? payment.provider.status,
      data: { ...payment.provider.data, ...result.data },
    },
  };
}

/** The connector's browser step (the Razorpay connector always has one). */
export function continueWith(connector: Connector, payment: ConnectorPayment, browser: BrowserDetails) {
  if (!connector.continueInBrowser) throw new Error('no continueInBrowser');
  return connector.continueInBrowser(payment, browser);
}

export function expectStarted(result: InitiateResult): Extract<InitiateResult, { outcome: 'started' }> {
  expect(result.outcome, JSON.stringify(result)).toBe('started');
  return result as Extract<InitiateResult, { outcome: 'started' }>;
}

/** The browser's return as Kosh's form parser reads it (src/http/body.ts). */
const parseForm = (fields: Record<string, string>) =>
  qs.parse(new URLSearchParams(fields).toString(), FORM_PARSE_OPTIONS) as Record<string, unknown>;

/** The customer at the fake bank page: the decision, then the auto-submitting return form. */
export async function atBank(url: string, choice: 'success' | 'failure' | 'cancel') {
  const page = await fetch(url);
  expect(page.status).toBe(200);
  const html = await page.text();
  const action = /<form method="POST" action="([^"]+)"/.exec(html)?.[1];
  expect(action).toBeDefined();
  const decided = await fetch(new URL(action as string, url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ choice }).toString(),
  });
  const back = await decided.text();
  const target = /<form id="back" method="POST" action="([^"]+)"/.exec(back)?.[1];
  const fields: Record<string, string> = {};
  for (const match of back.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[unescapeHtml(match[1] as string)] = unescapeHtml(match[2] as string);
  }
  const browserReturn: BrowserReturn = { method: 'POST', query: {}, body: parseForm(fields) };
  return { target: target && unescapeHtml(target), fields, browserReturn, html: back };
}

/** The Razorpay connector with the fake's credentials, some of them replaced. */
export const connectorOn = (
  fake: FakeRazorpay,
  overrides: Partial<{ key_id: string; key_secret: string; webhook_secret: string }> = {},
) =>
  createRazorpayConnector({
    baseUrl: fake.url,
    credentials: {
      key_id: fake.keyId,
      key_secret: fake.keySecret,
      webhook_secret: fake.webhookSecret,
      ...overrides,
    },
    timeoutMs: 1_000,
  });

/** Kosh's path up to the bank: the order, then the payment once the browser is here. */
export async function reachBank(connector: Connector, payment = newPayment()) {
  const initiated = expectStarted(await connector.initiate(payment));
  const withOrder = record(payment, initiated);
  const continued = expectStarted(await continueWith(connector, withOrder, BROWSER));
  const atRazorpay = record(withOrder, continued);
  const next = continued.next;
  if (next.kind !== 'redirect') throw new Error(`expected a redirect, got ${next.kind}`);
  return { payment: atRazorpay, url: next.url };
}

/**
 * The hooks of a suite against FakeRazorpay, registered where it is called: a fresh fake for each
 * test (its `timeout` fault held 2.5 s, past the connector's 1 s) and a connector on it, handed to
 * `use`; the fake closed after the test.
 */
export function useRazorpayFake(use: (started: { fake: FakeRazorpay; connector: Connector }) => void): void {
  let fake: FakeRazorpay | undefined;
  beforeEach(async () => {
    fake = await FakeRazorpay.start();
    fake.timeoutMs = 2_500;
    use({ fake, connector: connectorOn(fake) });
  });
  afterEach(async () => {
    await fake?.close();
  });
}
