import { setTimeout as sleep } from 'node:timers/promises';

/** Events `kosh trigger` can fire, and the sandbox walk that makes each happen. */
export const TRIGGERS = {
  'payment.captured': { choice: 'success', refund: false },
  'order.paid': { choice: 'success', refund: false },
  'payment.failed': { choice: 'failure', refund: false },
  'payment.pending': { choice: 'pending_success', refund: false },
  'refund.created': { choice: 'success', refund: true },
  'refund.processed': { choice: 'success', refund: true },
} as const;

export type TriggerEvent = keyof typeof TRIGGERS;

/**
 * How the payment is made: `netbanking` answers the sandbox bank page for a payment at ICIC;
 * `upi` starts a UPI intent payment and answers the sandbox UPI app with the same choice.
 */
export const TRIGGER_METHODS = ['netbanking', 'upi'] as const;
export type TriggerMethod = (typeof TRIGGER_METHODS)[number];

export class TriggerError extends Error {}

export interface TriggerOptions {
  apiUrl: string;
  apiKey: string;
  secretKey: string;
  event: string;
  /** The payment's method (default netbanking). */
  method?: string;
  print: (line: string) => void;
  /** How long to wait for the event to be recorded (the sandbox settles pending outcomes later). */
  timeoutMs?: number;
}

interface JsonObject {
  [key: string]: unknown;
}

/**
 * Fires a test-mode event for real: creates an order, starts an S2S net-banking payment (or a UPI
 * one), answers the sandbox bank page (or the sandbox UPI app) as a customer would (and refunds
 * the payment for refund events), then waits
 * until Kosh has recorded the event, which its webhooks deliver like any other. Nothing is faked:
 * the objects are ordinary test-mode objects of the key's account.
 */
export async function trigger(options: TriggerOptions): Promise<{ eventId: string; objects: JsonObject }> {
  if (!(options.event in TRIGGERS)) {
    throw new TriggerError(
      `Unknown event '${options.event}'; kosh trigger fires ${Object.keys(TRIGGERS).join(', ')}.`,
    );
  }
  const method = (options.method ?? 'netbanking') as TriggerMethod;
  if (!TRIGGER_METHODS.includes(method)) {
    throw new TriggerError(
      `Unknown method '${options.method}'; kosh trigger pays by ${TRIGGER_METHODS.join(' or ')}.`,
    );
  }
  if (!options.apiKey.startsWith('key_test_')) {
    throw new TriggerError('kosh trigger works with test-mode keys only (key_test_…).');
  }
  const walk = TRIGGERS[options.event as TriggerEvent];
  const base = options.apiUrl.replace(/\/+$/, '');
  const authorization = `Basic ${Buffer.from(`${options.apiKey}:${options.secretKey}`).toString('base64')}`;
  const started = Date.now();
  const deadline = started + (options.timeoutMs ?? 60_000);

  async function call(method: string, path: string, body?: unknown, form = false): Promise<Response> {
    try {
      return await fetch(`${base}${path}`, {
        method,
        redirect: 'manual',
        headers: {
          ...(form ? {} : { authorization }),
          ...(body === undefined
            ? {}
            : { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' }),
        },
        ...(body === undefined
          ? {}
          : {
              body: form
                ? new URLSearchParams(body as Record<string, string>).toString()
                : JSON.stringify(body),
            }),
      });
    } catch (error) {
      throw new TriggerError(`Kosh is not reachable at ${base}: ${(error as Error).message}`);
    }
  }
  async function api(method: string, path: string, body?: unknown): Promise<JsonObject> {
    const response = await call(method, path, body);
    const json = (await response.json().catch(() => ({}))) as JsonObject & { error?: { message?: string } };
    if (!response.ok)
      throw new TriggerError(`${method} ${path} failed: ${json.error?.message ?? response.status}`);
    return json;
  }

  const order = (
    (await api('POST', '/v1/orders/', {
      amount: 5000,
      currency: 'INR',
      receipt: `trigger_${Date.now().toString(36)}`,
      metadata: { kosh_trigger: options.event },
    })) as { data: { id: string } }
  ).data;
  options.print(`order    ${order.id}`);
  const payment = (await api('POST', '/v1/payments/create/s2s/', {
    amount: 5000,
    currency: 'INR',
    order_id: order.id,
    ...(method === 'upi'
      ? { method: 'upi', upi: { flow: 'intent' } }
      : { method: 'netbanking', bank: 'ICIC' }),
    email: 'trigger@example.com',
    contact: '+919876543210',
    name: 'Kosh Trigger',
    description: `kosh trigger ${options.event}`,
    return_url: 'https://merchant.example/return',
  })) as { payment_id: string };
  options.print(`payment  ${payment.payment_id}`);

  // The customer's part: open the sandbox bank page (or UPI app) and press the button.
  const customerPage =
    method === 'upi'
      ? { path: `/v1/payments/${payment.payment_id}/upi-simulator/`, name: 'sandbox UPI app' }
      : { path: `/v1/payments/${payment.payment_id}/authentication/`, name: 'sandbox bank page' };
  const page = await call('GET', customerPage.path);
  const token = /name="token" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!token)
    throw new TriggerError(`The ${customerPage.name} did not offer a choice (is this a test-mode key?).`);
  const chosen = await call('POST', customerPage.path, { token, choice: walk.choice }, true);
  if (chosen.status >= 400)
    throw new TriggerError(`The ${customerPage.name} refused the choice (${chosen.status}).`);

  const objects: JsonObject = { order_id: order.id, payment_id: payment.payment_id };
  let subject = payment.payment_id;
  if (walk.refund) {
    const refund = (
      (await api('POST', `/v1/payments/${payment.payment_id}/refunds/`, {})) as { data: { id: string } }
    ).data;
    options.print(`refund   ${refund.id}`);
    objects.refund_id = refund.id;
    subject = refund.id;
  }
  const subjectId = options.event.startsWith('order.') ? order.id : subject;

  // The event, once Kosh has recorded it (the sandbox settles a refund a moment later).
  while (Date.now() < deadline) {
    const events = (await api('GET', `/v1/events/?type=${encodeURIComponent(options.event)}&limit=20`)) as {
      data: { id: string; payload?: JsonObject; data?: JsonObject }[];
    };
    const found = events.data.find((event) => JSON.stringify(event).includes(`"${subjectId}"`));
    if (found) {
      options.print(`event    ${found.id} ${options.event}`);
      return { eventId: found.id, objects };
    }
    await sleep(250);
  }
  throw new TriggerError(
    `${options.event} was not recorded within ${Math.round((deadline - started) / 1000)} s.`,
  );
}
