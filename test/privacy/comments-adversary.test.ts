import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDataset, type Dataset } from '../../src/domain/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CommentModel, mondayOf, ymd, type ModelPulse } from '../helpers/comment-model.js';
import { api } from '../helpers/openapi.js';

/**
 * An attacker with two keys of one organization, seeded and repeatable. Rounds advance the clock
 * across week ends and import pulses between them, also into weeks already released. Every answer
 * is mapped back to its pulses (the test knows every text) and must be exactly the union of
 * released cells the contract defines; any difference or intersection of two answers must be
 * whole cells of at least 5 CLEAN pulses, or nothing; a released week never changes its answer.
 */
const SEED = Number(process.env.ADVERSARY_SEED ?? 20261122);
const SECRET = 'adversary-secret-0123456789abcdef0123';
const ORG = 'org_adversary';
const KEYS = ['cp_test_adversary_one_0123456789', 'cp_test_adversary_two_0123456789'];
const DAY = 86_400_000;
const WEEK = 7 * DAY;
/** Pulses a week per group, around which each week varies: large, middling, small and lone teams. */
const TEAMS: Record<string, number> = { t_big: 14, t_mid: 6, t_small: 3, t_pair: 2, t_lone: 1 };
const NO_TEAM = 3;
const START = Date.parse('2026-09-07T00:00:00.000Z'); // a Monday

function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe(`GET /comments under attack (seed ${SEED})`, () => {
  const rnd = prng(SEED);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T,>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  let clock = START + 8 * WEEK + 3 * DAY + 5 * 3_600_000;
  let t: TestApp;
  const model = new CommentModel(SECRET, 24 * 3_600_000, ORG);
  const textOf = new Map<string, string>();
  let seq = 0;

  /** One week of pulses for every group, with ties on the week's first and last instants. */
  function week(monday: number, scale = 1): ModelPulse[] {
    const out: ModelPulse[] = [];
    for (const [team, n] of [...Object.entries(TEAMS), [null, NO_TEAM] as const]) {
      const count = Math.max(0, Math.round((n as number) * scale) + int(-1, 1));
      for (let i = 0; i < count; i++) {
        const edge = rnd();
        const at = edge < 0.06 ? monday : edge < 0.12 ? monday + WEEK - 1 : monday + int(0, WEEK - 1);
        out.push(pulse(team as string | null, at));
      }
    }
    return out;
  }
  function pulse(team: string | null, at: number): ModelPulse {
    const id = `adv_${String(++seq).padStart(5, '0')}`;
    const comment = rnd() < 0.7 ? `words of ${id}` : rnd() < 0.5 ? '' : null;
    if (comment) textOf.set(comment, id);
    return { id, comment, moderationStatus: rnd() < 0.12 ? 'FLAGGED' : 'CLEAN', subteamId: team, createdAt: new Date(at).toISOString() };
  }
  function dataset(ps: ModelPulse[], first = false): Dataset {
    return {
      organizations: [
        {
          id: ORG, name: 'Adversary', plan: 'enterprise', memberCount: 40, createdAt: '2026-01-01T00:00:00.000Z', deletedAt: null,
          ...(first
            ? {
                apiKeys: KEYS.map((key, i) => ({ key, name: `k${i}`, revoked: false })),
                teams: Object.keys(TEAMS).map((id) => ({ id, name: id, createdAt: '2026-01-01T00:00:00.000Z' })),
              }
            : {}),
          pulses: ps.map((p) => ({ ...p, level: int(1, 5), reason: null })),
        },
      ],
    };
  }
  async function importPulses(ps: ModelPulse[]) {
    await loadDataset(t.db, dataset(ps));
    model.add(ps);
  }

  beforeAll(async () => {
    const history = Array.from({ length: 9 }, (_, w) => week(START + w * WEEK)).flat();
    t = await createTestApp({ dataset: dataset(history, true), clock: () => new Date(clock), env: { COMMENT_CURSOR_SECRET: SECRET } });
    model.add(history);
  });
  afterAll(() => t.close());

  it('every answer is a union of released cells; no difference or intersection isolates fewer than 5 pulses; released weeks never change', async () => {
    const answers: { label: string; ids: Set<string> }[] = [];
    /** week + filter -> the comments first given for that week under that filter. */
    const firstGiven = new Map<string, string[]>();
    const teams = [...Object.keys(TEAMS), undefined, undefined, 't_unknown'];
    let requests = 0;

    for (let round = 0; round < 6; round++) {
      // Time passes, and pulses arrive: this week's, and late ones into earlier (also released) weeks.
      clock += int(1, 4) * DAY + int(0, 23) * 3_600_000;
      const late = Array.from({ length: int(1, 6) }, () =>
        pulse(pick([...Object.keys(TEAMS), null]), mondayOf(clock) - int(1, 6) * WEEK + int(0, WEEK - 1)),
      );
      await importPulses([...week(mondayOf(clock), 0.5), ...late]);

      for (let r = 0; r < 40; r++) {
        const a = clock - int(-7, 70) * DAY;
        const b = clock - int(-7, 70) * DAY;
        const [from, to] = [ymd(Math.min(a, b)), ymd(Math.max(a, b))];
        const team = pick(teams);
        const key = pick(KEYS);
        const limit = int(1, 30);
        const expected = model.answer(from, to, team, clock);
        const got: string[] = [];
        let cursor: string | null = null;
        let first: Record<string, unknown> | undefined;
        do {
          const q: string = `from=${from}&to=${to}&limit=${limit}${team ? `&subteamId=${team}` : ''}${cursor ? `&cursor=${cursor}` : ''}`;
          const res = await api(t.app, key).get(`/v1/comments?${q}`);
          requests++;
          expect(res.statusCode, res.body).toBe(200);
          const body = res.json();
          first ??= body;
          got.push(...body.items.map((x: { comment: string }) => textOf.get(x.comment) ?? `unknown text ${x.comment}`));
          cursor = body.nextCursor;
        } while (cursor);
        const label = `round ${round} request ${r}: ${from}..${to} ${team ?? 'org'}`;
        expect(got, label).toEqual(expected.ids);
        expect(first, label).toMatchObject({
          suppressed: expected.suppressed, from: expected.from, to: expected.to, releasedThrough: expected.releasedThrough, minimumSample: 5,
        });
        answers.push({ label, ids: new Set(got) });

        const byWeek = new Map<number, string[]>();
        for (const id of got) byWeek.set(model.weekOf(id), [...(byWeek.get(model.weekOf(id)) ?? []), id]);
        const releasedThrough = expected.releasedThrough ? Date.parse(expected.releasedThrough) : -Infinity;
        for (let w = mondayOf(Date.parse(from)); w <= releasedThrough; w += WEEK) {
          const k = `${ymd(w)}/${team ?? 'org'}`;
          const now = byWeek.get(w) ?? [];
          if (firstGiven.has(k)) expect(now, `${label}: week ${k} changed`).toEqual(firstGiven.get(k));
          else firstGiven.set(k, now);
        }
      }
    }

    // Differences and intersections of every pair of answers: whole cells of at least 5, or nothing.
    let checked = 0;
    for (let i = 0; i < answers.length; i++) {
      for (let j = i + 1; j < answers.length; j++) {
        const [a, b] = [answers[i].ids, answers[j].ids];
        for (const part of [[...a].filter((x) => !b.has(x)), [...a].filter((x) => b.has(x)), [...b].filter((x) => !a.has(x))]) {
          const set = new Set(part);
          for (const [cell, { cell: { sample }, commentIds }] of model.cellsOf(set)) {
            if (sample < 5) expect.fail(`${answers[i].label} vs ${answers[j].label}: cell ${cell} has ${sample} pulses`);
            for (const id of commentIds) if (!set.has(id)) expect.fail(`${answers[i].label} vs ${answers[j].label}: cell ${cell} is cut`);
          }
          checked++;
        }
      }
    }
    expect(requests).toBeGreaterThan(240);
    expect(checked).toBeGreaterThan(10_000);
    // The attack found something to look at: released comments, withheld remainders and late pulses.
    expect(answers.some((a) => a.ids.size > 0)).toBe(true);
  });
});
