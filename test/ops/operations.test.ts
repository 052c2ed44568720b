import { Writable } from 'node:stream';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { loadDataset, type Dataset } from '../../src/domain/dataset.js';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../helpers/db.js';
import { createTestApp } from '../helpers/app.js';
import { startServerProcess } from '../helpers/process.js';

const KEY = 'cp_test_ops_0123456789abcdef';
const dataset = (): Dataset => ({
  organizations: [{ id: 'org_ops', name: 'Ops', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z', apiKeys: [{ key: KEY }] }],
});

describe('logs', () => {
  let t: TestDatabase;
  const lines: string[] = [];
  let app: Awaited<ReturnType<typeof buildApp>>;
  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, dataset());
    const stream = new Writable({
      write(chunk, _enc, cb) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    });
    app = await buildApp(loadConfig({ LOG_LEVEL: 'info', MAX_EVENT_LOOP_DELAY_MS: '0' }), {
      db: t.db,
      logger: { level: 'info', stream, redact: { paths: ['req.headers.authorization'], censor: '[redacted]' } },
    });
  });
  afterAll(async () => {
    await app.close();
    await t.close();
  });

  it('writes one JSON line per request with request id, org id, route, status and duration, and never a key', async () => {
    await app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${KEY}`, 'x-request-id': 'log-test-1' } });
    await app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${KEY}x`, 'x-request-id': 'log-test-2' } });
    await app.inject({ url: `/v1/pulses?cursor=${KEY}`, headers: { authorization: `Bearer ${KEY}`, 'x-request-id': 'log-test-3' } });
    const entries = lines.map((l) => JSON.parse(l));
    const ok = entries.find((e) => e.reqId === 'log-test-1' && e.msg === 'request');
    expect(ok).toMatchObject({ level: 30, reqId: 'log-test-1', orgId: 'org_ops', method: 'GET', route: '/v1/org', status: 200 });
    expect(typeof ok.durationMs).toBe('number');
    expect(entries.find((e) => e.reqId === 'log-test-2' && e.msg === 'request')).toMatchObject({ status: 401, route: '/v1/org' });
    expect(entries.find((e) => e.reqId === 'log-test-3' && e.msg === 'request')).toMatchObject({ status: 400, route: '/v1/pulses' });
    for (const l of lines) expect(l).not.toContain(KEY);
  });
});

describe('security headers and metrics', () => {
  it('sends nosniff and no-store, never X-Powered-By, and counts requests by route and status', async () => {
    const t = await createTestApp({ dataset: dataset() });
    try {
      const res = await t.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${KEY}` } });
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['cache-control']).toBe('private, no-cache'); // issue 21: organization data may be kept privately, revalidated
      expect(res.headers['x-powered-by']).toBeUndefined();
      const err = await t.app.inject({ url: '/v1/org' });
      expect(err.headers['cache-control']).toBe('no-store');
      const text = await t.app.metrics.metrics();
      expect(text).toContain('http_requests_total{method="GET",route="/v1/org",status="200"} 1');
      expect(text).toContain('http_requests_total{method="GET",route="/v1/org",status="401"} 1');
      expect(text).toMatch(/http_request_duration_seconds_bucket\{le="0.001",method="GET",route="\/v1\/org",status="200"\} \d/);
      if (TEST_DATABASE_URL) expect(text).toMatch(/db_pool_connections\{state="total"\} \d+/);
    } finally {
      await t.close();
    }
  });

  it('sheds load with 503 and Retry-After when the event loop falls behind (PostgreSQL mode; embedded mode never sheds)', async () => {
    const t = await createTestApp({ dataset: dataset(), env: { MAX_EVENT_LOOP_DELAY_MS: '50' }, sheddingWarmupMs: 0 });
    try {
      const end = Date.now() + 600;
      while (Date.now() < end) {
        /* block the event loop, as an overloaded process would */
      }
      await new Promise((r) => setTimeout(r, 1)); // the sampler runs first, and sees the delay
      const res = await t.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${KEY}` } });
      if (!TEST_DATABASE_URL) {
        expect(res.statusCode).toBe(200); // PGlite's own work delays the loop; shedding it would only add failures
        return;
      }
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ error: { code: 'service_unavailable', message: 'The service is overloaded; retry shortly.' } });
      expect(res.headers['retry-after']).toBe('5');
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(!TEST_DATABASE_URL)('a server process', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, dataset());
  });
  afterAll(() => t.close());

  it('finishes an in-flight request on SIGTERM, then exits 0', async () => {
    const s = await startServerProcess({ DATABASE_URL: t.url! });
    const url = new URL(`${s.url}/v1/teams`);
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'idempotency-key': 'sigterm-key-1', 'content-type': 'application/json', 'content-length': 20 },
        },
        (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on('error', reject);
      req.write('{"name":'); // the request is now in flight, its body half sent
      setTimeout(() => {
        s.child.kill('SIGTERM');
        setTimeout(() => req.end('"Late team"}'), 500);
      }, 300);
    });
    const exit = new Promise<number | null>((r) => s.child.once('exit', (code) => r(code)));
    const res = await answer;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ id: expect.stringMatching(/^team_/), name: 'Late team' });
    expect(await exit).toBe(0);
  });

  it('answers 503 with Retry-After while the database is unreachable, and recovers by itself', async () => {
    // A TCP relay in front of PostgreSQL that the test can cut and restore.
    const net = await import('node:net');
    const target = new URL(TEST_DATABASE_URL!);
    const sockets = new Set<import('node:net').Socket>();
    let open = true;
    const relay = net.createServer((client) => {
      if (!open) return client.destroy();
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const drop = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const viaRelay = new URL(t.url!);
    viaRelay.host = `127.0.0.1:${(relay.address() as { port: number }).port}`;
    const { PgExecutor } = await import('../../src/db/pg.js');
    const db = new PgExecutor({ connectionString: viaRelay.toString(), max: 2 });
    const server = await buildApp(loadConfig({ LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', KEY_CACHE_TTL_MS: '0' }), { db });
    try {
      const get = () => server.inject({ url: '/v1/org', headers: { authorization: `Bearer ${KEY}` } });
      expect((await get()).statusCode).toBe(200);
      open = false;
      for (const s of sockets) s.destroy();
      const down = await get();
      expect(down.statusCode).toBe(503);
      expect(down.json().error.code).toBe('service_unavailable');
      expect(Number(down.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await server.inject({ url: '/readyz' })).statusCode).toBe(503);
      open = true;
      let back = await get();
      for (let i = 0; i < 20 && back.statusCode !== 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        back = await get();
      }
      expect(back.statusCode).toBe(200);
      expect((await server.inject({ url: '/readyz' })).statusCode).toBe(200);
    } finally {
      await server.close();
      await db.close();
      relay.close();
    }
  });
});
