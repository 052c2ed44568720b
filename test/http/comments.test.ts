import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { loadDataset, type Dataset } from '../../src/domain/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { api } from '../helpers/openapi.js';
import { CommentModel, type ModelPulse } from '../helpers/comment-model.js';

/**
 * GET /comments, exact values (CONTRACT.md section 5). Weeks are ISO weeks in UTC:
 *   W45 = Mon 2026-11-02 .. Sun 2026-11-08, W46 = 2026-11-09 .. 2026-11-15, W47 = 2026-11-16 .. 2026-11-22.
 * With the default delay of 24 h, W46 is released from Tue 2026-11-17 00:00 UTC.
 */
const SECRET = 'comments-test-secret-0123456789abcdef';
const KEY = 'cp_test_comments_0123456789abcdef';
const ORG = 'org_comments';
const TEAMS = ['t_five', 't_four', 't_fourflag', 't_two', 't_three', 't_six', 't_empty'];

let seq = 0;
function pulses(n: number, team: string | null, at: string, opts: Partial<ModelPulse> & { step?: number } = {}): ModelPulse[] {
  const { step = 3_600_000, ...rest } = opts;
  return Array.from({ length: n }, (_, i) => {
    const id = `p_${String(++seq).padStart(4, '0')}`;
    return {
      id,
      comment: `comment ${id} (${team ?? 'no team'})`,
      moderationStatus: 'CLEAN' as const,
      subteamId: team,
      createdAt: new Date(Date.parse(at) + i * step).toISOString(),
      ...rest,
    };
  });
}

const W44 = '2026-10-26T09:00:00.000Z';
const W45 = '2026-11-02T09:00:00.000Z';
const W46 = '2026-11-09T09:00:00.000Z';
const W47 = '2026-11-16T09:00:00.000Z';

const DATA: ModelPulse[] = [
  // W46: a cell of exactly 5; a cell of 4; 4 CLEAN + 3 FLAGGED; 5 pulses without a team.
  ...pulses(5, 't_five', W46),
  ...pulses(4, 't_four', W46),
  ...pulses(4, 't_fourflag', W46),
  ...pulses(3, 't_fourflag', W46, { moderationStatus: 'FLAGGED', comment: 'flagged words' }),
  ...pulses(5, null, W46),
  // Ties at the week boundary: the last instant of W46 and the first of W47.
  ...pulses(1, 't_six', '2026-11-15T23:59:59.999Z'),
  ...pulses(1, 't_six', '2026-11-16T00:00:00.000Z'),
  // W45: a cell of 6 (one CLEAN pulse without comment), and a lone 4 whose remainder (4) is withheld.
  ...pulses(5, 't_six', W45),
  ...pulses(1, 't_six', W45, { comment: null }),
  ...pulses(4, 't_four', W45),
  // W44: a remainder of 2 + 3 small-team pulses.
  ...pulses(2, 't_two', W44),
  ...pulses(3, 't_three', W44),
  // W47, not ended.
  ...pulses(6, 't_five', W47),
];

function dataset(ps: ModelPulse[], withOrg = true): Dataset {
  return {
    organizations: [
      {
        id: ORG, name: 'Comments Inc', plan: 'business', memberCount: 40, createdAt: '2026-01-01T00:00:00.000Z', deletedAt: null,
        ...(withOrg
          ? {
              apiKeys: [{ key: KEY, name: 'ci', revoked: false }],
              teams: TEAMS.map((id) => ({ id, name: id, createdAt: '2026-01-01T00:00:00.000Z' })),
            }
          : {}),
        pulses: ps.map((p) => ({ ...p, level: 3, reason: null })),
      },
    ],
  };
}

describe('GET /comments: cells, weeks and the envelope', () => {
  let t: TestApp;
  let c: ReturnType<typeof api>;
  let clock = Date.parse('2026-11-17T00:00:00.000Z');
  const model = new CommentModel(SECRET, 24 * 3_600_000);
  const textOf = new Map(DATA.map((p) => [p.comment, p.id]));

  beforeAll(async () => {
    t = await createTestApp({ dataset: dataset(DATA), clock: () => new Date(clock), env: { COMMENT_CURSOR_SECRET: SECRET } });
    c = api(t.app, KEY);
    model.add(DATA);
  });
  afterAll(() => t.close());

  async function walk(query: string, limit = 100) {
    const ids: string[] = [];
    let cursor: string | null = null;
    let first: Record<string, unknown> | undefined;
    for (let i = 0; i < 100; i++) {
      const res = await c.get(`/v1/comments?limit=${limit}&${query}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      first ??= body;
      for (const item of body.items) expect(Object.keys(item)).toEqual(['comment']);
      ids.push(...body.items.map((x: { comment: string }) => textOf.get(x.comment) ?? `unknown: ${x.comment}`));
      cursor = body.nextCursor;
      if (!cursor) break;
    }
    return { ids, first: first! };
  }

  it('is not released before the week ends plus COMMENTS_RELEASE_DELAY_HOURS, and is right after', async () => {
    clock = Date.parse('2026-11-16T23:59:59.999Z');
    const before = await c.get('/v1/comments?from=2026-11-09&to=2026-11-15');
    expect(before.json()).toEqual({
      items: [], minimumSample: 5, from: '2026-11-09', to: '2026-11-15', releasedThrough: null, nextCursor: null, suppressed: false,
    });
    clock = Date.parse('2026-11-17T00:00:00.000Z');
    const after = await c.get('/v1/comments?from=2026-11-09&to=2026-11-15&subteamId=t_five');
    expect(after.json().releasedThrough).toBe('2026-11-15');
    expect(after.json().items).toHaveLength(5);
  });

  it('releases a cell of exactly 5 CLEAN pulses; not one of 4, nor 4 CLEAN + 3 FLAGGED', async () => {
    const five = await walk('from=2026-11-09&to=2026-11-15&subteamId=t_five');
    expect(new Set(five.ids)).toEqual(new Set(DATA.filter((p) => p.subteamId === 't_five' && p.createdAt < '2026-11-16').map((p) => p.id)));
    expect(five.first.suppressed).toBe(false);
    for (const team of ['t_four', 't_fourflag']) {
      const res = await c.get(`/v1/comments?from=2026-11-09&to=2026-11-15&subteamId=${team}`);
      expect(res.json()).toEqual({
        items: [], minimumSample: 5, from: '2026-11-09', to: '2026-11-15', releasedThrough: '2026-11-15', nextCursor: null, suppressed: true,
      });
    }
  });

  it('pools cells of 1-4 into the week remainder, released without subteamId when it reaches 5', async () => {
    // W46: t_four (4) + t_fourflag (4 CLEAN) + the lone boundary pulse of t_six (1) = 9 in the remainder.
    const org = await walk('from=2026-11-09&to=2026-11-15');
    const expected = model.answer('2026-11-09', '2026-11-15', undefined, clock);
    expect(org.ids).toEqual(expected.ids);
    expect(org.ids).toContain(DATA.find((p) => p.createdAt === '2026-11-15T23:59:59.999Z')!.id);
    expect(org.ids.some((id) => DATA.find((p) => p.id === id)!.moderationStatus === 'FLAGGED')).toBe(false);
    expect(org.first.suppressed).toBe(false);
  });

  it('releases a remainder of 2 + 3 small-team pulses org-wide and never with subteamId', async () => {
    const org = await walk('from=2026-10-26&to=2026-11-01');
    expect(new Set(org.ids)).toEqual(new Set(DATA.filter((p) => p.subteamId === 't_two' || p.subteamId === 't_three').map((p) => p.id)));
    expect(org.first.suppressed).toBe(false);
    for (const team of ['t_two', 't_three']) {
      const res = await c.get(`/v1/comments?from=2026-10-26&to=2026-11-01&subteamId=${team}`);
      expect(res.json().items).toEqual([]);
      expect(res.json().suppressed).toBe(true);
    }
  });

  it('withholds a remainder under 5 and says so, computed from pulses and not from comments', async () => {
    // W45: t_six (6, one without comment) is released; t_four (4) alone is a remainder of 4.
    const org = await walk('from=2026-11-02&to=2026-11-08');
    expect(new Set(org.ids)).toEqual(new Set(DATA.filter((p) => p.subteamId === 't_six' && p.createdAt.startsWith('2026-11-0') && p.comment).map((p) => p.id)));
    expect(org.first.suppressed).toBe(true);
    // The released cell of 6 suppresses nothing, though one of its pulses has no comment.
    expect((await c.get('/v1/comments?from=2026-11-02&to=2026-11-08&subteamId=t_six')).json().suppressed).toBe(false);
    // A team without any pulse: nothing withheld, nothing shown.
    expect((await c.get('/v1/comments?from=2026-11-02&to=2026-11-08&subteamId=t_empty')).json()).toMatchObject({ items: [], suppressed: false });
  });

  it('suppressed does not change when a withheld pulse gets or lacks a comment', async () => {
    const variant = async (comment: string | null) => {
      const u = await createTestApp({
        dataset: dataset([...pulses(6, 't_six', W45), ...pulses(3, 't_four', W45), ...pulses(1, 't_four', W45, { comment })]),
        now: new Date('2026-11-20T00:00:00.000Z'),
      });
      const k = api(u.app, KEY);
      const out = [
        (await k.get('/v1/comments?from=2026-11-02&to=2026-11-08')).json().suppressed,
        (await k.get('/v1/comments?from=2026-11-02&to=2026-11-08&subteamId=t_four')).json().suppressed,
        (await k.get('/v1/comments?from=2026-11-02&to=2026-11-08&subteamId=t_six')).json().suppressed,
      ];
      await u.close();
      return out;
    };
    expect(await variant('I wrote something')).toEqual([true, true, false]);
    expect(await variant(null)).toEqual([true, true, false]);
  });

  it('covers whole weeks: every day range inside the same weeks gives the same answer', async () => {
    const whole = await walk('from=2026-11-02&to=2026-11-15');
    expect(whole.first).toMatchObject({ from: '2026-11-02', to: '2026-11-15', releasedThrough: '2026-11-15' });
    for (const [from, to] of [['2026-11-08', '2026-11-09'], ['2026-11-04', '2026-11-13'], ['2026-11-02', '2026-11-10']]) {
      const part = await walk(`from=${from}&to=${to}`);
      expect(part.ids).toEqual(whole.ids);
      expect(part.first).toMatchObject({ from: '2026-11-02', to: '2026-11-15' });
    }
  });

  it('orders weeks newest first and, inside a week, by the keyed hash, stable across requests and pages', async () => {
    const expected = model.answer('2026-10-26', '2026-11-22', undefined, clock);
    const one = await walk('from=2026-10-26&to=2026-11-22', 100);
    const paged = await walk('from=2026-10-26&to=2026-11-22', 3);
    const again = await walk('from=2026-10-26&to=2026-11-22', 7);
    expect(one.ids).toEqual(expected.ids);
    expect(paged.ids).toEqual(expected.ids);
    expect(again.ids).toEqual(expected.ids);
    expect(one.first).toMatchObject({ from: '2026-10-26', to: '2026-11-22', releasedThrough: '2026-11-15' });
    // Not the order of time (newest first or oldest first) within W46.
    const w46 = one.ids.filter((id) => model.weekOf(id) === Date.parse('2026-11-09'));
    const byTime = [...w46].sort((a, b) => model.pulses.get(a)!.createdAt.localeCompare(model.pulses.get(b)!.createdAt) || a.localeCompare(b));
    expect(w46).not.toEqual(byTime);
    expect(w46).not.toEqual([...byTime].reverse());
  });

  it('defaults to the last 30 days (whole weeks) and 20 items', async () => {
    clock = Date.parse('2026-11-18T10:00:00.000Z');
    const res = await c.get('/v1/comments');
    const body = res.json();
    expect(body).toMatchObject({ from: '2026-10-19', to: '2026-11-22', releasedThrough: '2026-11-15', minimumSample: 5 });
    const expected = model.answer('2026-10-20', '2026-11-18', undefined, clock);
    expect(body.items.map((x: { comment: string }) => textOf.get(x.comment))).toEqual(expected.ids.slice(0, 20));
    expect(typeof body.nextCursor).toBe('string');
    clock = Date.parse('2026-11-17T00:00:00.000Z');
  });

  it('freezes a released week: pulses imported into it later are never released, and say suppressed', async () => {
    const before = await walk('from=2026-11-09&to=2026-11-15&subteamId=t_five');
    const late = [...pulses(5, 't_five', '2026-11-10T12:00:00.000Z'), ...pulses(2, 't_five', W47)];
    // The loader says how many of its pulses fall into weeks already frozen: W46's five, not W47's two.
    expect((await loadDataset(t.db, dataset(late, false))).pulsesInFrozenWeeks).toBe(5);
    model.add(late);
    const after = await walk('from=2026-11-09&to=2026-11-15&subteamId=t_five');
    expect(after.ids).toEqual(before.ids);
    expect(after.first.suppressed).toBe(true);
    expect((await walk('from=2026-11-09&to=2026-11-15')).ids).toEqual(model.answer('2026-11-09', '2026-11-15', undefined, clock).ids);
  });

  it('withdraws a whole cell when a released comment stops being CLEAN', async () => {
    const six = DATA.filter((p) => p.subteamId === 't_six' && p.createdAt.startsWith('2026-11-02') && p.comment);
    expect((await walk('from=2026-11-02&to=2026-11-08&subteamId=t_six')).ids).toHaveLength(5);
    await t.db.query(sql('test.flag', `UPDATE pulses SET moderation_status = 'FLAGGED' WHERE org_id = $1 AND id = $2`), [ORG, six[0].id]);
    model.setStatus(six[0].id, 'FLAGGED');
    const after = await c.get('/v1/comments?from=2026-11-02&to=2026-11-08&subteamId=t_six');
    expect(after.json()).toMatchObject({ items: [], suppressed: true });
    expect((await walk('from=2026-11-02&to=2026-11-08')).ids).toEqual(model.answer('2026-11-02', '2026-11-08', undefined, clock).ids);
  });

  it('refuses tampered, foreign and mismatched cursors with invalid_cursor', async () => {
    const first = (await c.get('/v1/comments?from=2026-10-26&to=2026-11-22&limit=2')).json();
    expect(typeof first.nextCursor).toBe('string');
    const tampered = first.nextCursor.slice(0, -2) + (first.nextCursor.endsWith('AA') ? 'AB' : 'AA');
    for (const q of [`cursor=${tampered}`, 'cursor=abc', `cursor=${first.nextCursor}&subteamId=t_five`, `cursor=${first.nextCursor}&to=2026-11-21`]) {
      const res = await c.get(`/v1/comments?from=2026-10-26&${q}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('invalid_cursor');
    }
  });

  it('accepts the calendar extremes 0001-01-01 and 9999-12-31', async () => {
    const res = await c.get('/v1/comments?from=0001-01-01&to=9999-12-31&limit=1');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ from: '0001-01-01', to: '9999-12-31', releasedThrough: '2026-11-15' });
  });

  it.each([
    ['from=2026-11-31', 'invalid_request'],
    ['to=2026-02-30', 'invalid_request'],
    ['from=20261101', 'invalid_request'],
    ['limit=0', 'invalid_request'],
    ['limit=101', 'invalid_request'],
    ['from=2026-11-10&to=2026-11-09', 'invalid_request'],
    ['level=3', 'invalid_request'],
  ])('refuses %s with %s', async (q, code) => {
    const res = await c.get(`/v1/comments?${q}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe(code);
  });
});

/**
 * The three attacks of issue 9, each on the data that defeated the old rule: a comment tied to
 * its pulse by the difference of two answers. Each asserts that the difference is a union of
 * whole released cells of at least 5 CLEAN pulses (or nothing).
 */
describe('GET /comments: the attacks that tied a comment to one pulse', () => {
  let t: TestApp;
  let c: ReturnType<typeof api>;
  let clock = Date.parse('2026-11-22T12:00:00.000Z');
  const model = new CommentModel(SECRET, 24 * 3_600_000);
  // Design: 6 pulses a day for 13 days, plus one pulse on the 14th (the newest of all).
  const base = [
    ...Array.from({ length: 13 }, (_, d) => pulses(6, 't_design', new Date(Date.parse('2026-11-09T08:00:00.000Z') + d * 86_400_000).toISOString())).flat(),
    ...pulses(1, 't_design', '2026-11-22T08:00:00.000Z'),
    // Everyone outside Design: four people in W46.
    ...pulses(4, 't_small', '2026-11-10T10:00:00.000Z', { step: 86_400_000 }),
  ];
  const textOf = new Map(base.map((p) => [p.comment, p.id]));

  beforeAll(async () => {
    const ds = dataset(base);
    ds.organizations![0].teams = ['t_design', 't_small'].map((id) => ({ id, name: id, createdAt: '2026-01-01T00:00:00.000Z' }));
    t = await createTestApp({ dataset: ds, clock: () => new Date(clock), env: { COMMENT_CURSOR_SECRET: SECRET } });
    c = api(t.app, KEY);
    model.add(base);
  });
  afterAll(() => t.close());

  /** Every comment of a walk over all pages, as pulse ids; the model sees the same request at the same moment. */
  async function ids(from: string, to: string, team?: string) {
    model.answer(from, to, team, clock);
    const query = `from=${from}&to=${to}${team ? `&subteamId=${team}` : ''}`;
    const out: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await c.get(`/v1/comments?limit=100&${query}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      out.push(...res.json().items.map((x: { comment: string }) => textOf.get(x.comment)!));
      cursor = res.json().nextCursor;
    } while (cursor);
    return new Set(out);
  }

  function expectUnionOfCells(difference: Set<string>) {
    for (const [cell, { sample, commentIds }] of model.cellsOf(difference)) {
      expect(sample, `cell ${cell}`).toBeGreaterThanOrEqual(5);
      for (const id of commentIds) expect(difference.has(id), `cell ${cell} is cut`).toBe(true);
    }
  }
  const minus = (a: Set<string>, b: Set<string>) => new Set([...a].filter((x) => !b.has(x)));

  it('attack: a range minus the same range one day shorter', async () => {
    const long = await ids('2026-11-10', '2026-11-22', 't_design');
    const short = await ids('2026-11-10', '2026-11-21', 't_design');
    const diff = minus(long, short);
    expect(diff.size).toBe(0);
    expectUnionOfCells(diff);
    // The newest pulse GET /pulses shows is in a week that is not released: its comment is nowhere.
    const newest = base.find((p) => p.createdAt === '2026-11-22T08:00:00.000Z')!.id;
    expect(long.has(newest)).toBe(false);
  });

  it('attack: the organization minus one team', async () => {
    const org = await ids('2026-11-09', '2026-11-22');
    const design = await ids('2026-11-09', '2026-11-22', 't_design');
    const rest = minus(org, design);
    // Everyone outside Design is 4 people: a remainder of 4, withheld, and said so.
    expectUnionOfCells(rest);
    expect(rest.size).toBe(0);
    expect((await c.get('/v1/comments?from=2026-11-09&to=2026-11-22')).json().suppressed).toBe(true);
  });

  it('attack: the same range asked again later', async () => {
    const now = await ids('2026-11-09', '2026-11-22', 't_design');
    const late = pulses(1, 't_design', '2026-11-15T20:00:00.000Z');
    await loadDataset(t.db, dataset(late, false));
    model.add(late);
    clock = Date.parse('2026-11-24T01:00:00.000Z'); // W47 ends and its delay passes
    const later = await ids('2026-11-09', '2026-11-22', 't_design');
    const diff = minus(later, now);
    expect(diff.size).toBeGreaterThanOrEqual(5);
    expectUnionOfCells(diff);
    expect(diff.has(late[0].id)).toBe(false);
    for (const id of now) expect(later.has(id)).toBe(true);
  });
});
