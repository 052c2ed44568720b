import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { unmatchedPath } from '../../src/http/plugins/operations.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const KEY = 'cp_test_log404_0123456789abcdef';

/**
 * Issue 42: a 404 was logged as "route":"unknown" without its path, so an operator could not tell
 * what a client asked for. The line now has the path, never the query string, and no long segment
 * whole (a key pasted into a path).
 */
describe('the request log line of a request no route matched', () => {
  let t: TestDatabase;
  const lines: string[] = [];
  let app: Awaited<ReturnType<typeof buildApp>>;
  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, {
      organizations: [{ id: 'org_log404', name: 'Log', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z', apiKeys: [{ key: KEY }] }],
    });
    const stream = new Writable({
      write(chunk, _enc, cb) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    });
    app = await buildApp(loadConfig({ LOG_LEVEL: 'info', MAX_EVENT_LOOP_DELAY_MS: '0' }), { db: t.db, logger: { level: 'info', stream } });
  });
  afterAll(async () => {
    await app.close();
    await t.close();
  });

  const entry = (reqId: string) => lines.map((l) => JSON.parse(l)).find((e) => e.reqId === reqId && e.msg === 'request');

  it('has the path of a 404, without its query string', async () => {
    const res = await app.inject({
      url: `/v1/teamz?cursor=${KEY}&token=secret-value`,
      headers: { authorization: `Bearer ${KEY}`, 'x-request-id': 'log404-1' },
    });
    expect(res.statusCode).toBe(404);
    expect(entry('log404-1')).toMatchObject({ level: 30, method: 'GET', route: 'unknown', path: '/v1/teamz', status: 404 });
    for (const l of lines) {
      expect(l).not.toContain(KEY);
      expect(l).not.toContain('secret-value');
    }
  });

  it('cuts a long segment (a key pasted into the path) to its first 8 characters', async () => {
    const res = await app.inject({ url: `/v1/keys/${KEY}/x`, headers: { 'x-request-id': 'log404-2' } });
    expect(res.statusCode).toBe(404);
    expect(entry('log404-2')).toMatchObject({ route: 'unknown', path: '/v1/keys/cp_test_…/x', status: 404 });
    expect(lines.join('\n')).not.toContain(KEY);
  });

  it('a matched route logs its route and no path', async () => {
    await app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${KEY}`, 'x-request-id': 'log404-3' } });
    const e = entry('log404-3');
    expect(e).toMatchObject({ route: '/v1/org', status: 200 });
    expect(e).not.toHaveProperty('path');
  });

  it('unmatchedPath: no fragment, at most 256 characters', () => {
    expect(unmatchedPath('/a#frag?x=1')).toBe('/a');
    expect(unmatchedPath(`/${'ab/'.repeat(200)}`)).toBe(`${(`/${'ab/'.repeat(200)}`).slice(0, 256)}…`);
  });
});
