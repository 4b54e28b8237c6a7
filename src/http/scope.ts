import type { FastifyRequest } from 'fastify';
import type { Services } from '../container.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The services this request's handler uses when they differ from the shared ones: wired over
     * the request's Idempotency-Key transaction, so that the work and the stored response commit
     * together (src/http/idempotency.ts).
     */
    services?: Services;
  }
}

/** How a route reaches one service: the request's own wiring when it has one, the shared one otherwise. */
export type ServiceOf<T> = (request: FastifyRequest) => T;

export function serviceOf<K extends keyof Services>(shared: Services, name: K): ServiceOf<Services[K]> {
  return (request) => (request.services ?? shared)[name];
}
