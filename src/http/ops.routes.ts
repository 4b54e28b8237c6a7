import { Type } from 'typebox';
import type { Db } from '../db/db.js';
import type { App } from './app-types.js';
import { ClusterMetricsError, type Metrics } from './metrics.js';

/** Operator endpoints: liveness, readiness, Prometheus metrics. No credentials; keep them off the public edge. */
export function registerOpsRoutes(app: App, deps: { db: Db; metrics: Metrics }): void {
  const hide = { hide: true };
  app.get(
    '/healthz',
    { schema: { ...hide, response: { 200: Type.Object({ status: Type.String() }) } } },
    async () => ({
      status: 'ok',
    }),
  );
  app.get('/readyz', { schema: hide }, async (_request, reply) => {
    try {
      await deps.db.ping();
      return { status: 'ok', database: deps.db.kind };
    } catch {
      return reply.code(503).send({ status: 'unavailable', database: deps.db.kind });
    }
  });
  // Under `kosh serve --workers N` the whole server's series, summed over the workers (./metrics.ts).
  app.get('/metrics', { schema: hide }, async (request, reply) => {
    try {
      const { contentType, text } = await deps.metrics.render();
      return reply.type(contentType).send(text);
    } catch (error) {
      if (!(error instanceof ClusterMetricsError)) throw error;
      // Never one worker's share in place of the total: a scrape that fails is the honest answer.
      request.log.warn({ err: error }, 'metrics could not be gathered from the workers');
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send(`metrics unavailable: ${error.message}\n`);
    }
  });
}
