import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClimatePulseClient } from '../../packages/client/src/index.js';
import { demoDataset } from '../../src/domain/demo.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { listen, scriptedProxy } from '../helpers/listen.js';

const KEY = 'cp_test_client_cache_0123456789';

describe('client: pages of 200 and the If-None-Match cache', () => {
  let t: TestApp;
  let proxy: Awaited<ReturnType<typeof scriptedProxy>>;
  const now = new Date();
  const dataset = demoDataset(now, { orgId: 'org_demo_cache', key: KEY });
  beforeAll(async () => {
    t = await createTestApp({ dataset });
    proxy = await scriptedProxy(await listen(t.app));
  });
  afterAll(async () => {
    await proxy.close();
    await t.close();
  });

  it('pulses.list asks for pages of 200 unless told otherwise', async () => {
    const client = new ClimatePulseClient({ baseUrl: proxy.url, apiKey: KEY });
    const from = new Date(now.getTime() - 30 * 86_400_000).toISOString();
    proxy.seen.length = 0;
    const all = await client.pulses.list({ from }).toArray();
    const expected = dataset.organizations![0].pulses!.filter((p) => p.createdAt >= from && p.createdAt < now.toISOString()).length;
    expect(all).toHaveLength(expected);
    // A page's nextCursor is null when no item follows: 1,000 pulses are exactly 5 pages (the count
    // depends on the hour the test runs; it once was a multiple of 200).
    expect(proxy.seen.length).toBe(Math.max(1, Math.ceil(expected / 200)));
    for (const r of proxy.seen) expect(new URL(r.url, proxy.url).searchParams.get('limit')).toBe('200');
    proxy.seen.length = 0;
    await client.pulses.list({ from, limit: 20 }).toArray({ max: 30 });
    expect(proxy.seen.map((r) => new URL(r.url, proxy.url).searchParams.get('limit'))).toEqual(['20', '20']);
  });

  it('with etagCache, a repeated GET sends If-None-Match and returns the held answer on 304', async () => {
    const client = new ClimatePulseClient({ baseUrl: proxy.url, apiKey: KEY, etagCache: true });
    proxy.seen.length = 0;
    const first = await client.stats.get();
    const second = await client.stats.get();
    expect(second).toEqual(first);
    expect(proxy.seen[0].headers['if-none-match']).toBeUndefined();
    expect(proxy.seen[1].headers['if-none-match']).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(client.etagCache!.hits).toBe(1);

    // A change: a new answer, not the held one.
    const teams = await client.teams.list();
    await client.teams.create({ name: 'Cache busters' });
    const after = await client.teams.list();
    expect(after.length).toBe(teams.length + 1);
    expect(client.etagCache!.hits).toBe(1);

    // Comments are no-store: never kept, never revalidated.
    proxy.seen.length = 0;
    await client.comments.page();
    await client.comments.page();
    expect(proxy.seen.map((r) => r.headers['if-none-match'])).toEqual([undefined, undefined]);
  });

  it('without etagCache sends no If-None-Match', async () => {
    const client = new ClimatePulseClient({ baseUrl: proxy.url, apiKey: KEY });
    proxy.seen.length = 0;
    await client.org.get();
    await client.org.get();
    expect(proxy.seen.map((r) => r.headers['if-none-match'])).toEqual([undefined, undefined]);
    expect(client.etagCache).toBeUndefined();
  });
});
