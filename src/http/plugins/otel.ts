import { named } from '../plugin.js';

/**
 * Each request's span, by @fastify/otel (registered only when traces are on: src/telemetry/, and the
 * package is loaded then). The request span is named by its method and route pattern, with its
 * status; the spans of its handler and preHandler hooks hang under it, and the queries' spans under
 * those (or under the request's, for the hooks before the body: a key's lookup). What any span may
 * carry is the allow-list of src/telemetry/sdk.ts: never the URL, an address, an agent, a header
 * or a body, on the check-in routes as everywhere (docs/decisions.md, "Issue 54: traces").
 */
export const traces = named('traces', async (app) => {
  const { FastifyOtelInstrumentation } = await import('@fastify/otel');
  const instrumentation = new FastifyOtelInstrumentation({
    // The handler and the preHandler hooks (a console session's lookup) run after the body is read,
    // outside the request's context: their spans carry it to the queries they make.
    instrumentHooks: ['preHandler'],
    instrumentHandler: true,
    recordExceptions: false,
    ignorePaths: () => false, // and not OTEL_FASTIFY_IGNORE_PATHS: the configuration is src/config.ts's
    requestHook: (span, request) => {
      span.updateName(request.routeOptions.url ? `${request.method} ${request.routeOptions.url}` : request.method);
    },
    // `handler /v1/pulses`, `preHandler`: not the library's plugin names, which for an anonymous
    // plugin are the first characters of its source (the function's own name is `hook.callback.name`).
    lifecycleHook: (span, { hookName, request }) => {
      span.updateName(hookName === 'handler' ? `handler ${request.routeOptions.url}` : hookName);
    },
  });
  await app.register(instrumentation.plugin());
});
