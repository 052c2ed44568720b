import type { FastifyInstance, FastifyRequest } from 'fastify';
import { contractErrors } from './errors.js';
import { bodyRules } from './body-rules.js';
import { responseHeaders } from './headers.js';
import { drain } from './drain.js';
import { requestLog } from './request-log.js';
import { bearerReading } from './bearer.js';

/**
 * The base every face is built from (docs/architecture.md), as named plugins in one list: the
 * public API (src/public/), the operator API (src/admin/) and the console (src/console/, a scope
 * of the public listener) register it once per app, then their own plugins and routes; none
 * repeats a hook, a handler or a header rule of another.
 */
export interface BaseOptions {
  /** What each request's log line adds (the organization, the face). */
  logFields: (request: FastifyRequest) => Record<string, unknown>;
  /** Compile validators on first use (the CLI's in-process operator app). */
  compileOnFirstUse?: boolean;
}

export async function registerBase(app: FastifyInstance, opts: BaseOptions): Promise<void> {
  await app.register(contractErrors);
  await app.register(bodyRules, { compileOnFirstUse: opts.compileOnFirstUse });
  await app.register(responseHeaders);
  await app.register(drain);
  await app.register(requestLog, { fields: opts.logFields });
  await app.register(bearerReading);
}

export { contractErrors, sendError, toApiError, withoutValues } from './errors.js';
export { bodyRules, requireJsonObject } from './body-rules.js';
export { responseHeaders } from './headers.js';
export { drain } from './drain.js';
export { requestLog } from './request-log.js';
export { bearerReading, type BearerHeader } from './bearer.js';
export { queryRules } from './query-rules.js';
export { operations, listenerLogFields } from './operations.js';
export { contractServerOptions } from '../server-options.js';
export { lazySerializers, readySerializers } from '../lazy-compilers.js';
export type { App } from '../types.js';
export { traces } from './otel.js';
