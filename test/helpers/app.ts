import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { loadDataset, type Dataset } from '../../src/domain/dataset.js';
import { randomBytes } from 'node:crypto';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase } from './db.js';
import { expectDocumented, isDocumentedPath } from './openapi.js';

export interface TestApp extends TestDatabase {
  app: FastifyInstance;
  config: Config;
}

/**
 * A database with `dataset` loaded through the same loader as `climate-pulse load`, and
 * the app built on it with its clock pinned to `now`.
 */
export async function createTestApp(
  opts: { dataset?: Dataset; now?: Date; clock?: () => Date; env?: Record<string, string>; sheddingWarmupMs?: number } = {},
): Promise<TestApp> {
  const tdb = await createTestDatabase();
  if (opts.dataset) await loadDataset(tdb.db, opts.dataset);
  // On the PostgreSQL + Redis pass, rate limits count in Redis, under a namespace of this app's own.
  // Load shedding is off unless a test turns it on: two test workers on two cores delay event loops.
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    ...(TEST_REDIS_URL ? { REDIS_URL: TEST_REDIS_URL } : {}),
    ...opts.env,
  });
  const now = opts.now;
  const app = await buildApp(config, {
    db: tdb.db,
    now: opts.clock ?? (now ? () => new Date(now) : undefined),
    rateLimitNamespace: `climate-pulse-test:${randomBytes(6).toString('hex')}:`,
    sheddingWarmupMs: opts.sheddingWarmupMs,
    // A file answers a few of the routes: each is compiled when first used. Every `serve` the tests
    // start, and every app they build with buildApp directly (the fuzzers' among them), still
    // compiles them all at ready.
    compileOnFirstUse: true,
  });
  checkEveryAnswer(app);
  return {
    ...tdb,
    app,
    config,
    async close() {
      await app.close();
      await tdb.close();
    },
  };
}

export function bearer(key: string) {
  return { authorization: `Bearer ${key}` };
}

export async function get(app: FastifyInstance, url: string, key?: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'GET', url, headers: { ...(key ? bearer(key) : {}), ...headers } } as InjectOptions);
}

/**
 * Every answer of the versioned API that a test receives is checked against the OpenAPI
 * document: its status must be documented for the operation and its body must match.
 */
function checkEveryAnswer(app: FastifyInstance) {
  const inject = app.inject.bind(app) as (opts: InjectOptions | string) => Promise<LightMyRequestResponse>;
  (app as { inject: unknown }).inject = async (opts: InjectOptions | string) => {
    const res = await inject(opts);
    const o = typeof opts === 'string' ? { url: opts, method: 'GET' } : opts;
    const url = typeof o.url === 'string' ? o.url : String(o.url ?? '');
    const unknownRoute = res.statusCode === 404 && /No such endpoint/.test(res.body);
    if (/^\/(api\/)?v1\//.test(url) && !url.includes('/openapi.json') && !unknownRoute && (await isDocumentedPath(app, url))) {
      await expectDocumented(app, String(o.method ?? 'GET'), url, res);
    }
    return res;
  };
}
