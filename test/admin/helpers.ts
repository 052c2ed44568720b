import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildAdminApp } from '../../src/admin/app.js';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { loadDataset, type Dataset } from '../../src/domain/dataset.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

export const TOKEN = 'test-admin-token-0123456789abcdef0123';

export interface AdminTest extends TestDatabase {
  admin: FastifyInstance;
  app: FastifyInstance;
  config: Config;
  call(method: InjectOptions['method'], url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
}

/** The operator app (with the token) and the public app on one fresh database. */
export async function createAdminTest(opts: { dataset?: Dataset; env?: Record<string, string> } = {}): Promise<AdminTest> {
  const tdb = await createTestDatabase();
  if (opts.dataset) await loadDataset(tdb.db, opts.dataset);
  const config = loadConfig({ LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', KEY_CACHE_TTL_MS: '0', ...opts.env });
  const admin = await buildAdminApp(config, { db: tdb.db, token: TOKEN });
  const app = await buildApp(config, { db: tdb.db, rateLimitNamespace: `t-${Math.random()}:` });
  return {
    ...tdb,
    admin,
    app,
    config,
    call: (method, url, body, headers = {}) =>
      admin.inject({ method, url, headers: { authorization: `Bearer ${TOKEN}`, ...headers }, ...(body === undefined ? {} : { payload: body as object }) } as InjectOptions),
    async close() {
      await admin.close();
      await app.close();
      await tdb.close();
    },
  };
}
