import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/domain/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TEST_REDIS_URL } from '../helpers/db.js';
import { freePort } from '../helpers/process.js';

const TINY = 'cp_test_faults_tiny_0123456789abcdef';
const BIG = 'cp_test_faults_big_0123456789abcdef';
const dataset = (): Dataset => ({
  plans: [{ name: 'tiny', restApi: true, rateLimitPerMinute: 5 }],
  organizations: [
    { id: 'org_tiny', name: 'Tiny', plan: 'tiny', createdAt: '2026-01-01T00:00:00.000Z', apiKeys: [{ key: TINY }] },
    { id: 'org_big', name: 'Big', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z', apiKeys: [{ key: BIG }] },
  ],
});
const auth = (key: string) => ({ authorization: `Bearer ${key}` });

/**
 * Redis killed with SIGKILL and started again on the same port. The shared Redis of the
 * machine is never touched: this file runs a redis-server of its own. It needs only the
 * redis-server binary, but like every Redis test it runs on the PostgreSQL + Redis pass.
 */
describe.skipIf(!TEST_REDIS_URL)('Redis killed and restarted', () => {
  let port: number;
  let redis: ChildProcess;
  let t: TestApp;
  const logs: string[] = [];

  const redisCli = (...args: string[]) => execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8' }).trim();

  async function startRedis() {
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      try {
        if (redisCli('ping') === 'PONG') return child;
      } catch {
        /* not up yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('redis-server did not start');
  }

  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis();
    // No waiting here: the app is built only once its Redis client is ready, so the first request counts in Redis.
    t = await createTestApp({ dataset: dataset(), env: { REDIS_URL: `redis://127.0.0.1:${port}` } });
    for (const level of ['error', 'warn'] as const) {
      t.app.log[level] = ((obj: unknown, msg?: string) => logs.push(`${level} ${typeof obj === 'string' ? obj : (msg ?? '')} ${JSON.stringify(obj)}`)) as never;
    }
  });
  afterAll(async () => {
    redis.kill('SIGKILL');
    await t.close();
  });

  it('keeps answering on local limits while Redis is gone, and counts in Redis again once it is back', async () => {
    const up = await t.app.inject({ url: '/v1/org', headers: auth(BIG) });
    expect(up.statusCode).toBe(200);
    expect(up.headers['ratelimit-remaining']).toBe('599');
    expect(Number(redisCli('dbsize'))).toBeGreaterThanOrEqual(1); // the counter lives in Redis from the first request
    expect(logs.filter((l) => l.includes('Redis unreachable'))).toHaveLength(0);

    redis.kill('SIGKILL');
    await once(redis, 'exit');
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({ url: '/v1/org', headers: auth(BIG) });
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('600');
    }
    expect(logs.filter((l) => l.includes('Redis unreachable'))).toHaveLength(1);

    redis = await startRedis(); // same port, empty
    expect(redisCli('dbsize')).toBe('0');
    // The limiter goes back to Redis by itself: within its 5 s retry delay and the client's reconnect.
    let back = false;
    for (let i = 0; i < 80 && !back; i++) {
      await new Promise((r) => setTimeout(r, 250));
      const res = await t.app.inject({ url: '/v1/org', headers: auth(BIG) });
      expect(res.statusCode).toBe(200);
      back = logs.some((l) => l.includes('Redis is reachable again'));
    }
    expect(back).toBe(true);
    expect(logs.filter((l) => l.includes('Redis is reachable again'))).toHaveLength(1);
    expect(logs.filter((l) => l.includes('Redis unreachable'))).toHaveLength(1);
    expect(Number(redisCli('dbsize'))).toBeGreaterThanOrEqual(1);

    // And the limit is enforced from Redis: exactly 5 for the tiny plan, then 429.
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await t.app.inject({ url: '/v1/org', headers: auth(TINY) })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const keys = redisCli('--scan', '--pattern', '*key:org_tiny:*').split('\n').filter(Boolean);
    expect(keys).toHaveLength(1);
    expect(redisCli('get', keys[0])).toBe('7');
  }, 60_000);
});
