import type { RouteOptions } from 'fastify';

export interface RegisteredRoute {
  method: string;
  url: string;
  config: Record<string, unknown>;
  schema: { body?: unknown; querystring?: unknown; params?: unknown } | undefined;
}

const registries = new WeakMap<object, RegisteredRoute[]>();

/**
 * Records every route as it is registered so tests (and tools) can walk them all: the rules that
 * hold for every route (unknown body fields refused, idempotency, limits) are checked per route.
 */
export function recordRoutes(app: {
  addHook(name: 'onRoute', hook: (route: RouteOptions) => void): unknown;
}): void {
  const routes: RegisteredRoute[] = [];
  registries.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      routes.push({
        method,
        url: route.url,
        config: (route.config ?? {}) as Record<string, unknown>,
        schema: route.schema as RegisteredRoute['schema'],
      });
    }
  });
}

export function registeredRoutes(app: object): readonly RegisteredRoute[] {
  return registries.get(app) ?? [];
}
