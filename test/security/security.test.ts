import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { KEY_A, writesDataset } from '../http/writes/fixture.js';

/** Claims of docs/security.md about what the database keeps of secrets and request bodies. */
describe('what the database stores of secrets and bodies', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ dataset: writesDataset() });
  });
  afterAll(() => t.close());

  it('keeps an API key only as its SHA-256 hash and a short display prefix, never the secret', async () => {
    const rows = await t.db.query<{ key_hash: Buffer; prefix: string }>(
      sql('test.keys', `SELECT key_hash, prefix FROM api_keys WHERE org_id = 'org_a' ORDER BY prefix`),
    );
    const expected = [KEY_A, 'cp_test_writes_a2_0123456789abcdef'].map((k) => ({ hash: createHash('sha256').update(k).digest('hex'), prefix: k.slice(0, 12) }));
    expect(rows.map((r) => ({ hash: Buffer.from(r.key_hash).toString('hex'), prefix: r.prefix })).sort((a, b) => a.hash.localeCompare(b.hash))).toEqual(
      expected.sort((a, b) => a.hash.localeCompare(b.hash)),
    );
    const dump = JSON.stringify(await t.db.query(sql('test.keys_all', 'SELECT * FROM api_keys')));
    expect(dump).not.toContain(KEY_A);
    expect(dump).not.toContain(KEY_A.slice(12)); // not even the secret part after the prefix
  });

  it('keeps of an idempotent request the SHA-256 of its canonical body, not the body', async () => {
    const description = 'a private description that must not be copied into idempotency_records';
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/actions',
      headers: { authorization: `Bearer ${KEY_A}`, 'idempotency-key': 'stored-secrets-01' },
      payload: { title: 'Stored', description },
    });
    expect(res.statusCode).toBe(200);
    const [rec] = await t.db.query<Record<string, unknown>>(
      sql('test.idem_row', `SELECT * FROM idempotency_records WHERE idempotency_key = 'stored-secrets-01'`),
    );
    // Keys sorted: {"description":...,"title":...}
    const canonical = JSON.stringify({ description, title: 'Stored' });
    expect(rec.body_sha256).toBe(createHash('sha256').update(canonical).digest('hex'));
    expect(rec.response_body).toBe(res.body);
    expect(JSON.stringify(rec)).not.toContain(description);
    expect(JSON.stringify(rec)).not.toContain(KEY_A);
  });
});

describe('what the log keeps of a failed request', () => {
  it('logs a 5xx with its statement but without the values the client sent', async () => {
    const { Writable } = await import('node:stream');
    const { buildApp } = await import('../../src/app.js');
    const { loadConfig } = await import('../../src/config.js');
    const { createTestDatabase } = await import('../helpers/db.js');
    const { loadDataset } = await import('../../src/domain/dataset.js');
    const t = await createTestDatabase();
    await loadDataset(t.db, writesDataset());
    // A constraint the service does not know about: the INSERT fails inside the database.
    await t.db.exec(`ALTER TABLE actions ADD CONSTRAINT test_refuse CHECK (title <> 'A title that must stay out of logs')`);
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, cb) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    });
    const app = await buildApp(loadConfig({ LOG_LEVEL: 'error', MAX_EVENT_LOOP_DELAY_MS: '0' }), { db: t.db, logger: { level: 'error', stream } });
    try {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/actions',
        headers: { authorization: `Bearer ${KEY_A}`, 'idempotency-key': 'log-params-key-01' },
        payload: { title: 'A title that must stay out of logs' },
      });
      expect(res.statusCode).toBe(500);
      expect(res.json().error.code).toBe('internal_error');
      const failed = lines.map((l) => JSON.parse(l)).filter((e) => e.msg === 'request failed');
      expect(failed).toHaveLength(1);
      expect(failed[0].err.message).toContain('test_refuse');
      const text = lines.join('\n');
      expect(text).not.toContain('A title that must stay out of logs');
      expect(text).not.toContain('log-params-key-01');
      expect(text).not.toContain(KEY_A);
    } finally {
      await app.close();
      await t.close();
    }
  });
});

describe('what a browser gets', () => {
  it('sends no CORS headers, even to a preflight: browsers on other origins cannot read answers', async () => {
    const t = await createTestApp({ dataset: writesDataset() });
    try {
      const res = await t.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${KEY_A}`, origin: 'https://evil.example' } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      const preflight = await t.app.inject({
        method: 'OPTIONS',
        url: '/v1/org',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      });
      expect(preflight.statusCode).toBe(404);
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
      expect(preflight.headers['access-control-allow-headers']).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
