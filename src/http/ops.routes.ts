import { Type } from 'typebox';
import type { Db } from '../db/db.js';
import type { App } from './app-types.js';
import type { Metrics } from './metrics.js';

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
  app.get('/metrics', { schema: hide }, async (_request, reply) => {
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
