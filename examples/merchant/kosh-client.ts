import { createHmac, timingSafeEqual } from 'node:crypto';

/** The few Kosh API calls the example merchant makes, from its backend only (they carry the secret key). */
export interface KoshClientOptions {
  baseUrl: string;
  apiKey: string;
  secretKey: string;
}

export class KoshApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { error?: { code?: string; message?: string } },
  ) {
    super(body.error?.message ?? `Kosh answered ${status}`);
  }
}

export function createKoshClient(options: KoshClientOptions) {
  const authorization = `Basic ${Buffer.from(`${options.apiKey}:${options.secretKey}`).toString('base64')}`;
  const base = options.baseUrl.replace(/\/+$/, '');
  let signingSecret: string | undefined;

  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await response.json()) as T & { error?: { code?: string; message?: string } };
    if (!response.ok) throw new KoshApiError(response.status, json);
    return json;
  }

  return {
    /** Seed §4.5: refreshed for every checkout, never hard-coded. */
    methods: () =>
      call<{ netbanking: Record<string, string>; wallet: Record<string, string> }>(
        'GET',
        '/v1/payments/methods/',
      ),
    createOrder: (amount: number, currency: string) =>
      call<{ data: { id: string } }>('POST', '/v1/orders/', { amount, currency }),
    createPayment: (body: Record<string, unknown>) =>
      call<{ payment_id: string; next: { action: string; html_content?: string; url?: string }[] }>(
        'POST',
        '/v1/payments/create/s2s/',
        body,
      ),
    payment: (id: string) =>
      call<{ data: { id: string; order_id: string; status: string; error_code: string | null } }>(
        'GET',
        `/v1/payments/${encodeURIComponent(id)}/`,
      ),
    order: (id: string) =>
      call<{ data: { id: string; status: string; amount_paid: number } }>(
        'GET',
        `/v1/orders/${encodeURIComponent(id)}/`,
      ),

    /** Checks the return POST's signature (docs/payments.md) with the account's return signing secret. */
    async verifyReturn(fields: Record<string, string | undefined>): Promise<boolean> {
      signingSecret ??= (
        await call<{ data: { secret: string } }>('GET', '/v1/payments/return-signing-secret/')
      ).data.secret;
      const { payment_id, order_id, status, signature } = fields;
      if (!payment_id || !order_id || !status || !signature) return false;
      const expected = createHmac('sha256', signingSecret)
        .update(`${payment_id}|${order_id}|${status}`)
        .digest();
      const given = Buffer.from(signature, 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

export type KoshClient = ReturnType<typeof createKoshClient>;
