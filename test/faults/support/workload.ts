/** What the service acknowledged (a 2xx) and must therefore still have after any fault. */
export interface Acknowledged {
  workload: string;
  id: string;
  /** Fields the object read back must still have. */
  expected: Record<string, unknown>;
}

export interface Outcome {
  status: number | 'error';
  /** When the request was sent (Date.now()) and how long it took. */
  at: number;
  ms: number;
  body?: unknown;
}

// biome-ignore lint/suspicious/noExplicitAny: each check reads the fields it knows from a response body.
type JsonBody = any;

export interface Client {
  /** JSON bodies by default; `form` posts an HTML form (the authentication page's choice). */
  request(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    encoding?: 'json' | 'form',
  ): Promise<Outcome & { body?: JsonBody }>;
}

/**
 * A kind of write the fault checks drive. `send` makes one request and returns what was
 * acknowledged; `verify` reads it back afterwards. ORDER_WORKLOAD here, PAYMENT_WORKLOAD in
 * payment-workload.ts (see docs/performance.md, "Fault suite").
 */
export interface Workload {
  name: string;
  /** One request or a short chain; everything a 2xx acknowledged is returned (a chain may acknowledge several objects). */
  send(
    client: Client,
    sequence: number,
  ): Promise<{ outcome: Outcome; acknowledged?: Acknowledged | Acknowledged[] }>;
  verify(client: Client, acknowledged: Acknowledged): Promise<boolean>;
}

export function httpClient(baseUrl: () => string, auth: string, timeoutMs: number): Client {
  return {
    async request(method, path, body, encoding = 'json') {
      const started = performance.now();
      const at = Date.now();
      const form = encoding === 'form';
      try {
        const response = await fetch(baseUrl() + path, {
          method,
          headers: {
            authorization: auth,
            ...(body === undefined
              ? {}
              : { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' }),
          },
          body:
            body === undefined
              ? undefined
              : form
                ? new URLSearchParams(body as Record<string, string>).toString()
                : JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
        });
        const text = await response.text();
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = text;
        }
        return { status: response.status, at, ms: performance.now() - started, body: parsed };
      } catch {
        return { status: 'error', at, ms: performance.now() - started };
      }
    },
  };
}

/**
 * Reads an object back for verification. Only a 404 means "not there": any other answer (a 503
 * while the service settles, a refused connection) is retried, so that `lost` never counts
 * objects the check merely failed to read.
 */
export async function readBack(client: Client, url: string): ReturnType<Client['request']> {
  let outcome = await client.request('GET', url);
  for (let attempt = 1; attempt < 10 && outcome.status !== 200 && outcome.status !== 404; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    outcome = await client.request('GET', url);
  }
  if (outcome.status !== 200 && outcome.status !== 404) {
    throw new Error(`could not read ${url} back: last answer ${outcome.status}`);
  }
  return outcome;
}

export const ORDER_WORKLOAD: Workload = {
  name: 'orders',
  async send(client, sequence) {
    const receipt = `fault-${sequence}`;
    const outcome = await client.request('POST', '/v1/orders/', {
      amount: 1000 + (sequence % 100_000),
      currency: 'INR',
      receipt,
    });
    if (outcome.status !== 200) return { outcome };
    const order = outcome.body.data;
    return {
      outcome,
      acknowledged: {
        workload: 'orders',
        id: order.id,
        expected: { amount: 1000 + (sequence % 100_000), receipt },
      },
    };
  },
  async verify(client, acknowledged) {
    const outcome = await readBack(client, `/v1/orders/${acknowledged.id}/`);
    if (outcome.status !== 200) return false;
    const order = outcome.body.data;
    return Object.entries(acknowledged.expected).every(([key, value]) => order[key] === value);
  },
};

export interface LoadRun {
  acknowledged: Acknowledged[];
  outcomes: Outcome[];
  stop(): Promise<void>;
}

/**
 * Sends `ratePerSecond` requests per second (open loop: a slow or dead service does not slow the
 * sender down), cycling through the workloads, until `stop`.
 */
export function paced(client: Client, workloads: Workload[], ratePerSecond: number): LoadRun {
  const acknowledged: Acknowledged[] = [];
  const outcomes: Outcome[] = [];
  const inFlight = new Set<Promise<void>>();
  let sequence = 0;
  const started = performance.now();
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * ratePerSecond);
    while (sequence < due) {
      const workload = workloads[sequence % workloads.length]!;
      const request = workload.send(client, sequence++).then(({ outcome, acknowledged: ack }) => {
        outcomes.push(outcome);
        if (ack) acknowledged.push(...(Array.isArray(ack) ? ack : [ack]));
      });
      inFlight.add(request);
      void request.finally(() => inFlight.delete(request));
    }
  }, 5);
  return {
    acknowledged,
    outcomes,
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
}

/** Reads back every acknowledged object; returns the counts the checks print. */
export async function verifyAll(
  client: Client,
  workloads: Workload[],
  acknowledged: Acknowledged[],
): Promise<Record<string, { acknowledged: number; found: number; lost: string[] }>> {
  const counts: Record<string, { acknowledged: number; found: number; lost: string[] }> = {};
  for (const workload of workloads) counts[workload.name] = { acknowledged: 0, found: 0, lost: [] };
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < acknowledged.length) {
        const ack = acknowledged[next++]!;
        const workload = workloads.find((w) => w.name === ack.workload)!;
        const count = counts[ack.workload]!;
        count.acknowledged++;
        if (await workload.verify(client, ack)) count.found++;
        else count.lost.push(ack.id);
      }
    }),
  );
  return counts;
}

export function printCounts(check: string, counts: Awaited<ReturnType<typeof verifyAll>>): void {
  for (const [name, count] of Object.entries(counts)) {
    process.stdout.write(
      `[${check}] ${name}: acknowledged ${count.acknowledged}, found ${count.found}, lost ${count.lost.length}\n`,
    );
  }
}

/** Ids of the key's events of the given types from the events API (every page); `filter` narrows them. */
export async function eventIdsOf(client: Client, types: readonly string[], filter = ''): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.request(
      'GET',
      `/v1/events/?limit=100${filter}${cursor ? `&cursor=${cursor}` : ''}`,
    );
    if (page.status !== 200) throw new Error(`the events API answered ${page.status}`);
    for (const event of page.body.data) if (types.includes(event.type)) ids.push(event.id);
    cursor = page.body.has_more ? page.body.next_cursor : undefined;
  } while (cursor);
  return ids;
}
