import type { KeyUsageRecorder } from '../domain/key-usage.js';
import type { KeyResolver } from '../domain/keys.js';
import { queryRules, type App } from '../http/plugins/index.js';
import { ALIAS_PREFIX, API_PREFIX, registerOpenApi } from './openapi.js';
import { registerDocs } from './docs.js';
import { registerAuth } from './plugins/auth.js';
import { registerKeyRateLimit, type AuthFailureLimiter, type LimitCounters } from './plugins/rate-limit.js';
import { registerScopeCheck } from './plugins/scope.js';
import { registerApiRoutes } from './routes/index.js';
import type { RouteDeps } from './routes/types.js';

export { caching } from './plugins/caching.js';
export { AuthFailureLimiter, connectRedis, LimitCounters, redisReady } from './plugins/rate-limit.js';
export type { RouteDeps } from './routes/types.js';

export interface PublicApiOptions {
  routes: RouteDeps;
  keys: KeyResolver;
  authFailures: AuthFailureLimiter;
  counters: LimitCounters;
  usage: KeyUsageRecorder;
}

/** The public API's document (/openapi.json and under each prefix) and its reference (/docs). */
export async function registerPublicDocuments(app: App, opts: { publicBaseUrl?: string }) {
  await registerOpenApi(app, opts);
  await registerDocs(app);
}

/** The versioned API under /v1 and its alias /api/v1: keys, rate limits, scopes, query rules, routes. */
export async function registerPublicApi(app: App, opts: PublicApiOptions) {
  const versioned = async (scope: App) => {
    registerAuth(scope, opts.keys, opts.authFailures, opts.usage);
    await registerKeyRateLimit(scope, opts.counters);
    registerScopeCheck(scope);
    await scope.register(queryRules);
    registerApiRoutes(scope, opts.routes);
  };
  await app.register(versioned, { prefix: API_PREFIX });
  await app.register(versioned, { prefix: ALIAS_PREFIX });
}
