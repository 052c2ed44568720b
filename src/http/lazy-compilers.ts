import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify';

/**
 * Routes whose validators and serializers are compiled on their first use instead of when the app
 * gets ready. For the CLI's in-process operator app, which answers one or two requests and exits:
 * compiling every route's schemas (Ajv and fast-json-stringify) was about a fifth of each command's
 * run. A listening server keeps compiling at ready, so no first request pays for it.
 */

/** A validator compiler whose validators compile on their first call; Fastify reads `errors` after each call. */
export function lazyValidatorCompiler(compile: FastifySchemaCompiler<unknown>): FastifySchemaCompiler<unknown> {
  return (route) => {
    let fn: ReturnType<FastifySchemaCompiler<unknown>> | undefined;
    const lazy: ReturnType<FastifySchemaCompiler<unknown>> = (data) => {
      fn ??= compile(route);
      const result = fn(data);
      lazy.errors = fn.errors;
      return result;
    };
    return lazy;
  };
}

/** Fastify's own serializer compiler (fast-json-stringify), building each serializer on its first call. */
export const lazySerializers: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: {
    buildSerializer: (externalSchemas: unknown, options: unknown) => {
      const compile = SerializerSelector()(externalSchemas, options as Parameters<ReturnType<typeof SerializerSelector>>[1]);
      return (route: Parameters<typeof compile>[0]) => {
        let fn: ReturnType<typeof compile> | undefined;
        return (doc: unknown) => (fn ??= compile(route))(doc);
      };
    },
  },
};
