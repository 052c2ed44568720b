import type { FastifyRequest } from 'fastify';
import { named } from '../plugin.js';

export interface RequestLogOptions {
  /** What the face adds to each line (the organization, `admin: true`). */
  fields: (request: FastifyRequest) => Record<string, unknown>;
}

/**
 * One log line per request: method, route, status, duration and what `fields` adds (the
 * organization, the face). Never a header: keys and the operator token travel in one.
 */
export const requestLog = named<RequestLogOptions>('request-log', (app, { fields }) => {
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        ...fields(request),
        method: request.method,
        route: request.routeOptions.url ?? 'unknown',
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
  });
});
