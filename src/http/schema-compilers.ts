import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler';
import { type SerializerFactory, SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

/**
 * Fastify's own schema compilers (Ajv for requests, fast-json-stringify for responses), with each
 * compiled function kept for the life of the process and reused by every server built in it.
 *
 * Fastify compiles every route's schemas whenever a server is built, and by default keeps nothing
 * between servers: each further server in one process (the test suites build one per file and
 * database) paid the whole compilation again, most of the cost of building it. A compiled
 * validator or serializer depends only on the schema's JSON, the shared schemas it may reference
 * and the compiler options, so that is the key: each distinct schema is compiled once, whatever
 * the number of servers.
 *
 * With a compiler of its own, Fastify hands header schemas over as written instead of lower-casing
 * their property names: a route that validates headers names them in lower case.
 */

type Compilers = (externalSchemas: unknown, options: unknown) => (route: { schema: unknown }) => unknown;

function keptForTheProcess(factory: Compilers): Compilers {
  const compiled = new Map<string, unknown>();
  return (externalSchemas, options) => {
    const context = JSON.stringify([externalSchemas, options]);
    // Made only when a schema is not compiled yet: a server whose schemas all are needs no compiler.
    let compile: ReturnType<Compilers> | undefined;
    return (route) => {
      const key = `${context}\u0000${JSON.stringify(route.schema)}`;
      let fn = compiled.get(key);
      if (fn === undefined) {
        compile ??= factory(externalSchemas, options);
        fn = compile(route);
        compiled.set(key, fn);
      }
      return fn;
    };
  };
}

/** Fastify's `schemaController` option. */
export const schemaController: FastifyServerOptions['schemaController'] = {
  compilersFactory: {
    // One Ajv pool for the process (it already shares an Ajv instance per shared schemas and options).
    buildValidator: keptForTheProcess(AjvCompiler() as Compilers) as ValidatorFactory,
    buildSerializer: keptForTheProcess(SerializerSelector() as Compilers) as SerializerFactory,
  },
};
