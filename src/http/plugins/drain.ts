import { ApiError } from '../../contract/errors.js';
import { named } from '../plugin.js';

/**
 * The contract's 503 (with `Retry-After`, closing the connection) for a request that arrives on an
 * open keep-alive connection while the app closes: Fastify's own would be a bare body without code.
 * Registered after response-headers, so the answer carries the common headers.
 */
export const drain = named('drain', (app) => {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (closing) {
      reply.header('connection', 'close');
      throw new ApiError('service_unavailable', 'The service is shutting down; retry shortly.', { 'retry-after': '1' });
    }
  });
});
