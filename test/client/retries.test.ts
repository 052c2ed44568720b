import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClimatePulseClient, ClimatePulseError, parseRetryAfter } from '../../packages/client/src/index.js';
import { KEYS, NOW, readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { listen, lossyProxy, scriptedProxy } from '../helpers/listen.js';

const TINY_KEY = 'cp_test_tiny_0123456789abcdef';
const rateLimited = { error: { code: 'rate_limited', message: 'Too many requests for this key; retry after 1 s.' } };
const unavailable = { error: { code: 'service_unavailable', message: 'The service is overloaded; retry shortly.' } };

async function caught(p: Promise<unknown>): Promise<ClimatePulseError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ClimatePulseError);
    return e as ClimatePulseError;
  }
  throw new Error('expected a ClimatePulseError');
}

describe('client: retries, idempotency and errors, against a listening server', () => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    const dataset = readDataset();
    dataset.organizations!.push({
      id: 'org_tiny',
      name: 'Tiny',
      plan: 'tiny',
      createdAt: '2026-01-01T00:00:00.000Z',
      apiKeys: [{ key: TINY_KEY }],
    });
    t = await createTestApp({ dataset, now: NOW });
    base = await listen(t.app);
  });
  afterAll(() => t.close());

  it('waits out a 429 for its Retry-After, then succeeds', async () => {
    const proxy = await scriptedProxy(base, [{ status: 429, headers: { 'retry-after': '1' }, body: rateLimited }]);
    const retries: unknown[] = [];
    const client = new ClimatePulseClient({ baseUrl: proxy.url, apiKey: KEYS.acme, onRetry: (r) => retries.push(r) });
    const started = performance.now();
    const org = await client.org.get();
    const waited = performance.now() - started;
    await proxy.close();
    expect(org.id).toBe('org_acme');
    expect(waited).toBeGreaterThanOrEqual(1000);
    expect(waited).toBeLessThan(3000);
    expect(proxy.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /v1/org', 'GET /v1/org']);
    expect(retries).toEqual([{ attempt: 1, delayMs: 1000, reason: 'status 429', method: 'GET', url: `${proxy.url}/v1/org` }]);
  });

  it('honours a Retry-After given as an HTTP date', async () => {
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 2000).toUTCString();
    const proxy = await scriptedProxy(base, [{ status: 503, headers: { 'retry-after': at }, body: unavailable }]);
    const delays: number[] = [];
    const client = new ClimatePulseClient({ baseUrl: proxy.url, apiKey: KEYS.acme, onRetry: (r) => delays.push(r.delayMs) });
    expect((await client.stats.get()).minimumSample).toBe(5);
    await proxy.close();
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThan(900);
    expect(delays[0]).toBeLessThanOrEqual(3000);
  });

  it('parses Retry-After: seconds, HTTP date, past date, garbage', () => {
    const now = Date.parse('2026-11-20T12:00:00.000Z');
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Fri, 20 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Fri, 20 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-3', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('cuts a long Retry-After to maxRetryAfterMs, and 503 without one backs off with jitter', async () => {
    const proxy = await scriptedProxy(base, [
      { status: 429, headers: { 'retry-after': '3600' }, body: rateLimited },
      { status: 503, body: unavailable },
    ]);
    const delays: number[] = [];
    const client = new ClimatePulseClient({
      baseUrl: proxy.url,
      apiKey: KEYS.acme,
      retry: { maxRetryAfterMs: 50, baseDelayMs: 100 },
      onRetry: (r) => delays.push(r.delayMs),
    });
    expect((await client.org.get()).id).toBe('org_acme');
    await proxy.close();
    expect(proxy.seen).toHaveLength(3);
    expect(delays[0]).toBe(50);
    expect(delays[1]).toBeGreaterThanOrEqual(0);
    expect(delays[1]).toBeLessThanOrEqual(200); // second retry: up to baseDelayMs * 2
  });

  it('gives up after maxRetries on the real rate limit and throws rate_limited', async () => {
    // The tiny plan allows 5 requests a minute.
    const client = new ClimatePulseClient({ baseUrl: base, apiKey: TINY_KEY, retry: { maxRetries: 2, maxRetryAfterMs: 10 } });
    for (let i = 0; i < 5; i++) await client.org.get();
    const e = await caught(client.org.get());
    expect([e.status, e.code, e.attempts]).toEqual([429, 'rate_limited', 3]);
    expect(e.message).toMatch(/rate limit|Too many/i);
    expect(e.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('throws a 400 at once, with its code, message and request id', async () => {
    const proxy = await scriptedProxy(base);
    const client = new ClimatePulseClient({ baseUrl: proxy.url, apiKey: KEYS.acme });
    const e = await caught(client.pulses.page({ limit: 500 }));
    await proxy.close();
    expect(proxy.seen).toHaveLength(1);
    expect(e).toMatchObject({ name: 'ClimatePulseError', status: 400, code: 'invalid_request', attempts: 1 });
    expect(e.message).toBe("Query parameter 'limit' must be <= 200.");
    expect(e.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('never retries other 4xx: 401, 404, 409', async () => {
    const proxy = await scriptedProxy(base);
    const bad = new ClimatePulseClient({ baseUrl: proxy.url, apiKey: 'cp_live_nope' });
    expect(await caught(bad.org.get())).toMatchObject({ status: 401, code: 'unauthorized', attempts: 1 });
    const client = new ClimatePulseClient({ baseUrl: proxy.url, apiKey: KEYS.acme });
    expect(await caught(client.actions.update('act_missing', { title: 'Nope, not here' }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await caught(client.teams.create({ name: 'web' }))).toMatchObject({ status: 409, code: 'team_name_taken', attempts: 1 });
    await proxy.close();
    expect(proxy.seen.map((r) => r.method)).toEqual(['GET', 'PATCH', 'POST']);
  });

  it('gives every POST an Idempotency-Key; a key of the caller is used as given', async () => {
    const proxy = await scriptedProxy(base);
    const client = new ClimatePulseClient({ baseUrl: proxy.url, apiKey: KEYS.acme });
    const a = await client.teams.create({ name: 'Platform' });
    const b = await client.teams.create({ name: 'Platform' }, { idempotencyKey: 'caller-key-0001' }).catch((e: ClimatePulseError) => e.code);
    const first = await client.actions.create({ title: 'Retro on workload' }, { idempotencyKey: 'caller-key-0002' });
    const again = await client.actions.create({ title: 'Retro on workload' }, { idempotencyKey: 'caller-key-0002' });
    await proxy.close();
    expect(a.name).toBe('Platform');
    expect(b).toBe('team_name_taken');
    expect(again).toEqual(first);
    const keys = proxy.seen.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(keys.slice(1)).toEqual(['caller-key-0001', 'caller-key-0002', 'caller-key-0002']);
    const direct = new ClimatePulseClient({ baseUrl: base, apiKey: KEYS.acme });
    expect((await direct.actions.list()).filter((x) => x.title === 'Retro on workload' && x.createdAt === NOW.toISOString())).toEqual([
      expect.objectContaining({ $id: first.id }),
    ]);
  });

  it('retries a POST whose answer was lost after the commit with the same key, and creates one resource', async () => {
    const proxy = await lossyProxy(base);
    const retries: string[] = [];
    const client = new ClimatePulseClient({ baseUrl: proxy.url, apiKey: KEYS.acme, onRetry: (r) => retries.push(r.reason) });
    proxy.state.dropNextPostAnswer = true;
    const created = await client.teams.create({ name: 'Lost answer' });
    await proxy.close();
    expect(proxy.state.dropped).toBe(1);
    expect(retries).toEqual(['network_error']);
    const posts = proxy.state.requests.filter((r) => r.startsWith('POST /v1/teams '));
    expect(posts).toHaveLength(2);
    const keys = posts.map((r) => /\r\nidempotency-key: ([^\r]+)\r\n/i.exec(r)?.[1]);
    expect(keys[0]).toBeTruthy();
    expect(keys[1]).toBe(keys[0]);
    const teams = await new ClimatePulseClient({ baseUrl: base, apiKey: KEYS.acme }).teams.list();
    expect(teams.filter((team) => team.name === 'Lost answer')).toEqual([{ id: created.id, name: 'Lost answer', createdAt: NOW.toISOString() }]);
  });

  it('without retries, a lost answer is a network_error with status 0', async () => {
    const proxy = await lossyProxy(base);
    const client = new ClimatePulseClient({ baseUrl: proxy.url, apiKey: KEYS.acme, retry: { maxRetries: 0 } });
    proxy.state.dropNextPostAnswer = true;
    const e = await caught(client.teams.create({ name: 'Lost for good' }));
    await proxy.close();
    expect([e.status, e.code, e.requestId, e.attempts]).toEqual([0, 'network_error', null, 1]);
    expect(e.message).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/v1\/teams got no answer after 1 attempt\(s\)/);
  });

  it('a network error on a GET (nothing listening) is retried, then thrown', async () => {
    const proxy = await scriptedProxy(base);
    await proxy.close();
    const retries: string[] = [];
    const client = new ClimatePulseClient({
      baseUrl: proxy.url,
      apiKey: KEYS.acme,
      retry: { maxRetries: 2, baseDelayMs: 10 },
      onRetry: (r) => retries.push(r.reason),
    });
    const e = await caught(client.org.get());
    expect([e.status, e.code, e.attempts]).toEqual([0, 'network_error', 3]);
    expect(retries).toEqual(['network_error', 'network_error']);
  });
});
