import cluster, { type Worker } from 'node:cluster';
import client, { AggregatorRegistry, type PrometheusContentType } from 'prom-client';

/**
 * The process's own series (CPU, memory, event-loop delay, GC), made once per process: prom-client
 * starts an event-loop-delay monitor and a GC observer for each set it makes and never stops them,
 * so a set per server would leave one more of each running for every server a process builds.
 */
let processSeries: client.Registry | undefined;

function processMetrics(): client.Registry {
  if (!processSeries) {
    processSeries = new client.Registry();
    client.collectDefaultMetrics({ register: processSeries });
  }
  return processSeries;
}

export function createMetrics() {
  const own = new client.Registry();
  const requestDuration = new client.Histogram({
    name: 'kosh_http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [own],
  });
  // This server's series with the process's: one registry to render and to hand to the cluster.
  const registry = client.Registry.merge([processMetrics(), own]);
  if (cluster.isWorker) {
    // The series prom-client sends the primary when it gathers.
    joinClusterMetrics();
    AggregatorRegistry.setRegistries([registry]);
  }
  return {
    registry,
    requestDuration,
    /** The text `/metrics` answers: this process's series, or in a cluster worker the whole server's. */
    async render(): Promise<{ contentType: string; text: string }> {
      if (cluster.isWorker) return metricsFromPrimary();
      return { contentType: registry.contentType, text: await registry.metrics() };
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/*
 * `kosh serve --workers N`: every worker counts its own requests, and `/metrics` must answer for the
 * whole server whichever worker takes it. The worker that does asks the primary (METRICS_REQUEST over
 * the cluster's IPC channel); the primary gathers every worker's series with prom-client's
 * AggregatorRegistry (which sends its own request to each worker, answered by prom-client in the
 * worker from the registries set above), sums them and sends the text back (METRICS_ANSWER).
 */
const METRICS_REQUEST = 'kosh:metrics-request';
const METRICS_ANSWER = 'kosh:metrics-answer';
/** Longer than prom-client's own 5 s limit on the gathering, so its error is the one reported. */
const ANSWER_TIMEOUT_MS = 10_000;

interface MetricsRequest {
  type: typeof METRICS_REQUEST;
  id: number;
}

interface MetricsAnswer {
  type: typeof METRICS_ANSWER;
  id: number;
  contentType?: string;
  text?: string;
  error?: string;
}

function isMessage<T extends { type: string }>(message: unknown, type: T['type']): message is T {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}

/** Thrown in a worker when the primary cannot give the aggregated series; `/metrics` answers 503. */
export class ClusterMetricsError extends Error {}

const waiting = new Map<
  number,
  { resolve(value: { contentType: string; text: string }): void; reject(error: Error): void }
>();
let lastRequestId = 0;
let joined = false;

/**
 * In a cluster worker, at start (before the server is built): installs prom-client's answer to the
 * primary's gathering, with no series until createMetrics sets this worker's registry, so a worker
 * still starting answers at once instead of holding every `/metrics` up until prom-client gives up
 * on it; and listens for the primary's answers to this worker's own requests.
 */
export function joinClusterMetrics(): void {
  if (joined || !cluster.isWorker) return;
  joined = true;
  AggregatorRegistry.setRegistries([]);
  new AggregatorRegistry<PrometheusContentType>();
  process.on('message', (message: unknown) => {
    if (!isMessage<MetricsAnswer>(message, METRICS_ANSWER)) return;
    const request = waiting.get(message.id);
    if (!request) return;
    waiting.delete(message.id);
    if (message.text === undefined || message.error !== undefined) {
      request.reject(new ClusterMetricsError(message.error ?? 'no metrics in the answer'));
    } else {
      request.resolve({
        contentType: message.contentType ?? client.register.contentType,
        text: message.text,
      });
    }
  });
}

function metricsFromPrimary(): Promise<{ contentType: string; text: string }> {
  joinClusterMetrics();
  const id = ++lastRequestId;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new ClusterMetricsError('the cluster primary did not answer in time'));
    }, ANSWER_TIMEOUT_MS);
    waiting.set(id, {
      resolve: (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      reject: (error) => {
        clearTimeout(timer);
        reject(error);
      },
    });
    const request: MetricsRequest = { type: METRICS_REQUEST, id };
    process.send?.(request, undefined, undefined, (error: Error | null) => {
      if (!error) return;
      waiting.get(id)?.reject(new ClusterMetricsError(`cannot reach the primary: ${error.message}`));
      waiting.delete(id);
    });
  });
}

let aggregator: AggregatorRegistry<PrometheusContentType> | undefined;

/**
 * In the cluster primary, for each worker it forks: answers the worker's requests for the whole
 * server's series with the sum over every connected worker (prom-client's cluster aggregation:
 * counters and histograms add up, each default metric by its own rule).
 */
export function answerMetricsRequests(worker: Worker): void {
  aggregator ??= new AggregatorRegistry<PrometheusContentType>();
  const registry = aggregator;
  worker.on('message', (message: unknown) => {
    if (!isMessage<MetricsRequest>(message, METRICS_REQUEST)) return;
    const reply = (answer: Omit<MetricsAnswer, 'type' | 'id'>) => {
      if (!worker.isConnected()) return;
      const full: MetricsAnswer = { type: METRICS_ANSWER, id: message.id, ...answer };
      // A worker gone since it asked: nothing to answer.
      worker.send(full, undefined, () => {});
    };
    registry.clusterMetrics().then(
      (text) => reply({ contentType: registry.contentType, text }),
      (error: Error) => reply({ error: error.message }),
    );
  });
}
