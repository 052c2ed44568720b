import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../contract/errors.js';
import { named } from '../plugin.js';

/**
 * How long a closing app waits at most for the requests still running (the grace of the process,
 * SHUTDOWN_GRACE_MS, ends it sooner when shorter).
 */
export const RUNNING_WAIT_MAX_MS = 10_000;

/**
 * The contract's 503 (with `Retry-After`, closing the connection) for a request that arrives on an
 * open keep-alive connection while the app closes: Fastify's own would be a bare body without code.
 * Registered after response-headers, so the answer carries the common headers.
 *
 * And a close that waits for the requests still running: a client that hung up leaves no
 * connection for the listener to wait on, but its handler goes on (Fastify neither stops it nor
 * runs its onResponse hooks), and the database the process closes next would end under its next
 * query. A request counts from its first hook until its answer is written, or, its client gone,
 * until its answer is given up (onSend on a destroyed response) or its handler returns (a handler
 * that writes its answer itself, after `reply.hijack()`).
 */
export const drain = named('drain', (app) => {
  let closing = false;
  const running = new Set<FastifyRequest>();
  let settled: (() => void) | undefined;
  const done = (request: FastifyRequest) => {
    running.delete(request);
    if (running.size === 0) settled?.();
  };
  app.addHook('preClose', async () => {
    closing = true;
    if (running.size === 0) return;
    app.log.info({ running: running.size }, 'waiting for the requests still running');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => (settled = resolve)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, RUNNING_WAIT_MAX_MS))),
    ]);
    clearTimeout(timer);
    if (running.size > 0) app.log.warn({ running: running.size, waitedMs: RUNNING_WAIT_MAX_MS }, 'closing with requests still running');
  });
  app.addHook('onRequest', async (request, reply) => {
    if (closing) {
      reply.header('connection', 'close');
      throw new ApiError('service_unavailable', 'The service is shutting down; retry shortly.', { 'retry-after': '1' });
    }
    running.add(request);
  });
  app.addHook('onSend', async (request, reply) => {
    if (reply.raw.destroyed) done(request);
  });
  app.addHook('onResponse', async (request) => done(request));
  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    const ended = (request: FastifyRequest, reply: FastifyReply) => {
      if (reply.sent || reply.raw.destroyed) done(request);
    };
    // The handler's own shape is kept: a promise stays a promise, a value a value.
    route.handler = function (this: FastifyInstance, request, reply) {
      let result: unknown;
      try {
        result = handler.call(this, request, reply);
      } catch (err) {
        ended(request, reply);
        throw err;
      }
      if (result instanceof Promise) return result.finally(() => ended(request, reply));
      ended(request, reply);
      return result;
    };
  });
});
