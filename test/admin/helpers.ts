import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildAdminApp } from '../../src/admin/app.js';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { loadDataset, type Dataset } from '../../src/domain/dataset.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { expectDocumented } from '../helpers/openapi.js';

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
    // Every JSON answer is checked against the operator API's own document, as /v1 answers are.
    call: async (method, url, body, headers = {}) => {
      const res = await admin.inject({
        method,
        url,
        headers: { authorization: `Bearer ${TOKEN}`, ...headers },
        ...(body === undefined ? {} : { payload: body as object }),
      } as InjectOptions);
      const json = String(res.headers['content-type'] ?? '').startsWith('application/json');
      const unrouted = res.statusCode === 404 && /No such endpoint/.test(res.body);
      if (json && !unrouted && headers.authorization === undefined && !url.endsWith('/openapi.json')) await expectDocumented(admin, String(method), url, res);
      return res;
    },
    async close() {
      await admin.close();
      await app.close();
      await tdb.close();
    },
  };
}
