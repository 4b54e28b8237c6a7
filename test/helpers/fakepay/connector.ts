import { timingSafeEqual } from 'node:crypto';
import type {
  Connector,
  ConnectorPayment,
  InitiateResult,
  PaymentOutcome,
  RefundResult,
  StatusResult,
} from '../../../src/connectors/connector.js';
import { callProvider, numberField, stringField } from '../../../src/connectors/http.js';
import { type Fakepay, fakepayReturnSignature, fakepayWebhookSignature } from './server.js';

/**
 * A connector for the Fakepay test provider, written the way a real one is (docs/connectors.md):
 * the provider's statuses and errors map through tables, every call has a deadline, and anything
 * it cannot read is `unknown`. Kosh's core never knows which provider it talks to.
 */
export const FAKEPAY_STATUSES: Record<string, PaymentOutcome> = {
  created: 'not_started',
  pending: 'pending',
  paid: 'captured',
  failed: 'failed',
};

export const FAKEPAY_ERRORS: Record<string, { code: string; reason: string }> = {
  BANK_DECLINED: { code: 'payment_declined', reason: 'The bank declined the payment.' },
  bank_unavailable: { code: 'bank_unavailable', reason: 'The bank is not taking payments right now.' },
};

export const FAKEPAY_REFUND_STATUSES: Record<string, RefundResult['outcome']> = {
  pending: 'pending',
  processed: 'processed',
  failed: 'failed',
};

function refundOf(answer: unknown): RefundResult {
  const raw = stringField(answer, 'status');
  const outcome = (raw ? FAKEPAY_REFUND_STATUSES[raw] : undefined) ?? 'unknown';
  return {
    outcome,
    rawStatus: raw ?? null,
    reference: stringField(answer, 'id') ?? null,
    ...(outcome === 'failed'
      ? { errorCode: 'refund_declined', errorReason: 'The bank refused the refund.' }
      : {}),
  };
}

const equalHex = (a: string, b: string) => {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
};

function statusOf(order: unknown): StatusResult {
  const raw = stringField(order, 'status');
  const outcome: PaymentOutcome = (raw ? FAKEPAY_STATUSES[raw] : undefined) ?? 'unknown';
  const failure = FAKEPAY_ERRORS[stringField(order, 'failure_reason') ?? ''];
  return {
    outcome,
    rawStatus: raw ?? null,
    amount: numberField(order, 'amount'),
    currency: stringField(order, 'currency'),
    reference: stringField(order, 'id') ?? null,
    bankReference: stringField(order, 'bank_ref') ?? null,
    fee: numberField(order, 'fee') ?? null,
    ...(outcome === 'failed'
      ? {
          errorCode: failure?.code ?? 'payment_declined',
          errorReason: failure?.reason ?? 'The provider declined the payment.',
        }
      : {}),
  };
}

export function createFakepayConnector(options: {
  baseUrl: string;
  apiKey: string;
  secret: string;
  timeoutMs?: number;
}): Connector {
  const timeoutMs = options.timeoutMs ?? 1_000;
  const headers = { authorization: `Bearer ${options.apiKey}` };

  async function status(payment: ConnectorPayment): Promise<StatusResult> {
    const reference = payment.provider.reference;
    const answer = await callProvider({
      method: 'GET',
      url: reference
        ? `${options.baseUrl}/v1/orders/${encodeURIComponent(reference)}`
        : `${options.baseUrl}/v1/orders?reference=${encodeURIComponent(payment.id)}`,
      headers,
      timeoutMs,
    });
    if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
    if (answer.status !== 200) return { outcome: 'unknown', reason: `HTTP ${answer.status}` };
    if (reference) return statusOf(answer.body);
    const items = (answer.body as { items?: unknown[] }).items;
    if (!Array.isArray(items)) return { outcome: 'unknown', reason: 'no items' };
    return items.length === 0 ? { outcome: 'not_started', rawStatus: 'no_order' } : statusOf(items[0]);
  }

  return {
    name: 'fakepay',
    async initiate(payment): Promise<InitiateResult> {
      const answer = await callProvider({
        method: 'POST',
        url: `${options.baseUrl}/v1/orders`,
        headers,
        json: {
          reference: payment.id,
          amount: payment.amount,
          currency: payment.currency,
          method: payment.method,
          code: payment.code,
          return_url: payment.callbackUrl,
        },
        timeoutMs,
      });
      if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
      if (answer.status === 422) {
        const code = stringField(answer.body, 'error', 'code') ?? '';
        const mapped = FAKEPAY_ERRORS[code];
        return {
          outcome: 'failed',
          errorCode: mapped?.code ?? 'payment_declined',
          errorReason: mapped?.reason ?? 'The provider refused the payment.',
          reference: null,
          rawStatus: code,
        };
      }
      if (answer.status !== 200) return { outcome: 'unknown', reason: `HTTP ${answer.status}` };
      const id = stringField(answer.body, 'id');
      const url = stringField(answer.body, 'pay', 'url');
      const method = stringField(answer.body, 'pay', 'method');
      if (!id || !url) return { outcome: 'unknown', reason: 'no order id or page' };
      const fields = (answer.body as { pay?: { fields?: Record<string, string> } }).pay?.fields ?? {};
      return {
        outcome: 'started',
        action: method === 'POST' ? 'html_form' : 'redirect',
        next: method === 'POST' ? { kind: 'form', url, fields } : { kind: 'redirect', url },
        reference: id,
        rawStatus: stringField(answer.body, 'status') ?? null,
        reconcile: true,
      };
    },

    async handleReturn(payment, browserReturn) {
      const fields = { ...browserReturn.query, ...browserReturn.body } as Record<string, unknown>;
      const id = typeof fields.order_id === 'string' ? fields.order_id : '';
      const reference = typeof fields.reference === 'string' ? fields.reference : '';
      const raw = typeof fields.status === 'string' ? fields.status : '';
      const signature = typeof fields.signature === 'string' ? fields.signature : '';
      const expected = fakepayReturnSignature(options.secret, id, reference, raw);
      const verified =
        signature !== '' &&
        equalHex(signature, expected) &&
        reference === payment.id &&
        id === payment.provider.reference;
      // A signed return says the status only; the amount is Kosh's own (the order was made with it).
      return verified ? { verified, status: { ...statusOf({ status: raw, id }) } } : { verified: false };
    },

    async parseWebhook(webhook) {
      const signature = webhook.headers['x-fakepay-signature'];
      let body: { event_id?: unknown; order?: unknown };
      try {
        body = JSON.parse(webhook.rawBody.toString('utf8'));
      } catch {
        return { verified: false, paymentId: null, reason: 'not JSON' };
      }
      const paymentId = stringField(body.order, 'reference') ?? null;
      const expected = fakepayWebhookSignature(options.secret, webhook.rawBody.toString('utf8'));
      if (typeof signature !== 'string' || !equalHex(signature, expected)) {
        return { verified: false, paymentId, reason: 'bad signature' };
      }
      return {
        verified: true,
        eventId: typeof body.event_id === 'string' ? body.event_id : null,
        paymentId,
        status: statusOf(body.order),
      };
    },

    status,

    async refund(refund): Promise<RefundResult> {
      const answer = await callProvider({
        method: 'POST',
        url: `${options.baseUrl}/v1/refunds`,
        headers,
        json: {
          reference: refund.id,
          order_id: refund.payment.provider.reference,
          amount: refund.amount,
          speed: refund.speed,
        },
        timeoutMs,
      });
      if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
      if (answer.status === 422) {
        return {
          outcome: 'failed',
          rawStatus: stringField(answer.body, 'error', 'code') ?? null,
          errorCode: 'refund_declined',
          errorReason: stringField(answer.body, 'error', 'message') ?? 'The provider refused the refund.',
        };
      }
      if (answer.status !== 200) return { outcome: 'unknown', reason: `HTTP ${answer.status}` };
      return refundOf(answer.body);
    },

    async refundStatus(refund): Promise<RefundResult> {
      if (!refund.provider.reference) return { outcome: 'unknown', reason: 'never acknowledged' };
      const answer = await callProvider({
        method: 'GET',
        url: `${options.baseUrl}/v1/refunds/${encodeURIComponent(refund.provider.reference)}`,
        headers,
        timeoutMs,
      });
      if (answer.kind === 'unknown') return { outcome: 'unknown', reason: answer.reason };
      if (answer.status !== 200) return { outcome: 'unknown', reason: `HTTP ${answer.status}` };
      return refundOf(answer.body);
    },
  };
}

/** A live provider account of the Fakepay server, as a harness wires it (`liveConnector`). */
export function fakepayAccount(
  fakepay: Pick<Fakepay, 'url' | 'apiKey' | 'secret'>,
  connectorAccountId: string,
) {
  return {
    connector: createFakepayConnector({
      baseUrl: fakepay.url,
      apiKey: fakepay.apiKey,
      secret: fakepay.secret,
    }),
    connectorAccountId,
  };
}
