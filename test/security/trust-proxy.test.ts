import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { sql } from '../../src/db/executor.js';
import { loadDataset, type Dataset } from '../../src/domain/dataset.js';
import { hashKey } from '../../src/domain/keys.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase } from '../helpers/db.js';

/**
 * Issue 26, item 8. Behind a reverse proxy every client had the proxy's address: 31 bad keys from
 * anyone locked every tenant out for a minute (429 for valid keys), and nothing could say which
 * proxy to believe. TRUST_PROXY names the proxies; the failed-authentication limit counts per
 * client address as they report it; and a key that authenticated from an address is still served
 * when that address goes over its limit (a guesser behind the same NAT locks out no one else).
 */
const LIMIT = 3;
const KEY_A = 'cp_test_proxy_a_0123456789abcdef';
const KEY_B = 'cp_test_proxy_b_0123456789abcdef';
const KEY_C = 'cp_test_proxy_c_0123456789abcdef';
const dataset = (): Dataset => ({
  organizations: [
    {
      id: 'org_p',
      name: 'P',
      plan: 'enterprise',
      createdAt: '2026-01-01T00:00:00.000Z',
      apiKeys: [{ key: KEY_A }, { key: KEY_B }, { key: KEY_C }],
    },
  ],
});
const PROXY = '10.0.0.7';
const PROXY6 = 'fd00::7';
const bad = (i: number) => `cp_live_guess_${i}_${randomBytes(8).toString('hex')}`;

type Via = { remoteAddress: string; forwardedFor?: string };
const call = (app: FastifyInstance, key: string, via: Via) =>
  app.inject({
    url: '/v1/org',
    remoteAddress: via.remoteAddress,
    headers: { authorization: `Bearer ${key}`, ...(via.forwardedFor ? { 'x-forwarded-for': via.forwardedFor } : {}) },
  });
/** LIMIT bad keys (401), then one more: 429. */
async function flood(app: FastifyInstance, via: Via) {
  for (let i = 0; i < LIMIT; i++) expect((await call(app, bad(i), via)).statusCode).toBe(401);
  const over = await call(app, bad(99), via);
  expect(over.statusCode).toBe(429);
  expect(over.json()).toEqual({ error: { code: 'rate_limited', message: 'Too many failed authentications from this address; wait before retrying.' } });
}

describe('TRUST_PROXY configuration', () => {
  const config = (value?: string) => loadConfig({ LOG_LEVEL: 'silent', ...(value === undefined ? {} : { TRUST_PROXY: value }) });

  it('is unset by default (no proxy is trusted) and takes addresses and CIDRs, IPv4 and IPv6', () => {
    expect(config().trustProxy).toBeUndefined();
    expect(config(' 10.0.0.7, 10.1.0.0/16,fd00::/8 , ::1,2001:db8::42/128 ').trustProxy).toEqual([
      '10.0.0.7',
      '10.1.0.0/16',
      'fd00::/8',
      '::1',
      '2001:db8::42/128',
    ]);
  });

  it.each([
    ['10.0.0.7,proxy.internal', '"proxy.internal"'],
    ['10.0.0.0/33', '"10.0.0.0/33"'],
    ['fd00::/129', '"fd00::/129"'],
    ['0.0.0.0/0', '"0.0.0.0/0"'],
    ['010.0.0.1', '"010.0.0.1"'],
    ['10.0.0.0/255.0.0.0', '"10.0.0.0/255.0.0.0"'],
    ['fe80::1%eth0', '"fe80::1%eth0"'],
    ['::ffff:10.0.0.0/8', '"::ffff:10.0.0.0/8"'],
  ])('refuses %s at start, naming the entry', (value, entry) => {
    expect(() => config(value)).toThrow(
      `invalid configuration: TRUST_PROXY=${JSON.stringify(value)} has ${entry}, which is not an IPv4 or IPv6 address or CIDR (such as 10.0.0.7, 10.0.0.0/8 or fd00::/8)`,
    );
  });

  it('refuses an empty entry', () => {
    expect(() => config('10.0.0.7,,10.0.0.8')).toThrow(
      'invalid configuration: TRUST_PROXY="10.0.0.7,,10.0.0.8" has an empty entry (a comma-separated list of proxy addresses or CIDRs)',
    );
  });
});

describe('behind trusted proxies, the failed-authentication limit counts per client', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ dataset: dataset(), env: { AUTH_FAILURES_PER_MINUTE: String(LIMIT), TRUST_PROXY: `${PROXY},fd00::/8` } });
  });
  afterAll(() => t.close());

  it('31 bad keys from one client through the proxy lock out that client only: another client through the same proxy gets 200 with its valid key', async () => {
    await flood(t.app, { remoteAddress: PROXY, forwardedFor: '203.0.113.5' });
    expect((await call(t.app, KEY_A, { remoteAddress: PROXY, forwardedFor: '203.0.113.5' })).statusCode).toBe(429);
    expect((await call(t.app, KEY_A, { remoteAddress: PROXY, forwardedFor: '198.51.100.9' })).statusCode).toBe(200);
    // The client cannot escape by sending its own X-Forwarded-For: the proxy appends the address it saw.
    expect((await call(t.app, bad(7), { remoteAddress: PROXY, forwardedFor: '192.0.2.1, 203.0.113.5' })).statusCode).toBe(429);
  });

  it('IPv6: a trusted CIDR, the client behind it', async () => {
    await flood(t.app, { remoteAddress: PROXY6, forwardedFor: '2001:db8::5' });
    // Another address of the same /64 is the same client (issue 52); another /64 is another.
    expect((await call(t.app, KEY_B, { remoteAddress: PROXY6, forwardedFor: '2001:db8::6' })).statusCode).toBe(429);
    expect((await call(t.app, KEY_B, { remoteAddress: PROXY6, forwardedFor: '2001:db8:0:1::6' })).statusCode).toBe(200);
  });

  it("an untrusted sender's X-Forwarded-For is ignored: it is counted by its own address whatever it claims", async () => {
    for (let i = 0; i < LIMIT; i++) expect((await call(t.app, bad(i), { remoteAddress: '192.0.2.50', forwardedFor: `198.18.0.${i}` })).statusCode).toBe(401);
    expect((await call(t.app, bad(9), { remoteAddress: '192.0.2.50', forwardedFor: '198.18.0.200' })).statusCode).toBe(429);
  });
});

describe('the failed-authentication limit counts an IPv6 /64 as one address, as the console does (issue 52, M2)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ dataset: dataset(), env: { AUTH_FAILURES_PER_MINUTE: String(LIMIT) } });
  });
  afterAll(() => t.close());
  const in64 = (prefix: string, i: number) => `${prefix}:${(i + 1).toString(16)}:0:0:${(i * 7 + 3).toString(16)}`;

  it('LIMIT bad keys from LIMIT addresses of one /64: the next from a fourth address of it gets 429, a valid key there too; another /64 gets 200', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await call(t.app, bad(i), { remoteAddress: in64('2001:db8:52:1', i) })).statusCode).toBe(401);
    const over = await call(t.app, bad(9), { remoteAddress: '2001:db8:52:1:ffff:ffff:ffff:fffe' });
    expect(over.statusCode).toBe(429);
    expect(over.json().error.code).toBe('rate_limited');
    expect((await call(t.app, KEY_A, { remoteAddress: '2001:DB8:52:1::42' })).statusCode).toBe(429); // never proven there
    expect((await call(t.app, KEY_A, { remoteAddress: '2001:db8:52:2::1' })).statusCode).toBe(200);
  });

  it('a key proven from its own address is still served there once its /64 is over the limit; from a neighbour of that /64 it is not', async () => {
    expect((await call(t.app, KEY_B, { remoteAddress: '2001:db8:52:3::1' })).statusCode).toBe(200);
    for (let i = 0; i < LIMIT; i++) expect((await call(t.app, bad(i), { remoteAddress: in64('2001:db8:52:3', i) })).statusCode).toBe(401);
    expect((await call(t.app, bad(9), { remoteAddress: '2001:db8:52:3::9' })).statusCode).toBe(429);
    expect((await call(t.app, KEY_B, { remoteAddress: '2001:db8:52:3::1' })).statusCode).toBe(200);
    expect((await call(t.app, KEY_B, { remoteAddress: '2001:db8:52:3::2' })).statusCode).toBe(429);
  });

  it('an IPv4-mapped IPv6 address is its IPv4 address; IPv4 addresses stay one each', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await call(t.app, bad(i), { remoteAddress: '192.0.2.60' })).statusCode).toBe(401);
    expect((await call(t.app, bad(9), { remoteAddress: '::ffff:192.0.2.60' })).statusCode).toBe(429);
    expect((await call(t.app, bad(10), { remoteAddress: '192.0.2.61' })).statusCode).toBe(401);
  });
});

describe('past its limit, an address keeps the keys it has proven (no TRUST_PROXY: everyone shares the proxy address)', () => {
  let t: TestApp;
  let lookups = 0;
  beforeAll(async () => {
    t = await createTestApp({ dataset: dataset(), env: { AUTH_FAILURES_PER_MINUTE: String(LIMIT), KEY_CACHE_TTL_MS: '0' } });
    // Key lookups counted on the database the app uses (a wrapper, not a mock).
    const db = t.db as unknown as { query: (q: { name: string }, p?: unknown[]) => Promise<unknown[]> };
    const original = db.query.bind(db);
    db.query = (q, p) => {
      if (q.name === 'api_keys.by_hash') lookups++;
      return original(q, p);
    };
  });
  afterAll(() => t.close());

  it('a valid key used from the address before the flood is still served (200), looked up as usual; an unknown key gets 429 and is not looked up', async () => {
    const via = { remoteAddress: PROXY, forwardedFor: '203.0.113.5' }; // not trusted: ignored
    expect((await call(t.app, KEY_A, via)).statusCode).toBe(200);
    await flood(t.app, via);
    const served = await call(t.app, KEY_A, via);
    expect(served.statusCode).toBe(200);
    expect(served.json().id).toBe('org_p');
    const before = lookups;
    for (let i = 0; i < 20; i++) expect((await call(t.app, bad(100 + i), via)).statusCode).toBe(429);
    expect(lookups).toBe(before); // nothing guessed at speed
  });

  it('a key never used from that address waits like any other (429): guessing stays bounded', async () => {
    expect((await call(t.app, KEY_B, { remoteAddress: PROXY })).statusCode).toBe(429);
    expect((await call(t.app, KEY_B, { remoteAddress: '10.0.0.8' })).statusCode).toBe(200);
  });

  it('a proven key that is revoked afterwards gets 429 there, not 200', async () => {
    const via = { remoteAddress: '10.0.0.9' };
    expect((await call(t.app, KEY_C, via)).statusCode).toBe(200);
    await flood(t.app, via);
    expect((await call(t.app, KEY_C, via)).statusCode).toBe(200);
    await t.db.query(sql('test.revoke', `UPDATE api_keys SET revoked_at = now() WHERE org_id = 'org_p' AND key_hash = $1`), [hashKey(KEY_C)]);
    expect((await call(t.app, KEY_C, via)).statusCode).toBe(429);
  });
});

describe.skipIf(!TEST_REDIS_URL)('proven keys are shared between processes through Redis', () => {
  let tdb: TestDatabase;
  const apps: FastifyInstance[] = [];
  beforeAll(async () => {
    tdb = await createTestDatabase();
    await loadDataset(tdb.db, dataset());
    const namespace = `cp-proxy-${randomBytes(6).toString('hex')}:`;
    const config = loadConfig({ LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', REDIS_URL: TEST_REDIS_URL!, AUTH_FAILURES_PER_MINUTE: String(LIMIT) });
    for (let i = 0; i < 2; i++) apps.push(await buildApp(config, { db: tdb.db, rateLimitNamespace: namespace }));
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await tdb.close();
  });

  it('a key proven on one process is served by the other once the address is over its limit there', async () => {
    const via = { remoteAddress: '10.0.0.20' };
    expect((await call(apps[0], KEY_A, via)).statusCode).toBe(200);
    await flood(apps[1], via);
    expect((await call(apps[1], KEY_A, via)).statusCode).toBe(200);
    expect((await call(apps[1], KEY_B, via)).statusCode).toBe(429);
  });
});
