import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClimatePulseClient, type Pulse } from '../../packages/client/src/index.js';
import { KEYS, NOW, readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { listen } from '../helpers/listen.js';

const FROM = '2026-01-01T00:00:00.000Z';

describe('client: lists over pages, against a listening server', () => {
  let t: TestApp;
  let base: string;
  let client: ClimatePulseClient;
  const urls: string[] = [];

  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), now: NOW });
    base = await listen(t.app);
    client = new ClimatePulseClient({
      baseUrl: base,
      apiKey: KEYS.acme,
      fetch: (input, init) => {
        urls.push(input instanceof Request ? input.url : String(input));
        return fetch(input, init);
      },
    });
  });
  afterAll(() => t.close());

  /** Walks GET /pulses by hand with plain fetch, following nextCursor. */
  async function byHand(query: Record<string, string>): Promise<{ items: Pulse[]; pages: number }> {
    const items: Pulse[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const qs = new URLSearchParams({ ...query, ...(cursor ? { cursor } : {}) });
      const res = await fetch(`${base}/v1/pulses?${qs}`, { headers: { authorization: `Bearer ${KEYS.acme}` } });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { items: Pulse[]; nextCursor: string | null };
      items.push(...page.items);
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    return { items, pages };
  }

  it('for await over every pulse equals walking the pages by hand', async () => {
    const expected = await byHand({ from: FROM, limit: '25' });
    expect(expected.pages).toBe(14); // 330 pulses, edge_now excluded (to = now is exclusive)
    expect(expected.items).toHaveLength(329);
    urls.length = 0;
    const got: Pulse[] = [];
    for await (const p of client.pulses.list({ from: FROM, limit: 25 })) got.push(p);
    expect(got).toEqual(expected.items);
    expect(urls).toHaveLength(14);
    expect(new URL(urls[0]).pathname).toBe('/v1/pulses');
    expect(new URL(urls[1]).searchParams.get('from')).toBe(FROM); // filters stay on later pages
  });

  it('keeps the filters on every page (subteamId, level)', async () => {
    const expected = await byHand({ from: FROM, subteamId: 'team_web', level: '3', limit: '4' });
    expect(expected.pages).toBeGreaterThan(2);
    const got = await client.pulses.list({ from: FROM, subteamId: 'team_web', level: 3, limit: 4 }).toArray();
    expect(got).toEqual(expected.items);
    expect(got.every((p) => p.subteamId === 'team_web' && p.level === 3)).toBe(true);
  });

  it('toArray({ max }) stops fetching at the page that reaches max', async () => {
    const expected = await byHand({ from: FROM, limit: '10' });
    urls.length = 0;
    const got = await client.pulses.list({ from: FROM, limit: 10 }).toArray({ max: 23 });
    expect(got).toEqual(expected.items.slice(0, 23));
    expect(urls).toHaveLength(3);
    expect(await client.pulses.list({ from: FROM }).toArray({ max: 0 })).toEqual([]);
  });

  it('pages() yields the pages themselves, and an empty list is one empty page', async () => {
    const pages = [];
    for await (const page of client.pulses.list({ from: FROM, subteamId: 'team_nobody' }).pages()) pages.push(page);
    expect(pages).toEqual([{ items: [], nextCursor: null }]);
  });

  it('for await over comments equals walking their pages by hand', async () => {
    const query = { from: '2026-08-01', to: '2026-11-20' };
    const expected: { comment: string }[] = [];
    let cursor: string | null = null;
    do {
      const qs = new URLSearchParams({ ...query, limit: '3', ...(cursor ? { cursor } : {}) });
      const res = await fetch(`${base}/v1/comments?${qs}`, { headers: { authorization: `Bearer ${KEYS.acme}` } });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { items: { comment: string }[]; nextCursor: string | null };
      expected.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    expect(expected.length).toBeGreaterThan(6);
    const got = [];
    for await (const c of client.comments.list({ ...query, limit: 3 })) got.push(c);
    expect(got).toEqual(expected);
  });

  it('reads the other endpoints with their types', async () => {
    expect(await client.org.get()).toEqual({ id: 'org_acme', name: 'Acme', memberCount: 42, createdAt: '2026-01-05T09:00:00.000Z' });
    expect((await client.teams.list()).map((team) => team.id)).toEqual(['team_data', 'team_b2', 'team_ops', 'team_small', 'team_web']);
    expect((await client.alerts.list({ limit: 3 })).map((a) => a.id)).toEqual(['al_00', 'al_01', 'al_02']);
    expect((await client.actions.list()).map((a) => a.$id)).toEqual(['ac_3', 'ac_1', 'ac_2']);
    expect((await client.stats.get()).minimumSample).toBe(5);
  });

  it('takes a base URL that already ends with /v1 or /api/v1', async () => {
    for (const root of [`${base}/v1`, `${base}/api/v1/`]) {
      const c = new ClimatePulseClient({ baseUrl: root, apiKey: KEYS.acme });
      expect((await c.org.get()).id).toBe('org_acme');
    }
  });
});
