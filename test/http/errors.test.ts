import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, NOW, readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { api } from '../helpers/openapi.js';

const ENDPOINTS = ['/v1/pulses', '/v1/stats', '/v1/stats/daily', '/v1/comments', '/v1/alerts', '/v1/org', '/v1/actions', '/v1/teams'];

describe('authentication and the error shape', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Many failed authentications come from one address here; the per-address limit has its own test.
    t = await createTestApp({ dataset: readDataset(), now: NOW, env: { AUTH_FAILURES_PER_MINUTE: '100000' } });
  });
  afterAll(() => t.close());

  const call = (url: string, authorization?: string, extra: Record<string, string> = {}) =>
    api(t.app).get(url, { ...(authorization === undefined ? {} : { authorization }), ...extra });

  const cases: [string, string | undefined, number, string][] = [
    ['no Authorization header', undefined, 401, 'unauthorized'],
    ['empty header', '', 401, 'unauthorized'],
    ['Basic scheme', `Basic ${Buffer.from('a:b').toString('base64')}`, 401, 'unauthorized'],
    ['Bearer without a key', 'Bearer ', 401, 'unauthorized'],
    ['the key without a scheme', KEYS.acme, 401, 'unauthorized'],
    ['unknown key', 'Bearer cp_live_thisKeyDoesNotExist000000000', 401, 'unauthorized'],
    ['revoked key', `Bearer ${KEYS.acmeRevoked}`, 401, 'unauthorized'],
    ["deleted organization's key", `Bearer ${KEYS.gone}`, 404, 'org_not_found'],
    ['plan without the REST API', `Bearer ${KEYS.free}`, 403, 'plan_forbidden'],
  ];

  for (const url of ENDPOINTS) {
    it.each(cases)(`${url}: %s -> %i %s`, async (_name, auth, status, code) => {
      const res = await call(url, auth);
      expect(res.statusCode).toBe(status);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(Object.keys(res.json())).toEqual(['error']);
      expect(res.json().error.code).toBe(code);
      expect(res.json().error.message).toMatch(/^.{1,500}$/);
    });
  }

  it('matches the scheme word case-insensitively', async () => {
    for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
      expect((await call('/v1/org', `${scheme} ${KEYS.acme}`)).statusCode).toBe(200);
    }
  });

  it('checks in the contract order: authentication, organization, plan, then validation', async () => {
    expect((await call('/v1/pulses?limit=999')).json().error.code).toBe('unauthorized');
    expect((await call('/v1/pulses?limit=999', `Bearer ${KEYS.gone}`)).json().error.code).toBe('org_not_found');
    expect((await call('/v1/pulses?limit=999', `Bearer ${KEYS.free}`)).json().error.code).toBe('plan_forbidden');
    expect((await call('/v1/pulses?limit=999', `Bearer ${KEYS.acme}`)).json().error.code).toBe('invalid_request');
    const post = await t.app.inject({ method: 'POST', url: '/v1/actions', payload: '{not json', headers: { 'content-type': 'application/json' } });
    expect(post.json().error.code).toBe('unauthorized');
  });

  it('names the offending parameter in the message', async () => {
    const res = await call('/v1/pulses?limit=999', `Bearer ${KEYS.acme}`);
    expect(res.json()).toEqual({ error: { code: 'invalid_request', message: "Query parameter 'limit' must be <= 200." } });
    expect((await call('/v1/pulses?bogus=1', `Bearer ${KEYS.acme}`)).json().error.message).toBe("Unknown query parameter 'bogus'.");
    expect((await call('/v1/pulses?level=1&level=2', `Bearer ${KEYS.acme}`)).json().error.message).toBe("Query parameter 'level' is given more than once.");
    expect((await call('/v1/pulses?from=2026-11-01T00:00:00', `Bearer ${KEYS.acme}`)).json().error.message).toMatch(/'from'.*RFC 3339/);
  });

  it('answers unknown paths and methods with 404 not_found, with or without a key', async () => {
    for (const [method, url] of [
      ['GET', '/v1/nope'],
      ['GET', '/v2/pulses'],
      ['DELETE', '/v1/actions/ac_1'],
      ['PUT', '/v1/teams'],
      ['GET', '/pulses'],
      ['GET', '/v1/pulses/'],
    ] as const) {
      for (const headers of [{}, { authorization: `Bearer ${KEYS.acme}` }]) {
        const res = await t.app.inject({ method, url, headers });
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.json()).toEqual({ error: { code: 'not_found', message: 'No such endpoint.' } });
      }
    }
  });

  it('puts X-Request-Id on every response: echoed when valid, generated otherwise', async () => {
    const echoed = await call('/v1/org', `Bearer ${KEYS.acme}`, { 'x-request-id': 'trace-123.abc:def_g-h' });
    expect(echoed.headers['x-request-id']).toBe('trace-123.abc:def_g-h');
    const error = await call('/v1/org', undefined, { 'x-request-id': 'err-trace-1' });
    expect(error.headers['x-request-id']).toBe('err-trace-1');
    const bad = await call('/v1/org', `Bearer ${KEYS.acme}`, { 'x-request-id': 'has spaces and ✓' });
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const none = await t.app.inject({ url: '/v1/nope' });
    expect(none.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const health = await t.app.inject({ url: '/healthz' });
    expect(health.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers what the router refuses (over-long path parameter, malformed URL) in the same shape', async () => {
    for (const [method, url] of [
      ['PATCH', `/v1/actions/${'x'.repeat(200)}`],
      ['GET', '/v1/%E0%A4%A'],
      ['PATCH', '/v1/actions/%FF%'],
    ] as const) {
      const res = await t.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${KEYS.acme}`, 'x-request-id': 'router-1' },
        payload: { title: 'Fine' },
      });
      expect(res.statusCode, url).toBe(400);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['x-request-id']).toBe('router-1');
      expect(res.json().error.code).toBe('invalid_request');
    }
  });

  it('serves /healthz and /readyz without a key', async () => {
    expect((await t.app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await t.app.inject({ url: '/readyz' })).json()).toEqual({ status: 'ready' });
  });
});
