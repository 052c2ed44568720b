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

/**
 * Fastify's own serializer compiler (fast-json-stringify), with one serializer per distinct schema:
 * routes declare the same responses again and again (the error body under each of its statuses,
 * the same page of a resource on several routes), and a served app compiled 960 serializers for
 * 96 distinct schemas. A serializer depends on its schema and on the app's shared schemas and
 * options alone, so every route, in every app of the process (the tests build hundreds), whose
 * schema has the same JSON text under the same shared schemas shares one. With `onFirstUse`, each
 * is built on its first call.
 */
export function serializerCompilers(onFirstUse: boolean): NonNullable<FastifyServerOptions['schemaController']> {
  const byContext = new Map<string, Map<string, (doc: unknown) => string>>();
  return {
    compilersFactory: {
      buildSerializer: (externalSchemas: unknown, options: unknown) => {
        const compile = SerializerSelector()(externalSchemas, options as Parameters<ReturnType<typeof SerializerSelector>>[1]);
        const context = JSON.stringify([externalSchemas ?? null, options ?? null]);
        let byText = byContext.get(context);
        if (!byText) byContext.set(context, (byText = new Map()));
        const serializers = byText;
        return (route: Parameters<typeof compile>[0]) => {
          const text = JSON.stringify(route.schema);
          let serializer = serializers.get(text);
          if (!serializer) {
            let fn: ReturnType<typeof compile> | undefined;
            serializer = onFirstUse ? (doc: unknown) => (fn ??= compile(route))(doc) : compile(route);
            serializers.set(text, serializer);
          }
          return serializer;
        };
      },
    },
  };
}

/** Serializers built on their first call (the CLI's in-process operator app, the tests' apps). */
export const lazySerializers = serializerCompilers(true);
/** Serializers built when the app gets ready (a listening server). */
export const readySerializers = serializerCompilers(false);
