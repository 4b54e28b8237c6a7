import autocannon from 'autocannon';
import type { Fixtures, Scenario, Vars } from './scenarios.js';

export interface LoadOptions {
  url: string;
  auth?: string;
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** CPU seconds the server (all its processes) has used so far; gives the CPU cost per request. */
  serverCpuSeconds?: () => number;
  /** CPU seconds the PostgreSQL backends serving the bench database have used so far. */
  databaseCpuSeconds?: () => Promise<Map<number, number>>;
}

export interface Measured {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  non2xx: number;
  timeouts: number;
  /** Server CPU time per request in microseconds (all worker processes; the database not included). */
  cpu_us: number;
  /** PostgreSQL backend CPU time per request in microseconds (0 on PGlite: it runs inside the server). */
  db_cpu_us: number;
}

type Request = autocannon.Request;

/** Turns the scenario's steps into autocannon's request pipeline; static steps stay pre-built. */
function requests(scenario: Scenario, fixtures: Fixtures, auth: string | undefined): Request[] {
  const headers: Record<string, string> = auth ? { authorization: auth } : {};
  return scenario.steps.map((step) => {
    const dynamic = typeof step.path === 'function' || typeof step.body === 'function';
    const build = (vars: Vars): Request => {
      const path = typeof step.path === 'function' ? step.path(fixtures, vars) : step.path;
      const bodyValue = typeof step.body === 'function' ? step.body(fixtures, vars) : step.body;
      if (bodyValue === undefined) return { method: step.method, path, headers };
      const form = step.encoding === 'form';
      return {
        method: step.method,
        path,
        headers: {
          ...headers,
          'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json',
        },
        body: form
          ? new URLSearchParams(bodyValue as Record<string, string>).toString()
          : JSON.stringify(bodyValue),
      };
    };
    const request: Request = dynamic
      ? {
          setupRequest: (_request: Request, context: object) =>
            build((context as { vars?: Vars }).vars ?? {}),
        }
      : build({});
    if (step.capture) {
      const capture = step.capture;
      request.onResponse = (status: number, body: string, context: object) => {
        if (status >= 200 && status < 300) {
          const holder = context as { vars?: Vars };
          holder.vars ??= {};
          // JSON bodies parsed; anything else (an HTML authentication page) handed over as text.
          let parsed: unknown = body;
          try {
            parsed = JSON.parse(body);
          } catch {}
          capture(parsed, holder.vars);
        }
      };
    }
    return request;
  });
}

async function fire(options: LoadOptions, pipeline: Request[], durationSeconds: number) {
  return autocannon({
    url: options.url,
    connections: options.connections,
    duration: durationSeconds,
    requests: pipeline,
    timeout: 10,
  });
}

/** Runs the scenario for the warm-up time only, measuring nothing (a server's first pass through its code). */
export async function warmUp(options: LoadOptions, scenario: Scenario, fixtures: Fixtures): Promise<void> {
  if (options.warmupSeconds > 0)
    await fire(options, requests(scenario, fixtures, options.auth), options.warmupSeconds);
}

/** Runs the scenario for a short warm-up (discarded: JIT, pools, caches), then for the measured time. */
export async function measure(
  options: LoadOptions,
  scenario: Scenario,
  fixtures: Fixtures,
): Promise<Measured> {
  const pipeline = requests(scenario, fixtures, options.auth);
  if (options.warmupSeconds > 0) await fire(options, pipeline, options.warmupSeconds);
  const cpuBefore = options.serverCpuSeconds?.() ?? 0;
  const dbBefore = (await options.databaseCpuSeconds?.()) ?? new Map<number, number>();
  const result = await fire(options, pipeline, options.durationSeconds);
  const cpuSeconds = (options.serverCpuSeconds?.() ?? 0) - cpuBefore;
  // Per backend: one opened during the run counts whole, one closed during it is lost (rare: pools stay warm).
  let dbSeconds = 0;
  for (const [pid, seconds] of (await options.databaseCpuSeconds?.()) ?? []) {
    dbSeconds += seconds - (dbBefore.get(pid) ?? 0);
  }
  const perRequest = (seconds: number) =>
    result.requests.total > 0 ? Math.round((seconds * 1e6) / result.requests.total) : 0;
  return {
    requests: result.requests.total,
    rps: Math.round(result.requests.total / result.duration),
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: result.errors,
    non2xx: result.non2xx,
    timeouts: result.timeouts,
    cpu_us: perRequest(cpuSeconds),
    db_cpu_us: perRequest(Math.max(0, dbSeconds)),
  };
}
