import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/** What every Kosh error answer carries (docs/errors.md). */
export interface ErrorEnvelope {
  error: {
    type: string;
    code: string;
    message: string;
    field: string | null;
    request_id: string;
    doc_url?: string;
  };
}

/** An error answer of the API: branch on `code`, quote `requestId` when asking for help. */
export class KoshError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly field: string | null;
  readonly requestId: string | null;
  readonly docUrl: string | null;

  constructor(status: number, body: Partial<ErrorEnvelope> | undefined, requestId: string | null) {
    const error = body?.error;
    super(error?.message ?? `Kosh answered HTTP ${status}`);
    this.name = 'KoshError';
    this.status = status;
    this.type = error?.type ?? 'api_error';
    this.code = error?.code ?? 'unexpected_response';
    this.field = error?.field ?? null;
    this.requestId = error?.request_id ?? requestId;
    this.docUrl = error?.doc_url ?? null;
  }
}

/**
 * Kosh could not be reached, or its answer was cut off or unreadable (after the retries): the
 * request may or may not have been applied. Retry it with the same `idempotencyKey` to learn which.
 */
export class KoshConnectionError extends Error {
  constructor(
    message: string,
    override readonly cause: unknown,
  ) {
    super(message);
    this.name = 'KoshConnectionError';
  }
}

export interface TransportOptions {
  apiKey: string;
  secretKey: string;
  baseUrl: string;
  /** Retries after the first try (network errors, 409 in flight, 429, 5xx). Default 3. */
  maxRetries?: number;
  /** Per-attempt timeout. Default 30 s. */
  timeoutMs?: number;
  /** Longest wait between two tries. Default 8 s. */
  maxBackoffMs?: number;
  /** A fetch of your own (a proxy agent, a test double). Default: the global fetch. */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  /** The Idempotency-Key of a POST; one is generated when absent. Reused by every retry. */
  idempotencyKey?: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
}

const RETRIED_STATUSES = new Set([429, 500, 502, 503, 504]);

/**
 * One request with retries. A POST always carries an Idempotency-Key, the same on every retry, so
 * a retry after a dropped connection or a 5xx is answered with the first attempt's outcome
 * instead of creating a second object (docs/idempotency.md).
 */
export class Transport {
  private readonly authorization: string;
  private readonly base: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: TransportOptions) {
    if (!options.apiKey || !options.secretKey)
      throw new TypeError('Kosh: apiKey and secretKey are required.');
    if (!options.baseUrl)
      throw new TypeError('Kosh: baseUrl is required (for example http://localhost:3000).');
    this.authorization = `Basic ${Buffer.from(`${options.apiKey}:${options.secretKey}`).toString('base64')}`;
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  async request<T>(method: 'GET' | 'POST', path: string, options: RequestOptions = {}): Promise<T> {
    const url = new URL(`${this.base}${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { authorization: this.authorization, accept: 'application/json' };
    let body: string | undefined;
    if (method === 'POST') {
      headers['idempotency-key'] = options.idempotencyKey ?? randomUUID();
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body ?? {});
    }
    const maxRetries = this.options.maxRetries ?? 3;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      let text: string;
      try {
        response = await this.fetch(url, {
          method,
          headers,
          body,
          signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
        });
        // The answer is read inside the same guard: a connection that drops (or times out) while
        // the body arrives is a connection error like one that drops before the headers, because
        // Kosh may have applied the request either way; the retry's key gets its outcome.
        text = await response.text();
        if (response.ok && parse(text) === undefined) throw new Error('the answer was not JSON');
      } catch (error) {
        if (attempt >= maxRetries) {
          throw new KoshConnectionError(
            `Kosh at ${this.base} could not be reached: ${(error as Error).message}`,
            error,
          );
        }
        await sleep(this.backoff(attempt));
        continue;
      }
      const json = parse(text);
      if (response.ok) return json as T;
      const error = new KoshError(
        response.status,
        json as Partial<ErrorEnvelope> | undefined,
        response.headers.get('x-request-id'),
      );
      const retried =
        RETRIED_STATUSES.has(response.status) ||
        (response.status === 409 && error.code === 'idempotency_key_in_use');
      if (!retried || attempt >= maxRetries) throw error;
      await sleep(this.backoff(attempt, response.headers.get('retry-after')));
    }
  }

  /** Exponential with full jitter; a Retry-After (seconds) is honoured when it says longer. */
  private backoff(attempt: number, retryAfter?: string | null): number {
    const cap = this.options.maxBackoffMs ?? 8_000;
    const exponential = Math.min(cap, 250 * 2 ** attempt);
    const jittered = exponential / 2 + Math.random() * (exponential / 2);
    const asked = retryAfter ? Number(retryAfter) * 1000 : Number.NaN;
    return Number.isFinite(asked) && asked > jittered ? Math.min(asked, 60_000) : jittered;
  }
}

function parse(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
