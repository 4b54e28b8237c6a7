/**
 * The HTTP side of every connector: one request with a deadline, and a verdict Kosh can act on.
 * Only a well-formed answer of the provider counts as an answer; a timeout, a refused or reset
 * connection, a 5xx, an HTML error page or a body that is not the JSON the provider documents is
 * `unknown`: the provider may or may not have acted, so Kosh asks again later instead of guessing.
 */

export interface ProviderRequest {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as a form (application/x-www-form-urlencoded). */
  form?: Record<string, string>;
  timeoutMs: number;
}

export type ProviderAnswer =
  /** The provider answered with a JSON body (2xx, or a documented 4xx refusal). */
  | { kind: 'answer'; status: number; body: unknown; headers: Headers }
  /** Nothing Kosh can trust came back. */
  | { kind: 'unknown'; reason: string; status?: number };

/** How much of an unreadable answer is kept in the reason (it is logged, never shown). */
const REASON_SNIPPET = 200;

export async function callProvider(request: ProviderRequest): Promise<ProviderAnswer> {
  const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
  let body: string | undefined;
  if (request.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(request.json);
  } else if (request.form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(request.form).toString();
  }
  let response: Response;
  let text: string;
  try {
    response = await fetch(request.url, {
      method: request.method,
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    const name = (error as Error).name;
    const reason =
      name === 'TimeoutError' || name === 'AbortError'
        ? `no answer within ${request.timeoutMs} ms`
        : `connection failed: ${(error as Error).message}`;
    return { kind: 'unknown', reason };
  }
  if (response.status >= 500) {
    return {
      kind: 'unknown',
      status: response.status,
      reason: `HTTP ${response.status}: ${text.slice(0, REASON_SNIPPET)}`,
    };
  }
  if (response.status >= 300 && response.status < 400) {
    return {
      kind: 'unknown',
      status: response.status,
      reason: `unexpected redirect (HTTP ${response.status})`,
    };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return {
      kind: 'unknown',
      status: response.status,
      reason: `HTTP ${response.status} without JSON: ${text.slice(0, REASON_SNIPPET)}`,
    };
  }
  if (parsed === null || typeof parsed !== 'object') {
    return {
      kind: 'unknown',
      status: response.status,
      reason: `HTTP ${response.status} with a JSON ${typeof parsed}`,
    };
  }
  return { kind: 'answer', status: response.status, body: parsed, headers: response.headers };
}

/**
 * For a call the provider documents as idempotent (an idempotency key, or a reference it will not
 * act on twice): an unknown answer is retried, a bounded number of times with a short pause, before
 * it is left to the reconciler. Never use it for a call the provider could act on twice.
 */
export async function callIdempotent(
  request: ProviderRequest,
  options: { attempts?: number; pauseMs?: number } = {},
): Promise<ProviderAnswer> {
  const attempts = Math.max(1, options.attempts ?? 2);
  let answer = await callProvider(request);
  for (let attempt = 1; attempt < attempts && answer.kind === 'unknown'; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, options.pauseMs ?? 200));
    answer = await callProvider(request);
  }
  return answer;
}

/** A field of a provider's JSON object, when it is a string. */
export function stringField(body: unknown, ...path: string[]): string | undefined {
  let value: unknown = body;
  for (const key of path) {
    if (!value || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return typeof value === 'string' ? value : undefined;
}

/** A field of a provider's JSON object, when it is a finite number. */
export function numberField(body: unknown, ...path: string[]): number | undefined {
  let value: unknown = body;
  for (const key of path) {
    if (!value || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
