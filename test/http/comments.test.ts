import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME_PULSES, KEYS, NOW, newestFirst, readDataset, type FixturePulse } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { api } from '../helpers/openapi.js';

const DAY = 86_400_000;
const dayStart = (d: string) => Date.parse(`${d}T00:00:00.000Z`);

/** Comments of [from, to] (calendar days, inclusive), computed from the fixture alone. */
function expectedComments(fromDay: string, toDay: string, team?: string) {
  const inRange = (p: FixturePulse) =>
    Date.parse(p.createdAt) >= dayStart(fromDay) && Date.parse(p.createdAt) < dayStart(toDay) + DAY && (team === undefined || p.subteamId === team);
  const sample = ACME_PULSES.filter(inRange).length;
  const comments = newestFirst(ACME_PULSES.filter((p) => inRange(p) && p.moderationStatus === 'CLEAN' && p.comment)).map((p) => p.comment!);
  return { sample, comments };
}

describe('GET /comments', () => {
  let t: TestApp;
  let acme: ReturnType<typeof api>;
  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), now: NOW });
    acme = api(t.app, KEYS.acme);
  });
  afterAll(() => t.close());

  async function walk(query: string) {
    const out: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 500; i++) {
      const res = await acme.get(`/v1/comments?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.suppressed).toBe(false);
      expect(body.minimumSample).toBe(5);
      out.push(...body.items.map((c: { comment: string }) => c.comment));
      for (const item of body.items) expect(Object.keys(item)).toEqual(['comment']);
      cursor = body.nextCursor;
      if (!cursor) break;
    }
    return out;
  }

  it('defaults to the last 30 calendar days and 20 items; only CLEAN, non-empty comments, newest first', async () => {
    const { comments } = expectedComments('2026-10-22', '2026-11-20');
    expect(comments.length).toBeGreaterThan(20);
    const res = await acme.get('/v1/comments');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.items).toEqual(comments.slice(0, 20).map((comment) => ({ comment })));
    expect(body.minimumSample).toBe(5);
    expect(body.suppressed).toBe(false);
    expect(typeof body.nextCursor).toBe('string');
    // The cursor is opaque: it reveals no pulse id or time.
    expect(body.nextCursor).not.toMatch(/p_\d|2026-|\|/);
    expect(Buffer.from(body.nextCursor, 'base64url').toString('latin1')).not.toMatch(/p_\d|2026-/);
  });

  it('walks every page of a range once, in order, with the edge pulse of today included', async () => {
    const { comments } = expectedComments('2026-08-01', '2026-11-20');
    const got = await walk('from=2026-08-01&to=2026-11-20&limit=7');
    expect(got).toEqual(comments);
    expect(got).toContain('Edge edge_now'); // today (UTC) is inside the default and explicit range
    expect(got.some((c) => c.startsWith('Comment number 0'))).toBe(false); // i=0 is FLAGGED
  });

  it('filters by team, with the sample taken from that team', async () => {
    const { comments, sample } = expectedComments('2026-09-01', '2026-11-20', 'team_ops');
    expect(sample).toBeGreaterThanOrEqual(5);
    expect(await walk('from=2026-09-01&to=2026-11-20&subteamId=team_ops&limit=100')).toEqual(comments);
  });

  it('suppresses a team with fewer than 5 pulses in the range, and an unknown team', async () => {
    const small = expectedComments('2026-11-01', '2026-11-20', 'team_small');
    expect(small.sample).toBe(3);
    expect(small.comments.length).toBe(2);
    for (const q of ['subteamId=team_small', 'subteamId=team_unknown', 'from=2020-01-01&to=2020-01-31']) {
      const res = await acme.get(`/v1/comments?${q}`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ items: [], minimumSample: 5, nextCursor: null, suppressed: true });
    }
  });

  it('counts FLAGGED pulses in the sample: exactly 5 pulses with one comment is not suppressed', async () => {
    // Find a single UTC day whose team_web sample is exactly 5 or more and compare exactly.
    const res = await acme.get('/v1/comments?from=2026-11-19&to=2026-11-19&limit=100');
    const e = expectedComments('2026-11-19', '2026-11-19');
    expect(res.json()).toEqual(
      e.sample >= 5
        ? { items: e.comments.map((comment) => ({ comment })), minimumSample: 5, nextCursor: null, suppressed: false }
        : { items: [], minimumSample: 5, nextCursor: null, suppressed: true },
    );
  });

  it('refuses tampered, foreign and mismatched cursors with invalid_cursor', async () => {
    const first = (await acme.get('/v1/comments?limit=2')).json();
    const c: string = first.nextCursor;
    const flipped = c.slice(0, 10) + (c[10] === 'A' ? 'B' : 'A') + c.slice(11);
    const pulsesCursor = (await acme.get('/v1/pulses?limit=1')).json().nextCursor;
    const betaCursor = (await api(t.app, KEYS.beta).get('/v1/comments?limit=2')).json().nextCursor;
    for (const bad of [flipped, 'not-a-cursor', pulsesCursor, c.slice(0, 30)]) {
      const res = await acme.get(`/v1/comments?cursor=${encodeURIComponent(bad)}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().error.code).toBe('invalid_cursor');
    }
    const mismatch = await acme.get(`/v1/comments?cursor=${encodeURIComponent(c)}&subteamId=team_web`);
    expect(mismatch.json().error.code).toBe('invalid_cursor');
    expect(typeof betaCursor).toBe('string');
    // Another organization's cursor, with the same filters, is not a cursor of this organization.
    const foreign = await acme.get(`/v1/comments?cursor=${encodeURIComponent(betaCursor)}`);
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().error.code).toBe('invalid_cursor');
  });

  it('accepts the last calendar date 9999-12-31 as to (the day after it is year 10000)', async () => {
    const res = await acme.get('/v1/comments?from=2026-11-01&to=9999-12-31&limit=100');
    expect(res.statusCode).toBe(200);
    const { comments } = expectedComments('2026-11-01', '9999-12-31');
    expect(res.json().items.map((x: { comment: string }) => x.comment)).toEqual(comments.slice(0, 100));
    expect(res.json().suppressed).toBe(false);
  });

  it('keeps the first page range on later pages without the filters repeated', async () => {
    const first = (await acme.get('/v1/comments?from=2026-09-01&to=2026-09-30&limit=3')).json();
    const second = await acme.get(`/v1/comments?cursor=${encodeURIComponent(first.nextCursor)}&limit=3`);
    const { comments } = expectedComments('2026-09-01', '2026-09-30');
    expect([...first.items, ...second.json().items].map((x: { comment: string }) => x.comment)).toEqual(comments.slice(0, 6));
  });

  it.each([['from=2026-11-31'], ['to=2026-02-30'], ['from=20261101'], ['limit=0'], ['limit=101'], ['from=2026-11-10&to=2026-11-09'], ['level=3']])(
    'refuses %s with invalid_request',
    async (q) => {
      const res = await acme.get(`/v1/comments?${q}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('invalid_request');
    },
  );
});
