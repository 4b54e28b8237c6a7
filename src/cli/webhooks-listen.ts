import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** Marks the endpoint this command owns, so a later run reuses it instead of piling up new ones. */
export const LISTEN_DESCRIPTION = 'kosh webhooks listen';

export interface ListenOptions {
  /** Base URL of the Kosh API, e.g. http://localhost:3000. */
  apiUrl: string;
  apiKey: string;
  secretKey: string;
  /** Where each verified event is forwarded; without it events are only printed. */
  forwardTo?: string | undefined;
  /** Event types to ask for; every type when absent. */
  events?: string[] | undefined;
  /** Port of the local listener (0: any free port). */
  port?: number | undefined;
  print: (line: string) => void;
}

export interface Listening {
  endpointId: string;
  secret: string;
  url: string;
  /** Disables the endpoint (so Kosh stops retrying to a closed port) and stops the listener. */
  close(): Promise<void>;
}

interface Endpoint {
  id: string;
  url: string;
  description: string | null;
  enabled: boolean;
  secret?: string;
}

export class ListenError extends Error {}

/**
 * Lets a developer receive their test-mode webhooks on their machine: starts a listener on
 * 127.0.0.1, points a test-mode endpoint at it (reusing the one an earlier run registered), then
 * verifies, prints and forwards each event. The answer of the forward target goes back to Kosh, so a
 * failing local app sees the normal retries.
 */
export async function startWebhooksListen(options: ListenOptions): Promise<Listening> {
  if (!options.apiKey.startsWith('key_test_')) {
    throw new ListenError('webhooks listen works with test-mode keys only (key_test_…).');
  }
  const api = createApi(options);
  let verifier: Webhook | undefined;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void handle(Buffer.concat(chunks).toString('utf8'), request.headers).then(
        (status) => response.writeHead(status).end(),
        () => response.writeHead(502).end(),
      );
    });
  });

  async function handle(body: string, headers: http.IncomingHttpHeaders): Promise<number> {
    const webhookHeaders = {
      'webhook-id': String(headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(headers['webhook-signature'] ?? ''),
    };
    let event: { id?: string; type?: string };
    try {
      event = verifier?.verify(body, webhookHeaders) as { id?: string; type?: string };
    } catch (error) {
      options.print(`!! rejected a request with a bad signature: ${(error as Error).message}`);
      return 400;
    }
    const time = new Date().toISOString().slice(11, 19);
    options.print(`${time} --> ${event.type} [${event.id}]`);
    if (!options.forwardTo) return 200;
    try {
      const forwarded = await fetch(options.forwardTo, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/json', ...webhookHeaders },
        body,
        signal: AbortSignal.timeout(15_000),
      });
      options.print(`${time} <-- ${forwarded.status} POST ${options.forwardTo} [${event.id}]`);
      return forwarded.status;
    } catch (error) {
      options.print(`${time} <-- failed to forward to ${options.forwardTo}: ${(error as Error).message}`);
      return 502;
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    const endpoint = await api.register(url);
    verifier = new Webhook(endpoint.secret);
    options.print(`Ready. Test-mode events for this account arrive at ${url} (endpoint ${endpoint.id}).`);
    options.print(`Webhook signing secret: ${endpoint.secret}`);
    if (options.forwardTo) options.print(`Forwarding to ${options.forwardTo}`);
    return {
      endpointId: endpoint.id,
      secret: endpoint.secret,
      url,
      async close() {
        try {
          // Another run may have taken the endpoint over since (it points at that run's address):
          // it is left to that run.
          const now = await api.call<{ data: Endpoint }>('GET', `/v1/webhooks/${endpoint.id}/`);
          if (now.data.url === url)
            await api.call('PATCH', `/v1/webhooks/${endpoint.id}/`, { enabled: false });
        } finally {
          server.closeAllConnections();
          await new Promise<void>((resolve) => server.close(() => resolve()));
        }
      },
    };
  } catch (error) {
    server.close();
    throw error;
  }
}

function createApi(options: ListenOptions) {
  const authorization = `Basic ${Buffer.from(`${options.apiKey}:${options.secretKey}`).toString('base64')}`;
  const base = options.apiUrl.replace(/\/+$/, '');

  async function call<T>(method: string, path: string, json?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });
    } catch (error) {
      throw new ListenError(`Kosh is not reachable at ${base}: ${(error as Error).message}`);
    }
    const body = (await response.json().catch(() => ({}))) as { error?: { message?: string } } & T;
    if (!response.ok)
      throw new ListenError(`${method} ${path} failed: ${body.error?.message ?? response.status}`);
    return body;
  }

  return {
    call,
    /** Reuses this command's endpoint (new URL, enabled, fresh secret) or registers one. */
    async register(url: string): Promise<Endpoint & { secret: string }> {
      const fields = { url, enabled_events: options.events ?? ['*'] };
      let cursor: string | null = null;
      do {
        const page: { data: Endpoint[]; next_cursor: string | null } = await call(
          'GET',
          `/v1/webhooks/?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
        );
        const mine = page.data.find((endpoint) => endpoint.description === LISTEN_DESCRIPTION);
        if (mine) {
          if (mine.enabled)
            options.print(
              `Taking over endpoint ${mine.id} from an earlier run (${mine.url}): that run, if it is still going, receives nothing more.`,
            );
          await call('PATCH', `/v1/webhooks/${mine.id}/`, { ...fields, enabled: true });
          // The secret is never shown again after creation: a rotation hands this run a usable one.
          const rotated = await call<{ data: Endpoint }>('POST', `/v1/webhooks/${mine.id}/rotate-secret/`);
          return { ...rotated.data, secret: rotated.data.secret as string };
        }
        cursor = page.next_cursor;
      } while (cursor);
      const created = await call<{ data: Endpoint }>('POST', '/v1/webhooks/', {
        ...fields,
        description: LISTEN_DESCRIPTION,
      });
      return { ...created.data, secret: created.data.secret as string };
    },
  };
}
