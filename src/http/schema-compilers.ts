import { AjvCompiler } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

/**
 * Fastify's own schema compilers (Ajv for requests, fast-json-stringify for responses), with each
 * compiled function kept for the life of the process and reused by every server built in it.
 *
 * Fastify compiles every route's schemas whenever a server is built, and by default keeps nothing
 * between servers: a second server in the same process (a CLI command next to `kosh serve`, a test
 * suite's server per database) paid the whole compilation again, most of the cost of building one.
 * A compiled validator or serializer depends only on the schema's JSON, the shared schemas it may
 * reference and the compiler options, so that is the key. Each distinct schema is compiled once;
 * the cache holds one entry per schema of the route table, whatever the number of servers.
 */

interface RouteSchema {
  schema: unknown;
}

type Factory<Compiled> = (
  externalSchemas: unknown,
  options: unknown,
) => (route: RouteSchema & Record<string, unknown>) => Compiled;

function keptForTheProcess<Compiled>(factory: Factory<Compiled>): Factory<Compiled> {
  const compiled = new Map<string, Compiled>();
  return (externalSchemas, options) => {
    const context = JSON.stringify([externalSchemas, options]);
    const compile = factory(externalSchemas, options);
    return (route) => {
      const key = `${context}\u0000${JSON.stringify(route.schema)}`;
      let fn = compiled.get(key);
      if (fn === undefined) {
        fn = compile(route);
        compiled.set(key, fn);
      }
      return fn;
    };
  };
}

// One Ajv compiler pool for the process (it already pools Ajv instances by shared schemas and options).
const validators = keptForTheProcess(AjvCompiler() as unknown as Factory<unknown>);
const serializers = keptForTheProcess(SerializerSelector() as unknown as Factory<unknown>);

/** Fastify's `schemaController` option. */
export const schemaController = {
  compilersFactory: {
    buildValidator: validators,
    buildSerializer: serializers,
  },
} as const;
