import cluster from 'node:cluster';
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { startAdminListeners } from './admin/listen.js';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { sql, type DatabaseExecutor } from './db/executor.js';
import { migrate } from './db/migrate.js';
import { openDatabase } from './db/open.js';
import { purgeIdempotencyRecords } from './db/repositories/idempotency.js';
import { startAlertSchedule } from './jobs/alerts.js';
import { startRetentionSchedule } from './jobs/retention.js';
import { startRoundSchedule } from './jobs/rounds.js';
import { WebhookWorker } from './jobs/webhooks.js';
import { KEEP_ALIVE_HINT_S, QUIET_MAX_MS, trackConnections, type ConnectionDrain } from './http/drain.js';
import { addressMatcher, answerNodeErrorsInContractShape } from './http/node-server.js';
import { startTracing, stopTracing, type Tracing } from './telemetry/index.js';

export interface RunningServer {
  app: FastifyInstance;
  db: DatabaseExecutor;
  address: string;
  metricsAddress?: string;
  /** The operator API's TCP address and Unix socket, when served. */
  adminAddress?: string;
  adminSocket?: string;
  close(): Promise<void>;
}

const PURGE_EVERY_MS = 10 * 60_000;

/** How long a shutdown waits for the last spans to reach the collector (within SHUTDOWN_GRACE_MS). */
const TRACES_FLUSH_MS = 3_000;

/** config -> traces -> database -> migrations -> listen. Returns a handle that shuts down gracefully. */
export async function startServer(config: Config, opts: { db?: DatabaseExecutor } = {}): Promise<RunningServer> {
  // Traces (off unless OTEL_* says otherwise) first: a start that fails still exports what it traced.
  const log = tracingLog(config.logLevel);
  const tracing = await startTracing(config.traces, log);
  try {
    return await serve(config, opts, tracing);
  } catch (err) {
    await stopTracing(tracing, TRACES_FLUSH_MS, log);
    throw err;
  }
}

/** The SDK's warnings, from before the app's logger exists: a JSON line on stdout as pino writes one. */
function tracingLog(level: string) {
  const quiet = ['error', 'fatal', 'silent'].includes(level);
  return {
    warn: (obj: object, msg: string) =>
      void (quiet || process.stdout.write(`${JSON.stringify({ level: 40, time: Date.now(), pid: process.pid, ...obj, msg })}\n`)),
  };
}

async function serve(config: Config, opts: { db?: DatabaseExecutor }, tracing: Tracing | undefined): Promise<RunningServer> {
  const db = opts.db ?? (await openDatabase(config));
  await migrate(db);
  await warmPool(db, config.dbPoolMax);
  let draining = false;
  const app = await buildApp(config, {
    db,
    draining: () => draining,
    traces: tracing !== undefined,
    logger: {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
    },
  });
  answerNodeErrorsInContractShape(app.server, {
    requestTimeoutMs: config.requestTimeoutMs,
    headersTimeoutMs: config.headersTimeoutMs,
    maxConnections: config.maxConnections,
    // The socket's address: behind TRUST_PROXY the proxies carry everyone's connections, and limiting
    // per forwarded client is the proxy's job (docs/deployment.md).
    maxConnectionsPerAddress: config.maxConnectionsPerAddress,
    exempt: addressMatcher(config.trustProxy),
    log: app.log,
  });
  // Clients are told 5 s; the server keeps idle connections 72 s (Fastify's), longer than load balancers do.
  const publicDrain = trackConnections(app.server, { keepAliveHintS: KEEP_ALIVE_HINT_S });
  warnOfLooseLimits(config, app.log);
  const address = await app.listen({ port: config.port, host: config.host });
  // Every listener before any background job: a port that cannot be taken (EADDRINUSE) stops the
  // start with the listeners already open closed, and no job left running on a pool about to end.
  let admin: Awaited<ReturnType<typeof startAdminListeners>> | undefined;
  let metrics: Awaited<ReturnType<typeof serveMetrics>> | undefined;
  try {
    admin = await startAdminListeners(config, db, app.log); // the operator API: never on the public port
    metrics = config.metricsPort ? await serveMetrics(app, config.host, config.metricsPort) : undefined;
  } catch (err) {
    await admin?.close().catch(() => undefined);
    await app.close().catch(() => undefined);
    throw err;
  }
  const operator = admin;
  // Every process purges; the DELETE is idempotent, so several doing it at once is harmless.
  const purge = () =>
    purgeIdempotencyRecords(db, config.idempotencyRetentionHours).then(
      (n) => n > 0 && app.log.info({ purged: n }, 'purged expired idempotency records'),
      (err) => app.log.warn({ err }, 'idempotency purge failed'),
    );
  const purgeTimer = setInterval(purge, PURGE_EVERY_MS);
  purgeTimer.unref();
  void purge();
  // Every process runs the alert engine on its own timer; the unique index keeps each alert single.
  const alerts = startAlertSchedule({ db, config, log: app.log });
  // Every process delivers webhooks; claims with SKIP LOCKED keep them from sending one delivery twice.
  const webhooks = new WebhookWorker(db, {
    pollMs: config.webhookPollMs,
    timeoutMs: config.webhookTimeoutMs,
    retryScheduleMs: config.webhookRetryScheduleMs,
    allowPrivate: config.webhookAllowPrivate,
    registry: app.metrics,
    log: app.log,
  });
  webhooks.start();
  // Every process runs the check-in rounds; each link is leased by one process, so each mail goes once.
  const rounds = await startRoundSchedule({ db, config, log: app.log });
  // Every process enforces the organizations' retention; a row is deleted once, whoever gets it.
  const retention = startRetentionSchedule({ db, log: app.log });
  const drains = [publicDrain, ...operator.drains, ...(metrics ? [metrics.drain] : [])];
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const timer = setTimeout(() => {
        app.log.error({ graceMs: config.shutdownGraceMs }, 'shutdown took too long; exiting');
        process.exit(1);
      }, config.shutdownGraceMs);
      timer.unref();
      // The last resort, a second before the grace ends: connections still idle then are closed
      // however short their idleness, so that the process still exits 0 (docs/deployment.md).
      const lastResort = setTimeout(
        () => {
          const closed = drains.reduce((n, d) => n + d.closeIdleNow(), 0);
          if (closed > 0) app.log.info({ closed, graceMs: config.shutdownGraceMs }, 'closing idle connections before SHUTDOWN_GRACE_MS ends');
        },
        Math.max(config.shutdownGraceMs - 1_000, Math.floor(config.shutdownGraceMs * 0.8)),
      );
      lastResort.unref();
      const startedAt = Date.now();
      // /readyz says 503 at once.
      draining = true;
      clearInterval(purgeTimer);
      const alertsStopped = alerts?.stop(); // no new run; one in progress finishes before the pool closes
      const roundsStopped = rounds.stop();
      const retentionStopped = retention.stop();
      if (config.shutdownDelayMs > 0) {
        // The port still serves while load balancers see /readyz fail and stop sending; answers
        // close their connections so that clients reconnect through them, elsewhere.
        for (const d of drains) d.begin();
        const quiet = Math.min(QUIET_MAX_MS, Math.floor(config.shutdownDelayMs / 2));
        await new Promise((r) => setTimeout(r, config.shutdownDelayMs - quiet));
        // The clients still here settle on open connections before the port closes (docs/deployment.md).
        for (const d of drains) d.quiet();
        await new Promise((r) => setTimeout(r, quiet));
      }
      // No new connections; requests on open ones are served, answered with Connection: close.
      await Promise.all(drains.map((d) => d.stopListening()));
      const drainedMs = Date.now() - startedAt;
      await operator.close();
      await app.close(); // its onClose hooks: Redis, the key-usage flush
      await alertsStopped;
      await roundsStopped;
      await retentionStopped;
      await webhooks.close();
      await db.close();
      await stopTracing(tracing, TRACES_FLUSH_MS, app.log); // the spans of everything above, exported
      clearTimeout(timer);
      clearTimeout(lastResort);
      app.log.info({ drainedMs, totalMs: Date.now() - startedAt }, 'shutdown complete');
    })());
  return { app, db, address, metricsAddress: metrics?.address, adminAddress: admin.address, adminSocket: admin.socketPath, close };
}

/**
 * Opens the pool's connections before listening: a cold process's first burst otherwise opened
 * them all at once, on top of its first requests (issue 20, finding 9).
 */
async function warmPool(db: DatabaseExecutor, poolMax: number) {
  if (db.kind !== 'pg') return;
  const ping = sql('startup.warm_pool', 'SELECT 1 AS ok');
  await Promise.all(Array.from({ length: Math.min(poolMax, 10) }, () => db.query(ping).catch(() => undefined)));
}

/**
 * Settings that weaken a guard, said once at start (by the first worker): several processes without
 * Redis each count their own limits; WEBHOOK_ALLOW_PRIVATE sends webhooks into this machine's and
 * the private network (local development, never production).
 */
function warnOfLooseLimits(config: Config, log: FastifyInstance['log']) {
  if (cluster.isWorker && cluster.worker?.id !== 1) return;
  if (config.workers > 1 && !config.redisUrl && config.databaseUrl) {
    log.warn(`rate limits: WORKERS=${config.workers} without REDIS_URL, so each process counts its own limits (up to ${config.workers} times the plan's)`);
  }
  if (config.webhookAllowPrivate) {
    log.warn(
      'webhooks: WEBHOOK_ALLOW_PRIVATE is on, so endpoints may be http:// and on loopback or private addresses (for a receiver on this machine during development; never in production)',
    );
  }
}

export function closeOnSignals(server: RunningServer) {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      server.app.log.info({ signal }, 'shutting down');
      server.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
}

/** Prometheus metrics on their own port, never on the API port. */
async function serveMetrics(app: FastifyInstance, host: string, port: number): Promise<{ server: Server; drain: ConnectionDrain; address: string }> {
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    app.metrics.metrics().then(
      (text) => res.writeHead(200, { 'content-type': app.metrics.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  const drain = trackConnections(server);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  const a = server.address() as { port: number };
  return { server, drain, address: `http://${host}:${a.port}/metrics` };
}
