import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DatabaseExecutor } from '../../db/executor.js';
import { ApiError } from '../../contract/errors.js';
import { sendError } from './errors.js';
import { watchEventLoopDelay } from '../event-loop-delay.js';
import { named } from '../plugin.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Registry;
  }
}

/** The longest path segment logged as it is; longer ones (a key or token pasted into a path) keep their first 8 characters. */
const SEGMENT_MAX = 24;
/** The longest path logged. */
const PATH_MAX = 256;

/** A control character in a path segment, raw or percent-encoded (C0, DEL, and C1 as UTF-8). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this finds
const CONTROL_SEGMENT = /[\u0000-\u001f\u007f-\u009f]|%[01][0-9a-f]|%7f|%c2%[89][0-9a-f]/i;

/**
 * The path of a request no route matched, as it may be logged: never its query string or
 * fragment (a key, cursor or token may ride there), no long segment whole (a key pasted in
 * the path), no segment holding a control character (a value every face refuses, issue 52),
 * at most PATH_MAX characters.
 */
export function unmatchedPath(url: string): string {
  const path = url.split(/[?#]/, 1)[0];
  const safe = path
    .split('/')
    .map((s) => (CONTROL_SEGMENT.test(s) ? '[refused]' : s.length > SEGMENT_MAX ? `${s.slice(0, 8)}…` : s))
    .join('/');
  return safe.length > PATH_MAX ? `${safe.slice(0, PATH_MAX)}…` : safe;
}

/** What the public listener's log line adds (request-log): the key's organization, and where an unmatched request went. */
export const listenerLogFields = (request: FastifyRequest) => ({
  orgId: (request as { principal?: { orgId: string } }).principal?.orgId,
  // A request no route matched ("route":"unknown") says where it went (issue 42).
  ...(request.routeOptions.url === undefined ? { path: unmatchedPath(request.url) } : {}),
});

export interface OperationsOptions {
  db: DatabaseExecutor;
  maxEventLoopDelayMs: number;
  sheddingWarmupMs: number;
}

/**
 * The public listener's operations: the Prometheus registry, and load shedding when the event loop
 * falls behind. Registered before the base, so an overloaded process refuses before anything else.
 */
export const operations = named<OperationsOptions>('operations', (app: FastifyInstance, opts) => {
  const db = opts.db;
  const registry = new Registry();
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'http_requests_total', help: 'Requests answered, by route and status.', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer, by route and status.',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const poolStats = db.poolStats?.bind(db);
  if (poolStats) {
    new Gauge({
      name: 'db_pool_connections',
      help: 'Connections of the PostgreSQL pool, by state.',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        const s = poolStats();
        this.set({ state: 'total' }, s.total);
        this.set({ state: 'idle' }, s.idle);
        this.set({ state: 'waiting' }, s.waiting);
      },
    });
  }
  app.decorate('metrics', registry);

  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unknown', status: String(reply.statusCode) };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
  });

  if (opts.maxEventLoopDelayMs > 0) {
    let readyAt = Number.POSITIVE_INFINITY;
    const loop = watchEventLoopDelay();
    app.addHook('onReady', async () => {
      readyAt = Date.now();
    });
    app.addHook('onClose', async () => loop.stop());
    app.addHook('onRequest', async (request, reply) => {
      const delay = loop.delayMs();
      // Start-up (migrations, module loading, JIT) delays the loop without any load: serve normally.
      if (delay <= opts.maxEventLoopDelayMs || Date.now() - readyAt < opts.sheddingWarmupMs) return;
      app.log.warn({ type: 'eventLoopDelay', value: Math.round(delay) }, 'shedding load');
      reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff').header('cache-control', 'no-store');
      return sendError(reply, new ApiError('service_unavailable', 'The service is overloaded; retry shortly.', { 'retry-after': '5' }));
    });
  }
});
