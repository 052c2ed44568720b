import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACME_ACTIONS,
  ACME_ALERTS,
  ACME_PULSES,
  ACME_TEAMS,
  KEYS,
  NOW,
  asListed,
  newestFirst,
  readDataset,
  teamName,
  type FixturePulse,
} from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { api } from '../helpers/openapi.js';

const DAY = 86_400_000;

describe('read endpoints', () => {
  let t: TestApp;
  let acme: ReturnType<typeof api>;
  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), now: NOW });
    acme = api(t.app, KEYS.acme);
  });
  afterAll(() => t.close());

  /** Walks every page of a /pulses query; returns the ids in order and the page sizes. */
  async function walk(query: string) {
    const ids: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 1000; page++) {
      const sep = query ? '&' : '';
      const res = await acme.get(`/v1/pulses?${query}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      ids.push(...body.items.map((p: { id: string }) => p.id));
      sizes.push(body.items.length);
      cursor = body.nextCursor;
      if (cursor === null) break;
      const last = body.items[body.items.length - 1];
      expect(cursor).toBe(`${last.createdAt}|${last.id}`);
    }
    return { ids, sizes };
  }

  const inRange = (p: FixturePulse, from: number, to: number) => Date.parse(p.createdAt) >= from && Date.parse(p.createdAt) < to;

  describe('GET /org', () => {
    it('returns exactly the organization of the key, under /v1 and /api/v1', async () => {
      const expected = { id: 'org_acme', name: 'Acme', memberCount: 42, createdAt: '2026-01-05T09:00:00.000Z' };
      for (const url of ['/v1/org', '/api/v1/org']) {
        const res = await acme.get(url);
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(res.json()).toEqual(expected);
      }
    });
  });

  describe('GET /teams', () => {
    it('lists every team ordered by name case-insensitively, then id', async () => {
      const res = await acme.get('/v1/teams');
      expect(res.statusCode).toBe(200);
      const expected = [...ACME_TEAMS].sort((a, b) =>
        a.name.toLowerCase() === b.name.toLowerCase() ? (a.id < b.id ? -1 : 1) : a.name.toLowerCase() < b.name.toLowerCase() ? -1 : 1,
      );
      expect(res.json()).toEqual({ items: expected });
      expect(res.json().items.map((x: { id: string }) => x.id)).toEqual(['team_data', 'team_b2', 'team_ops', 'team_small', 'team_web']);
    });
  });

  describe('GET /pulses', () => {
    const last30 = () => newestFirst(ACME_PULSES.filter((p) => inRange(p, NOW.getTime() - 30 * DAY, NOW.getTime())));

    it('returns the first page of the last 30 days, newest first, with every field', async () => {
      const res = await acme.get('/v1/pulses');
      expect(res.statusCode).toBe(200);
      const expected = last30();
      expect(expected.length).toBeGreaterThan(50);
      const body = res.json();
      expect(body.items).toEqual(expected.slice(0, 50).map(asListed));
      expect(body.nextCursor).toBe(`${expected[49].createdAt}|${expected[49].id}`);
    });

    it('walks every page of the default range: each pulse once, in order, edges respected', async () => {
      const { ids, sizes } = await walk('limit=7');
      const expected = last30().map((p) => p.id);
      expect(ids).toEqual(expected);
      expect(ids).toContain('edge_30d'); // from is inclusive
      expect(ids).not.toContain('edge_30d_before');
      expect(ids).not.toContain('edge_now'); // to is exclusive
      expect(sizes.slice(0, -1).every((n) => n === 7)).toBe(true);
      expect(sizes[sizes.length - 1]).toBeGreaterThan(0); // no empty last page
      expect(ids.indexOf('tie_b')).toBe(ids.indexOf('tie_a') - 1); // equal times: id descending
    });

    it('walks an explicit range with level and team filters applied on every page', async () => {
      const from = '2026-08-01T00:00:00.000Z';
      const to = '2026-11-01T00:00:00+02:00';
      const expected = newestFirst(ACME_PULSES.filter((p) => inRange(p, Date.parse(from), Date.parse(to)) && p.level === 3 && p.subteamId === 'team_web')).map(
        (p) => p.id,
      );
      expect(expected.length).toBeGreaterThan(3);
      const { ids } = await walk(`from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&level=3&subteamId=team_web&limit=2`);
      expect(ids).toEqual(expected);
    });

    it('walks a whole 200-item page limit over a long range', async () => {
      const from = new Date(NOW.getTime() - 200 * DAY).toISOString();
      const to = new Date(NOW.getTime() + DAY).toISOString();
      const { ids, sizes } = await walk(`from=${from}&to=${to}&limit=200`);
      expect(ids).toEqual(newestFirst(ACME_PULSES).map((p) => p.id));
      expect(sizes).toEqual([200, ACME_PULSES.length - 200]);
    });

    it('filters by level and by team; an unknown team gives an empty page', async () => {
      const lvl = (await acme.get('/v1/pulses?level=5&limit=200')).json();
      expect(lvl.items).toEqual(
        last30()
          .filter((p) => p.level === 5)
          .map(asListed),
      );
      const team = (await acme.get('/v1/pulses?subteamId=team_ops&limit=200')).json();
      expect(team.items).toEqual(
        last30()
          .filter((p) => p.subteamId === 'team_ops')
          .map(asListed),
      );
      expect((await acme.get('/v1/pulses?subteamId=team_nope')).json()).toEqual({ items: [], nextCursor: null });
    });

    it('clamps the default from at year 1: a to in early year 1 is an empty page, not an error', async () => {
      const res = await acme.get('/v1/pulses?to=0001-01-02T00:00:00Z');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ items: [], nextCursor: null });
    });

    it('defaults from to 30 days before an explicit to', async () => {
      const to = new Date(NOW.getTime() - 40 * DAY);
      const res = await acme.get(`/v1/pulses?to=${to.toISOString()}&limit=200`);
      const expected = newestFirst(ACME_PULSES.filter((p) => inRange(p, to.getTime() - 30 * DAY, to.getTime())));
      expect(res.json().items.map((p: { id: string }) => p.id)).toEqual(expected.map((p) => p.id));
    });

    it('lists FLAGGED pulses too, and never a comment', async () => {
      const body = (await acme.get('/v1/pulses?limit=200')).json();
      expect(body.items.some((p: { moderationStatus: string }) => p.moderationStatus === 'FLAGGED')).toBe(true);
      expect(body.items.every((p: object) => !('comment' in p))).toBe(true);
    });

    it.each([
      ['limit=0'],
      ['limit=201'],
      ['limit=abc'],
      ['limit=1.5'],
      ['level=0'],
      ['level=6'],
      ['from=2026-11-01'],
      ['to=2026-11-01T00:00:00'],
      ['subteamId='],
      [`subteamId=${'x'.repeat(65)}`],
      ['cursor='],
      [`cursor=${'x'.repeat(513)}`],
      ['from=2026-11-10T00:00:00Z&to=2026-11-10T00:00:00Z'],
      ['from=2026-11-11T00:00:00Z&to=2026-11-10T00:00:00Z'],
      ['unknown=1'],
      ['limit=5&limit=6'],
      ['to=9999-12-31T23:59:59.999-23:59'],
      ['to=0001-01-01T00:00:00Z'],
    ])('refuses %s with invalid_request', async (q) => {
      const res = await acme.get(`/v1/pulses?${q}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('invalid_request');
    });

    it.each([
      ['garbage'],
      ['2026-11-10T00:00:00.000Z'],
      ['2026-11-10T00:00:00Z|p_1'],
      ['2026-13-10T00:00:00.000Z|p_1'],
      ['|p_1'],
      ['0000-01-01T00:00:00.000Z|p_1'],
      ['2026-11-20T23:59:60.000Z|p_1'],
    ])('refuses cursor %s with invalid_cursor', async (cursor) => {
      const res = await acme.get(`/v1/pulses?cursor=${encodeURIComponent(cursor)}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('invalid_cursor');
    });
  });

  describe('GET /alerts', () => {
    const expected = () =>
      newestFirst(ACME_ALERTS).map((a) => ({
        id: a.id,
        type: a.type,
        message: a.message,
        weekISO: a.weekISO,
        subteamName: teamName(a.subteamId),
        readAt: a.readAt,
        createdAt: a.createdAt,
      }));

    it('returns the 10 most recent by default, newest first, with every field', async () => {
      const res = await acme.get('/v1/alerts');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ items: expected().slice(0, 10) });
    });

    it('honours limit 1 and 50', async () => {
      expect((await acme.get('/v1/alerts?limit=1')).json()).toEqual({ items: expected().slice(0, 1) });
      expect((await acme.get('/v1/alerts?limit=50')).json()).toEqual({ items: expected() });
    });

    it.each([['limit=0'], ['limit=51'], ['limit=-1'], ['cursor=x']])('refuses %s', async (q) => {
      const res = await acme.get(`/v1/alerts?${q}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('invalid_request');
    });
  });

  describe('GET /actions', () => {
    it('returns every action newest first, each with $id and never id', async () => {
      const res = await acme.get('/v1/actions');
      expect(res.statusCode).toBe(200);
      const expected = newestFirst(ACME_ACTIONS).map(({ id, ...a }) => ({ $id: id, ...a, subteamName: teamName(a.subteamId) }));
      expect(res.json()).toEqual({ items: expected.map((e) => ({ ...e })) });
      expect(res.json().items.map((a: { $id: string }) => a.$id)).toEqual(['ac_3', 'ac_1', 'ac_2']);
      for (const item of res.json().items) expect(item).not.toHaveProperty('id');
      expect(res.body).toContain('"$id":"ac_3"');
    });
  });

  describe('/api/v1', () => {
    it('gives the same answers as /v1 on every read endpoint', async () => {
      const queries = [
        '/org',
        '/teams',
        '/pulses',
        '/pulses?limit=3&level=2',
        `/pulses?${`from=${new Date(NOW.getTime() - 60 * DAY).toISOString()}`}&subteamId=team_ops`,
        '/stats',
        '/stats/daily',
        '/stats/daily?from=2026-10-01T06:30:00Z&to=2026-11-01T18:00:00Z',
        '/comments?limit=5',
        '/comments?subteamId=team_small',
        '/alerts',
        '/alerts?limit=50',
        '/actions',
      ];
      for (const q of queries) {
        const [v1, alias] = [await acme.get(`/v1${q}`), await acme.get(`/api/v1${q}`)];
        expect(alias.statusCode, q).toBe(200);
        expect(v1.statusCode, q).toBe(200);
        // A comments cursor is sealed with a fresh IV each time: the positions must agree, not the bytes.
        const norm = (b: Record<string, unknown>) => ('nextCursor' in b && q.startsWith('/comments') ? { ...b, nextCursor: typeof b.nextCursor } : b);
        expect(norm(alias.json()), q).toEqual(norm(v1.json()));
      }
      const c = (await acme.get('/v1/comments?limit=5')).json().nextCursor;
      const [p2v1, p2alias] = [await acme.get(`/v1/comments?limit=5&cursor=${c}`), await acme.get(`/api/v1/comments?limit=5&cursor=${c}`)];
      expect(p2alias.json().items).toEqual(p2v1.json().items);
      expect(p2alias.json().items.length).toBe(5);
    });
  });

  describe('organization isolation', () => {
    it("never shows another organization's data", async () => {
      const beta = api(t.app, KEYS.beta);
      const range = `from=${new Date(NOW.getTime() - 365 * DAY).toISOString()}&to=${new Date(NOW.getTime() + DAY).toISOString()}&limit=200`;
      const betaPulses = (await beta.get(`/v1/pulses?${range}`)).json().items.map((p: { id: string }) => p.id);
      expect(betaPulses.length).toBe(12);
      expect(betaPulses.every((id: string) => id.startsWith('beta_p_'))).toBe(true);
      expect((await beta.get('/v1/org')).json().id).toBe('org_beta');
      expect((await beta.get('/v1/teams')).json().items.map((x: { id: string }) => x.id)).toEqual(['team_beta']);
      expect((await beta.get('/v1/alerts?limit=50')).json().items.map((x: { id: string }) => x.id)).toEqual(['beta_al']);
      expect((await beta.get('/v1/actions')).json().items.map((x: { $id: string }) => x.$id)).toEqual(['beta_ac']);
      expect((await beta.get('/v1/stats')).json().pulseCount).toBe(12);
      // Acme's team and pulse ids are unknown to Beta.
      expect((await beta.get('/v1/pulses?subteamId=team_web')).json()).toEqual({ items: [], nextCursor: null });
      const acmeComments = (await acme.get('/v1/comments?limit=100')).json().items.map((c: { comment: string }) => c.comment);
      expect(acmeComments.some((c: string) => c.startsWith('Beta secret'))).toBe(false);
      const betaComments = (await beta.get('/v1/comments?limit=100')).json().items.map((c: { comment: string }) => c.comment);
      expect(betaComments.every((c: string) => c.startsWith('Beta secret'))).toBe(true);
      expect((await acme.get('/v1/pulses?limit=200')).json().items.some((p: { id: string }) => p.id.startsWith('beta'))).toBe(false);
    });

    it("keeps another organization's pulses out of its statistics", async () => {
      const beta = api(t.app, KEYS.beta);
      const stats = (await beta.get('/v1/stats')).json();
      expect(stats.pulseCount).toBe(12);
      expect(stats.weeklyPulseCount).toBe(12);
      const days = (await beta.get('/v1/stats/daily')).json().days as Array<{ count: number }>;
      expect(days.reduce((n, d) => n + d.count, 0)).toBe(12);
      const acmeStats = (await acme.get('/v1/stats')).json();
      expect(acmeStats.pulseCount).toBe(ACME_PULSES.length);
    });

    it("gives 404 for another organization's action, exactly as for a missing one", async () => {
      const beta = api(t.app, KEYS.beta);
      const other = await beta.patch('/v1/actions/ac_1', { title: 'Not yours' });
      const missing = await beta.patch('/v1/actions/ac_missing', { title: 'Not yours' });
      expect(other.statusCode).toBe(404);
      expect(other.json()).toEqual(missing.json());
    });
  });
});
