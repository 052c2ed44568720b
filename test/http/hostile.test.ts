import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, NOW, readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectDocumented } from '../helpers/openapi.js';

const ENDPOINTS = ['/v1/pulses', '/v1/stats', '/v1/stats/daily', '/v1/comments', '/v1/alerts', '/v1/org', '/v1/actions', '/v1/teams'];
const PARAMS = ['cursor', 'from', 'to', 'level', 'limit', 'subteamId', 'unknown'];
const VALUES = [
  'x'.repeat(10_000),
  '%00',
  'a%00b',
  '%01%02%1F%7F',
  encodeURIComponent("' OR 1=1; DROP TABLE pulses; --"),
  encodeURIComponent('Robert"); DELETE FROM teams;--'),
  encodeURIComponent('😀ünïcødé✓'),
  '%F0%9F%98%80',
  '%FF%FE', // not UTF-8
  '%E0%80%80',
  '-1',
  '0',
  '1e3',
  '1.5',
  '9999999999999999999999',
  'NaN',
  'Infinity',
  '0x10',
  ' 5',
  '',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '2026-11-20T23:59:60Z',
  '2026-02-30T00:00:00Z',
  '2026-02-30',
  encodeURIComponent('0001-01-01T00:00:00+01:00'),
  '0001-01-01T00:00:00Z',
  encodeURIComponent('9999-12-31T23:59:59.999-23:59'),
  encodeURIComponent('2026-11-20T00:00:00-23:59'),
  '0000-01-01',
  '0001-01-01',
  '9999-12-31',
  '9999-12-30',
  '2024-02-29',
  '2026-11-20T00:00:00+25:00',
  '2026-11-20T00:00:00.1234567890Z',
  '2026-11-20',
  '2026-11-20 10:00:00Z',
  encodeURIComponent(`${'2026-11-20T00:00:00.000Z'}|${'x'.repeat(500)}`),
  encodeURIComponent('2026-11-20T00:00:00.000Z|p_1\u0000'),
  ...[
    '0000-01-01T00:00:00.000Z',
    '0001-01-01T00:00:00.000Z',
    '9999-12-31T23:59:59.999Z',
    '2026-11-20T23:59:60.000Z',
    '2026-02-30T00:00:00.000Z',
    '+010000-01-01T00:00:00.000Z',
  ].map((t) => encodeURIComponent(`${t}|p_0001`)),
  '__proto__',
  'constructor',
];

describe('hostile query values', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Thousands of requests from one key: a plan whose limit the sweep cannot reach.
    const dataset = readDataset();
    dataset.plans!.push({ name: 'sweep', restApi: true, rateLimitPerMinute: 1_000_000 });
    dataset.organizations![0].plan = 'sweep';
    t = await createTestApp({ dataset, now: NOW });
  });
  afterAll(() => t.close());

  it('never produce a 5xx on any GET endpoint, and every error has the contract shape', async () => {
    const seen = new Set<number>();
    for (const url of ENDPOINTS) {
      for (const param of PARAMS) {
        for (const value of VALUES) {
          for (const query of [`${param}=${value}`, `${param}=${value}&${param}=${value}`, `${param}[]=${value}`, `${param}[a]=${value}`]) {
            const res = await t.app.inject({ url: `${url}?${query}`, headers: { authorization: `Bearer ${KEYS.acme}` } });
            seen.add(res.statusCode);
            expect(res.statusCode, `${url}?${query.slice(0, 80)} -> ${res.body.slice(0, 200)}`).toBeLessThan(500);
            await expectDocumented(t.app, 'GET', url, res);
            if (res.statusCode >= 400) {
              expect(res.json().error.code).toMatch(/^(invalid_request|invalid_cursor)$/);
            }
          }
        }
      }
    }
    expect([...seen].sort()).toEqual([200, 400]);
  }, 300_000); // about 11,000 requests: minutes on a loaded two-core machine

  it('never produce a 5xx from hostile JSON bodies on the writes', async () => {
    const bodies: unknown[] = [
      { title: 'a\u0000b' },
      { title: '😀'.repeat(60) },
      { title: "'; DROP TABLE actions; --" },
      { title: 'ok', subteamId: '\u0000' },
      { title: 'ok', endDate: '0000-01-01T00:00:00Z' },
      { title: 'ok', endDate: '9999-12-31T23:59:59Z' },
      { title: 'ok', description: 'x\u0000' },
      { title: { nested: true } },
      { title: ['a', 'b'] },
      { title: 12345 },
      { title: null },
      { __proto__: { title: 'x' } },
      { constructor: { prototype: { title: 'x' } } },
      { name: 'n\u0000' },
      { name: 'x'.repeat(10_000) },
    ];
    let i = 0;
    for (const body of bodies) {
      for (const url of ['/v1/actions', '/v1/teams']) {
        const res = await t.app.inject({
          method: 'POST',
          url,
          payload: JSON.stringify(body),
          headers: { authorization: `Bearer ${KEYS.acme}`, 'idempotency-key': `hostile-${i++}-xxxx`, 'content-type': 'application/json' },
        });
        expect(res.statusCode, `${url} ${JSON.stringify(body).slice(0, 80)} -> ${res.body}`).toBeLessThan(500);
        await expectDocumented(t.app, 'POST', url, res);
      }
      const patch = await t.app.inject({
        method: 'PATCH',
        url: '/v1/actions/ac_1',
        payload: JSON.stringify(body),
        headers: { authorization: `Bearer ${KEYS.acme}`, 'content-type': 'application/json' },
      });
      expect(patch.statusCode, `PATCH ${JSON.stringify(body).slice(0, 80)} -> ${patch.body}`).toBeLessThan(500);
    }
    for (const id of ['%00', encodeURIComponent("x' OR '1'='1"), 'x'.repeat(200), '%FF']) {
      const res = await t.app.inject({
        method: 'PATCH',
        url: `/v1/actions/${id}`,
        payload: { title: 'Fine title' },
        headers: { authorization: `Bearer ${KEYS.acme}` },
      });
      expect(res.statusCode, `PATCH /v1/actions/${id} -> ${res.body}`).toBeLessThan(500);
    }
  });
});
