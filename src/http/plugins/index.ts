/**
 * Every plugin a face is built from, in one list. The public app (src/app.ts), the operator app
 * (src/admin/app.ts) and the console scope each register a few of these and their routes;
 * none repeats a hook, a handler or a header rule of another.
 */
export { registerContractBase, registerRequestLog, registerResponseHeaders, readBearer, type BearerHeader } from './base.js';
export { registerErrorHandling, sendError, toApiError } from './errors.js';
export { registerAuth, INVALID_TOKEN } from './auth.js';
export { AuthFailureLimiter, connectRedis, LimitCounters, redisReady, registerKeyRateLimit } from './rate-limit.js';
export { registerCaching } from './caching.js';
export { registerOperations } from './operations.js';
export { registerScopeCheck } from './scope.js';
export { registerQueryRules } from './query-rules.js';
export { contractServerOptions } from '../server-options.js';
export { lazySerializers } from '../lazy-compilers.js';
