import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KoshError } from '../domain/errors.js';
import { sendError } from './errors.js';

/**
 * Fastify answers an unknown method on a known path with 404; Kosh answers 405 with `Allow`.
 * Route patterns are collected as they are registered and matched when nothing else did.
 */
export function registerNotFound(app: FastifyInstance): void {
  const patterns: { regex: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (route) => {
    const source = route.url
      .replace(/\/+$/, '')
      .split('/')
      .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    const regex = new RegExp(`^${source}/?$`);
    let entry = patterns.find((pattern) => pattern.regex.source === regex.source);
    if (!entry) {
      entry = { regex, methods: new Set() };
      patterns.push(entry);
    }
    for (const method of [route.method].flat()) entry.methods.add(method);
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = new Set<string>();
    for (const pattern of patterns) {
      if (pattern.regex.test(path)) for (const method of pattern.methods) allowed.add(method);
    }
    if (allowed.size > 0) {
      reply.header('Allow', [...allowed].sort().join(', '));
      return sendError(
        reply,
        new KoshError(
          'method_not_allowed',
          `${request.method} is not allowed on ${path}; use ${[...allowed].sort().join(', ')}.`,
        ),
      );
    }
    return sendError(reply, new KoshError('route_not_found', `No endpoint ${request.method} ${path}.`));
  });
}
