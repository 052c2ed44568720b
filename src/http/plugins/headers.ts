import { named } from '../plugin.js';

/** `X-Request-Id`, `nosniff` and `no-store` on every answer of every face. */
export const responseHeaders = named('response-headers', (app) => {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('cache-control', 'no-store');
  });
});
