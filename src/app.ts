import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Config, consoleBaseUrl } from './config.js';
import type { DatabaseExecutor } from './db/executor.js';
import { sql } from './db/executor.js';
import { dbFailure } from './db/errors.js';
import { serviceSecret } from './db/repositories/secrets.js';
import { CommentReleases } from './domain/comments.js';
import { KeyUsageRecorder } from './domain/key-usage.js';
import { KeyResolver } from './domain/keys.js';
import { ApiError } from './contract/errors.js';
import { contractServerOptions, lazySerializers, listenerLogFields, operations, readySerializers, registerBase, traces } from './http/plugins/index.js';
import {
  AuthFailureLimiter,
  caching,
  connectRedis,
  LimitCounters,
  redisReady,
  registerPublicApi,
  registerPublicDocuments,
  type RouteDeps,
} from './public/index.js';
import { registerConsole } from './console/index.js';
import { registerCheckin } from './checkin/index.js';
import { registerScim } from './scim/index.js';
import { CheckinKeys } from './domain/checkins/keys.js';
import { TeamNames } from './domain/pulses.js';

export interface AppDeps {
  db: DatabaseExecutor;
  /** The clock; tests pin it. */
  now?: () => Date;
  logger?: FastifyServerOptions['logger'];
  /** How long after start-up event-loop delays are not treated as overload (default 5 s). */
  sheddingWarmupMs?: number;
  /** Prefix of the rate-limit keys in Redis; tests give each run its own. */
  rateLimitNamespace?: string;
  /** True from a shutdown signal on: /readyz then answers 503 while the port still serves (server.ts). */
  draining?: () => boolean;
  /** Traces are on (src/telemetry/): each request gets its span. */
  traces?: boolean;
  /**
   * Compile each route's validators and serializers on its first use, not at ready (the tests'
   * in-process apps, which answer a few routes each; a listening server compiles them all first).
   */
  compileOnFirstUse?: boolean;
}

/** Builds the whole service as a Fastify instance. It never listens; server.ts does. */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? false,
    logController: new LogController({ disableRequestLogging: true }), // one line per request, written by the operations plugin
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: config.requestTimeoutMs,
    // Only these proxies' X-Forwarded-For is believed: request.ip is the client they report (the failed-authentication limit's key).
    trustProxy: config.trustProxy ?? false,
    return503OnClosing: false, // the onRequest hook below answers in the contract's shape
    ...contractServerOptions,
    schemaController: deps.compileOnFirstUse ? lazySerializers : readySerializers,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const db = deps.db;
  const secret = config.commentCursorSecret ?? (await serviceSecret(db, 'comment_cursor_key'));
  const routeDeps: RouteDeps = {
    db,
    comments: new CommentReleases(secret, config.commentsReleaseDelayHours * 3_600_000),
    teamNames: new TeamNames(config.keyCacheTtlMs),
    now: deps.now ?? (() => new Date()),
    idempotencyRetentionHours: config.idempotencyRetentionHours,
  };
  const keys = new KeyResolver(db, config.keyCacheTtlMs);
  const redis = config.redisUrl ? connectRedis(config.redisUrl, { commandTimeoutMs: config.redisTimeoutMs, keyPrefix: config.redisKeyPrefix }) : undefined;
  if (redis) await redisReady(redis);
  const counters = new LimitCounters(app.log, redis, deps.rateLimitNamespace, config.redisTimeoutMs);
  const authFailures = new AuthFailureLimiter(counters, config.authFailuresPerMinute);
  const usage = new KeyUsageRecorder(db, 5_000, (err) => app.log.warn({ err }, 'could not record key usage'));
  app.addHook('onClose', async () => {
    redis?.disconnect();
    await usage.close();
  });

  // Before anything else, so that every hook and handler runs inside the request's span.
  if (deps.traces) await app.register(traces);
  // The public listener: its operations first (an overloaded process refuses before anything
  // else), the base every face shares, then caching, and the faces side by side: the public API's
  // documents, the console, the versioned API.
  // Embedded PGlite runs its queries on this event loop: there a delay is database work, not overload.
  await app.register(operations, {
    db,
    maxEventLoopDelayMs: db.kind === 'pglite' ? 0 : config.maxEventLoopDelayMs,
    sheddingWarmupMs: deps.sheddingWarmupMs ?? 5_000,
  });
  await registerBase(app, { logFields: listenerLogFields, compileOnFirstUse: deps.compileOnFirstUse });
  await app.register(caching);
  await registerPublicDocuments(app, { publicBaseUrl: config.publicBaseUrl });

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async () => {
    if (deps.draining?.()) throw new ApiError('service_unavailable', 'The service is shutting down.', { 'retry-after': '1' });
    try {
      await db.query(sql('health.ready', 'SELECT 1 AS ok'));
    } catch (err) {
      // Embedded: the one connection held by a long transaction (a file import) is working, not down.
      if (dbFailure(err) !== 'busy') throw new ApiError('service_unavailable', 'The database is unreachable.', { 'retry-after': '5' });
    }
    return { status: 'ready' };
  });

  await registerConsole(app, {
    db,
    now: routeDeps.now,
    comments: routeDeps.comments,
    publicBaseUrl: config.publicBaseUrl,
    listenerBaseUrl: consoleBaseUrl(config),
    mail: config.smtpUrl ? { smtpUrl: config.smtpUrl, from: config.mailFrom } : undefined,
    webhooks: { timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate },
  });
  await registerCheckin(app, {
    db,
    now: routeDeps.now,
    keys: new CheckinKeys(await serviceSecret(db, 'checkin_key_seal')),
    commentsReleaseDelayHours: config.commentsReleaseDelayHours,
    perMinute: config.checkinRequestsPerMinute,
    https: config.publicBaseUrl?.startsWith('https://') ?? false,
  });
  await registerScim(app, {
    db,
    now: routeDeps.now,
    publicBaseUrl: consoleBaseUrl(config),
    perMinute: config.scimRequestsPerMinute,
    bodyLimitBytes: config.bodyLimitBytes,
    tokenCacheTtlMs: config.keyCacheTtlMs,
  });
  await registerPublicApi(app, { routes: routeDeps, keys, authFailures, counters, usage });

  await app.ready();
  return app;
}
