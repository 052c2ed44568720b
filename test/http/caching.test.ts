import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/domain/dataset.js';
import { cacheControlFor, COMPRESS_IN_PLACE_MAX_BYTES, negotiateEncoding, noneMatchHits } from '../../src/public/plugins/caching.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { listen } from '../helpers/listen.js';

const KEY = 'cp_test_caching_0123456789abcdef';
const NOW = new Date('2026-11-20T12:00:00.000Z');
const TEAMS = ['team_web', 'team_ops', 'team_support', null];

const dataset = (): Dataset => ({
  organizations: [
    {
      id: 'org_cache',
      name: 'Cache',
      plan: 'business',
      createdAt: '2026-01-01T00:00:00.000Z',
      apiKeys: [{ key: KEY }],
      teams: [
        { id: 'team_web', name: 'Web', createdAt: '2026-01-01T00:00:00.000Z' },
        { id: 'team_ops', name: 'Operations', createdAt: '2026-01-01T00:00:00.000Z' },
        { id: 'team_support', name: 'Customer Support', createdAt: '2026-01-01T00:00:00.000Z' },
      ],
      pulses: Array.from({ length: 260 }, (_, i) => ({
        id: `p_${String(i).padStart(5, '0')}`,
        level: 1 + ((i * 7) % 5),
        reason: ['workload', 'team', 'tools', null][i % 4],
        comment: i % 3 ? `comment ${i}` : null,
        moderationStatus: i % 11 ? ('CLEAN' as const) : ('FLAGGED' as const),
        subteamId: TEAMS[i % 4],
        createdAt: new Date(NOW.getTime() - 1000 - i * 2.5 * 3_600_000).toISOString(),
      })),
    },
  ],
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A real HTTP request without any decoding, so the bytes on the wire are what is measured. */
function raw(base: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers: { authorization: `Bearer ${KEY}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const decode = (r: Raw) =>
  r.headers['content-encoding'] === 'gzip' ? gunzipSync(r.body) : r.headers['content-encoding'] === 'br' ? brotliDecompressSync(r.body) : r.body;

describe('compression and HTTP validators (issue 21)', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp({ dataset: dataset(), now: NOW });
    base = await listen(t.app);
  });
  afterAll(() => t.close());

  for (const prefix of ['/v1', '/api/v1']) {
    describe(prefix, () => {
      it('gzip and brotli a 200-pulse page to under 15% of its size, when asked, with Vary: Accept-Encoding', async () => {
        const path = `${prefix}/pulses?limit=200`;
        const plain = await raw(base, path);
        expect(plain.status).toBe(200);
        expect(plain.headers['content-encoding']).toBeUndefined();
        expect(plain.headers.vary).toBe('Accept-Encoding');
        expect(JSON.parse(plain.body.toString()).items).toHaveLength(200);
        expect(plain.body.length).toBeGreaterThan(30_000);

        for (const [accept, coding] of [
          ['gzip', 'gzip'],
          ['br', 'br'],
          ['gzip, deflate, br', 'br'],
          ['br;q=0.5, gzip', 'gzip'],
          ['*', 'br'],
        ]) {
          const packed = await raw(base, path, { 'accept-encoding': accept });
          expect(packed.status).toBe(200);
          expect(packed.headers['content-encoding'], accept).toBe(coding);
          expect(packed.headers.vary).toBe('Accept-Encoding');
          expect(Number(packed.headers['content-length'])).toBe(packed.body.length);
          expect(packed.headers['content-type']).toBe('application/json; charset=utf-8');
          expect(decode(packed).equals(plain.body)).toBe(true);
          expect(packed.body.length / plain.body.length, `${accept}: ${packed.body.length} of ${plain.body.length}`).toBeLessThan(0.15);
          // Same bytes, another representation: its own strong tag.
          expect(packed.headers.etag).toBe(String(plain.headers.etag).replace(/"$/, `-${coding}"`));
        }
        for (const accept of ['identity', 'gzip;q=0', 'br;q=0, gzip;q=0', 'deflate', '*;q=0']) {
          const r = await raw(base, path, { 'accept-encoding': accept });
          expect(r.headers['content-encoding'], accept).toBeUndefined();
          expect(r.body.equals(plain.body)).toBe(true);
        }
      });

      it('answers a second GET with the ETag by 304: no body, same validators, rate-limit headers and X-Request-Id', async () => {
        const path = `${prefix}/pulses?limit=200`;
        const first = await raw(base, path);
        const etag = String(first.headers.etag);
        expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/); // strong: no W/
        expect(first.headers['cache-control']).toBe('private, no-cache');

        const again = await raw(base, path, { 'if-none-match': etag, 'x-request-id': 'poll-42' });
        expect(again.status).toBe(304);
        expect(again.body.length).toBe(0);
        expect(again.headers.etag).toBe(etag);
        expect(again.headers['cache-control']).toBe('private, no-cache');
        expect(again.headers.vary).toBe('Accept-Encoding');
        expect(again.headers['x-request-id']).toBe('poll-42');
        expect(again.headers['ratelimit-limit']).toBe(first.headers['ratelimit-limit']);
        expect(Number(again.headers['ratelimit-remaining'])).toBeLessThan(Number(first.headers['ratelimit-remaining']));
        expect(again.headers['ratelimit-reset']).toBeDefined();
        expect(again.headers['content-type']).toBeUndefined();
        expect(again.headers['content-encoding']).toBeUndefined();

        // The compressed representation's tag, W/ and lists match too (weak comparison, RFC 9110 13.1.2).
        const gz = await raw(base, path, { 'accept-encoding': 'gzip' });
        for (const inm of [String(gz.headers.etag), `W/${etag}`, `"nope", ${etag}`, '*']) {
          const r = await raw(base, path, { 'if-none-match': inm, 'accept-encoding': 'gzip' });
          expect(r.status, inm).toBe(304);
          expect(r.body.length).toBe(0);
          expect(r.headers.etag).toBe(gz.headers.etag);
        }
        // Another page is another representation.
        const other = await raw(base, `${prefix}/pulses?limit=199`, { 'if-none-match': etag });
        expect(other.status).toBe(200);
        expect(other.headers.etag).not.toBe(etag);
        // HEAD: the same validator (HEAD is answered 200 without a body either way).
        const head = await raw(base, path, { 'if-none-match': etag }, 'HEAD');
        expect(head.status).toBe(200);
        expect(head.headers.etag).toBe(etag);
        expect(head.body.length).toBe(0);
      });

      it('gives every GET an ETag; a change gives a new one', async () => {
        for (const path of ['/stats', '/stats/daily', '/org', '/teams', '/actions', '/alerts', '/comments', '/pulses']) {
          const r = await raw(base, `${prefix}${path}`);
          expect(r.status, path).toBe(200);
          expect(r.headers.etag, path).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
          // A comments page with a next page carries a freshly sealed cursor, so its bytes differ every time.
          if (path !== '/comments') {
            expect((await raw(base, `${prefix}${path}`, { 'if-none-match': String(r.headers.etag) })).status, path).toBe(304);
          }
        }
        const before = await raw(base, `${prefix}/teams`);
        const created = await t.app.inject({
          method: 'POST',
          url: `${prefix}/teams`,
          payload: { name: `Team ${prefix}` },
          headers: { authorization: `Bearer ${KEY}`, 'idempotency-key': `caching-team-${prefix.length}` },
        });
        expect(created.statusCode).toBe(200);
        const after = await raw(base, `${prefix}/teams`, { 'if-none-match': String(before.headers.etag) });
        expect(after.status).toBe(200);
        expect(after.headers.etag).not.toBe(before.headers.etag);
      });
    });
  }

  it('says what may be kept: private for organization data, no-store for comments, errors and writes', async () => {
    expect((await raw(base, '/v1/stats')).headers['cache-control']).toBe('private, no-cache');
    expect((await raw(base, '/v1/org')).headers['cache-control']).toBe('private, no-cache');
    const comments = await raw(base, '/v1/comments');
    expect(comments.headers['cache-control']).toBe('no-store');
    expect(comments.headers.etag).toBeDefined();
    const error = await raw(base, '/v1/pulses?limit=500', { 'accept-encoding': 'gzip' });
    expect(error.status).toBe(400);
    expect(error.headers['cache-control']).toBe('no-store');
    expect(error.headers.etag).toBeUndefined();
    expect(error.headers['content-encoding']).toBeUndefined(); // under 1 KiB
    const unauthorized = await raw(base, '/v1/stats', { authorization: 'Bearer cp_live_wrong' });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers['cache-control']).toBe('no-store');
    expect(unauthorized.headers.etag).toBeUndefined();
    // An If-None-Match never turns an error into a 304.
    expect((await raw(base, '/v1/pulses?limit=500', { 'if-none-match': '*' })).status).toBe(400);
    const doc = await raw(base, '/openapi.json', { 'accept-encoding': 'gzip' });
    expect(doc.headers['cache-control']).toBe('public, max-age=300');
    expect(doc.headers['content-encoding']).toBe('gzip');
    expect((await raw(base, '/openapi.json', { 'if-none-match': String(doc.headers.etag) })).status).toBe(304);
  });

  it('compresses a body over COMPRESS_IN_PLACE_MAX_BYTES (the thread-pool path) to bytes that decode to the plain answer', async () => {
    const plain = await raw(base, '/openapi.json');
    expect(plain.body.length).toBeGreaterThan(COMPRESS_IN_PLACE_MAX_BYTES);
    for (const coding of ['gzip', 'br']) {
      const coded = await raw(base, '/openapi.json', { 'accept-encoding': coding });
      expect(coded.headers['content-encoding']).toBe(coding);
      expect(coded.body.length).toBeLessThan(plain.body.length / 4);
      expect(decode(coded).equals(plain.body)).toBe(true);
    }
  });

  it('does not compress an answer under 1 KiB', async () => {
    const small = await raw(base, '/v1/stats', { 'accept-encoding': 'gzip, br' });
    expect(small.body.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.headers.vary).toBe('Accept-Encoding');
  });
});

describe('Accept-Encoding and If-None-Match parsing', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['gzip', 'gzip'],
    ['GZIP', 'gzip'],
    ['x-gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, br', 'br'],
    ['gzip;q=1, br;q=0.9', 'gzip'],
    ['gzip;q=0', null],
    ['*', 'br'],
    ['*;q=0.1, br;q=0', 'gzip'],
    ['deflate, identity', null],
    ['gzip; q=0.001', 'gzip'],
  ])('Accept-Encoding %j -> %j', (header, coding) => {
    expect(negotiateEncoding(header)).toBe(coding);
  });

  it('matches a tag, its coded variants, W/ and * ; nothing else', () => {
    expect(noneMatchHits('"abc"', 'abc')).toBe(true);
    expect(noneMatchHits('"abc-gzip"', 'abc')).toBe(true);
    expect(noneMatchHits('W/"abc-br"', 'abc')).toBe(true);
    expect(noneMatchHits('"x", "abc"', 'abc')).toBe(true);
    expect(noneMatchHits('*', 'abc')).toBe(true);
    expect(noneMatchHits('"abcd"', 'abc')).toBe(false);
    expect(noneMatchHits('abc', 'abc')).toBe(false);
    expect(noneMatchHits(undefined, 'abc')).toBe(false);
  });

  it('keeps comments out of every cache and lets the rest be kept privately', () => {
    expect(cacheControlFor('/v1/comments')).toBe('no-store');
    expect(cacheControlFor('/api/v1/comments')).toBe('no-store');
    expect(cacheControlFor('/v1/pulses')).toBe('private, no-cache');
    expect(cacheControlFor('/healthz')).toBeNull();
    expect(cacheControlFor('/v1/openapi.json')).toBeNull();
  });
});
