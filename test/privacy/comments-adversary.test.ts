import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { loadDataset, type Dataset } from '../../src/domain/dataset.js';
import { deleteOrganization } from '../../src/domain/orgs.js';
import { ingestPulses } from '../../src/domain/ingest.js';
import { moderatePulse } from '../../src/domain/moderation.js';
import { commentHandle, updateCommentHidden } from '../../src/domain/comments.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CommentModel, mondayOf, ymd, type ModelCell, type ModelPulse } from '../helpers/comment-model.js';
import { api } from '../helpers/openapi.js';
import { operatorActor } from '../../src/domain/audit.js';

/**
 * An attacker with keys of two organizations of one deployment that hold the same pulses under the
 * same ids, seeded and repeatable. Rounds advance the clock across week ends and, between them,
 * import pulses (also into weeks already released, and into weeks never asked about) and moderate:
 * random pulses flagged and set CLEAN again, whole cells flagged one pulse after another, and
 * "twin" moves, where one organization flags a pulse with a comment and the other a pulse without a
 * comment of the same released cell. Every answer is mapped back to its pulses (the test knows
 * every text) and must be exactly what the contract defines (an independent model per
 * organization); within a round, any difference or intersection of two answers must be whole
 * cells of at least 5 CLEAN pulses; over time, a released week's answer changes only by whole new
 * late cells of at least 5 and by the comments of pulses that stopped (or started again) being
 * CLEAN; the two organizations answer alike except for the comments of the twin moves, GET /pulses
 * and the statistics alike; and their orders differ.
 */
const SEED = Number(process.env.ADVERSARY_SEED ?? 20261122);
const SECRET = 'adversary-secret-0123456789abcdef0123';
const ORG = 'org_adversary';
const TWIN = 'org_adversary_twin';
const KEYS = ['cp_test_adversary_one_0123456789', 'cp_test_adversary_two_0123456789'];
const TWIN_KEY = 'cp_test_adversary_twin_012345678';
const DAY = 86_400_000;
const WEEK = 7 * DAY;
/** Pulses a week per group, around which each week varies: large, middling, small and lone teams. */
const TEAMS: Record<string, number> = { t_big: 14, t_mid: 6, t_small: 3, t_pair: 2, t_lone: 1 };
const NO_TEAM = 3;
const START = Date.parse('2026-09-07T00:00:00.000Z'); // a Monday

function factorial(k: number): number {
  return k <= 1 ? 1 : k * factorial(k - 1);
}

function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Walk {
  ids: string[];
  first: Record<string, unknown>;
}

describe(`GET /comments under attack, with moderation, late pulses and a twin organization (seed ${SEED})`, () => {
  const rnd = prng(SEED);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  let clock = START + 8 * WEEK + 3 * DAY + 5 * 3_600_000;
  let t: TestApp;
  const models: Record<string, CommentModel> = { [ORG]: new CommentModel(SECRET, 24 * 3_600_000, ORG), [TWIN]: new CommentModel(SECRET, 24 * 3_600_000, TWIN) };
  const model = models[ORG];
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
    const levels = ps.map(() => int(1, 5));
    return {
      organizations: [ORG, TWIN].map((id) => ({
        id,
        name: id,
        plan: 'enterprise',
        memberCount: 40,
        createdAt: '2026-01-01T00:00:00.000Z',
        deletedAt: null,
        ...(first
          ? {
              apiKeys: (id === ORG ? KEYS : [TWIN_KEY]).map((key, i) => ({ key, name: `k${i}`, revoked: false })),
              teams: Object.keys(TEAMS).map((team) => ({ id: team, name: team, createdAt: '2026-01-01T00:00:00.000Z' })),
            }
          : {}),
        pulses: ps.map((p, i) => ({ ...p, level: levels[i], reason: null })),
      })),
    };
  }
  async function importPulses(ps: ModelPulse[]) {
    await loadDataset(t.db, dataset(ps));
    for (const m of Object.values(models)) m.add(ps);
  }
  async function moderate(org: string, id: string, status: 'CLEAN' | 'FLAGGED') {
    await moderatePulse(t.db, org, id, status, operatorActor(), new Date());
    models[org].setStatus(id, status);
  }
  const status = (org: string, id: string) => models[org].pulses.get(id)!.moderationStatus;
  /** The console's hide (or show) of a released comment, by its handle, as an admin of `org` would. */
  async function hide(org: string, id: string, hidden: boolean) {
    const handle = commentHandle({ week: ymd(models[org].weekOf(id)), rank: models[org].rank(id) });
    const r = await updateCommentHidden(t.db, org, handle, hidden, operatorActor(), new Date());
    expect(r.changed, `${hidden ? 'hiding' : 'showing'} ${id} in ${org}`).toBe(true);
    if (hidden) models[org].hidden.add(id);
    else models[org].hidden.delete(id);
  }

  async function walk(key: string, from: string, to: string, team: string | undefined, limit: number): Promise<Walk> {
    const ids: string[] = [];
    let cursor: string | null = null;
    let first: Record<string, unknown> | undefined;
    do {
      const q: string = `from=${from}&to=${to}&limit=${limit}${team ? `&subteamId=${team}` : ''}${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await api(t.app, key).get(`/v1/comments?${q}`);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      first ??= body;
      ids.push(...body.items.map((x: { comment: string }) => textOf.get(x.comment) ?? `unknown text ${x.comment}`));
      cursor = body.nextCursor;
    } while (cursor);
    return { ids, first: first! };
  }

  /** Every pulse GET /pulses lists (all of history), every statistic: the same in both organizations, as the model shows them. */
  async function compareOtherAnswers(label: string) {
    const list = async (key: string) => {
      const out: { id: string; moderationStatus: string }[] = [];
      let cursor: string | null = null;
      do {
        const res = await api(t.app, key).get(`/v1/pulses?from=2026-01-01T00:00:00.000Z&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(res.statusCode).toBe(200);
        out.push(...res.json().items);
        cursor = res.json().nextCursor;
      } while (cursor);
      return out;
    };
    const [a, b] = [await list(KEYS[0]), await list(TWIN_KEY)];
    expect(a, `${label}: GET /pulses differs between the organizations`).toEqual(b);
    expect(a.length).toBe([...model.pulses.values()].filter((p) => Date.parse(p.createdAt) < clock).length);
    for (const p of a) expect(p.moderationStatus, `${label}: status of ${p.id}`).toBe(model.shownStatus(p.id));
    for (const path of ['/v1/stats', `/v1/stats/daily?from=${new Date(clock - 200 * DAY).toISOString()}`]) {
      expect((await api(t.app, KEYS[1]).get(path)).json(), `${label}: ${path}`).toEqual((await api(t.app, TWIN_KEY).get(path)).json());
    }
  }

  beforeAll(async () => {
    const history = Array.from({ length: 9 }, (_, w) => week(START + w * WEEK)).flat();
    t = await createTestApp({ dataset: dataset(history, true), clock: () => new Date(clock), env: { COMMENT_CURSOR_SECRET: SECRET } });
    for (const m of Object.values(models)) await m.add(history).readSalt(t.db);
  });
  afterAll(() => t.close());

  it('answers are unions of released cells, late releases are whole new cells of 5, moderation tells nothing, the twin differs only by a comment', async () => {
    /** week + filter -> the comments the last answer gave for that week under that filter. */
    const lastGiven = new Map<string, { ids: Set<string>; frozen: boolean }>();
    /** Pulses that were not CLEAN (or whose comment was hidden) at some moment: their comments may leave and come back. */
    const everFlagged = new Set([...model.pulses.values()].filter((p) => p.moderationStatus !== 'CLEAN').map((p) => p.id));
    let twinMoves = 0;
    const twins: { x: string; y: string }[] = [];
    const hides: { x: string; y: string }[] = [];
    let hideMoves = 0;
    const teams = [...Object.keys(TEAMS), undefined, undefined, 't_unknown'];
    let requests = 0;
    let checked = 0;
    let compared = 0;
    let sameOrder = 0;
    let lateCellsSeen = 0;
    let removedSeen = 0;
    let watchedBeforeRelease = 0;
    let guessesSent = 0;
    const cellKey = (c: ModelCell) => `${ymd(c.week)}/${c.name}#${c.batch}`;

    async function ask(from: string, to: string, team: string | undefined, label: string, answers?: { label: string; ids: Set<string> }[]) {
      const limit = int(1, 30);
      const expected = model.answer(from, to, team, clock);
      const twinExpected = models[TWIN].answer(from, to, team, clock);
      const got = await walk(pick(KEYS), from, to, team, limit);
      const twin = await walk(TWIN_KEY, from, to, team, int(1, 30));
      requests += 2;
      expect(got.ids, label).toEqual(expected.ids);
      expect(twin.ids, `${label} (twin)`).toEqual(twinExpected.ids);
      const env = { suppressed: expected.suppressed, from: expected.from, to: expected.to, releasedThrough: expected.releasedThrough, minimumSample: 5 };
      expect(got.first, label).toMatchObject(env);
      // The twin answers alike, except for the comments of pulses whose status differs between them.
      expect(twin.first, `${label} (twin)`).toMatchObject(env);
      const [a, b] = [new Set(got.ids), new Set(twin.ids)];
      for (const id of [...a].filter((x) => !b.has(x)).concat([...b].filter((x) => !a.has(x)))) {
        const explained = status(ORG, id) !== status(TWIN, id) || models[ORG].hidden.has(id) !== models[TWIN].hidden.has(id);
        expect(explained, `${label}: ${id} differs between the twins`).toBe(true);
      }
      // The order of the same pulses differs between the organizations. Weeks come newest first in
      // both, and each week is ordered by its organization's key: two answers whose common comments
      // fall k1, k2, ... to a week are in the same order by chance 1 / (k1! k2! ...). Only answers
      // where that chance is under one in a million are compared, so that a same order means a leak.
      const common = got.ids.filter((id) => b.has(id));
      const perWeek = new Map<number, number>();
      for (const id of common) perWeek.set(model.weekOf(id), (perWeek.get(model.weekOf(id)) ?? 0) + 1);
      const orders = [...perWeek.values()].reduce((n, k) => n * factorial(k), 1);
      if (orders >= 1_000_000) {
        compared++;
        if (JSON.stringify(common) === JSON.stringify(twin.ids.filter((id) => a.has(id)))) sameOrder++;
      }
      answers?.push({ label, ids: a });

      // Over time, a released week changes only by whole new cells of >= 5 and by comments of pulses that left CLEAN or came back.
      const byWeek = new Map<number, Set<string>>();
      for (const id of got.ids) byWeek.set(model.weekOf(id), (byWeek.get(model.weekOf(id)) ?? new Set()).add(id));
      const releasedThrough = expected.releasedThrough ? Date.parse(expected.releasedThrough) : -Infinity;
      for (let w = mondayOf(Date.parse(from)); w <= releasedThrough; w += WEEK) {
        const k = `${ymd(w)}/${team ?? 'org'}`;
        const now = byWeek.get(w) ?? new Set<string>();
        const before = lastGiven.get(k);
        // A week that was not frozen (no CLEAN pulse yet) when last answered may be released whole now.
        if (before?.frozen) {
          for (const id of before.ids)
            if (!now.has(id)) {
              expect(model.showsComment(id), `${label}: ${k} lost ${id}, which is CLEAN and not hidden`).toBe(false);
              removedSeen++;
            }
          const known = new Set(model.cellsOf(before.ids).keys());
          const added = [...now].filter((id) => !before.ids.has(id));
          for (const [key, { cell, commentIds }] of model.cellsOf(added.filter((id) => !everFlagged.has(id)))) {
            // Not a comment coming back: a late cell, new, whole, of at least 5.
            expect(known.has(key), `${label}: ${added} appeared alone in ${key}`).toBe(false);
            expect(cell.batch, `${label}: ${key} appeared in a frozen week, not as a late cell`).toBeGreaterThan(0);
            expect(cell.sample, `${label}: late cell ${key}`).toBeGreaterThanOrEqual(5);
            for (const id of commentIds) expect(now.has(id), `${label}: late cell ${key} is cut`).toBe(true);
            lateCellsSeen++;
          }
        }
        lastGiven.set(k, { ids: now, frozen: model.frozenWeeks.has(w) });
      }
    }

    for (let round = 0; round < 6; round++) {
      // Time passes, and pulses arrive: this week's, late ones into earlier (also released) weeks,
      // and history into weeks that a request back to 2026-01-01 covered while they were empty.
      clock += int(1, 4) * DAY + int(0, 23) * 3_600_000;
      const late = Array.from({ length: int(3, 9) }, () => pulse(pick([...Object.keys(TEAMS), null]), mondayOf(clock) - int(1, 6) * WEEK + int(0, WEEK - 1)));
      const old = round % 2 === 1 ? week(START - int(4, 30) * WEEK, 0.6) : [];
      await importPulses([...week(mondayOf(clock), 0.5), ...late, ...old]);

      // Moderators review pulses no release has covered yet (flag, then clear after review) while the
      // attacker watches GET /pulses over their week: nothing may move (CONTRACT.md section 5).
      const uncovered = [...model.pulses.values()].filter((p) => !model.frozen.has(p.id) && Date.parse(p.createdAt) < clock);
      for (let i = 0; i < 3 && uncovered.length > 0; i++) {
        const p = uncovered.splice(int(0, uncovered.length - 1), 1)[0];
        const w = mondayOf(Date.parse(p.createdAt));
        const watch = async () =>
          (await api(t.app, KEYS[0]).get(`/v1/pulses?from=${new Date(w).toISOString()}&to=${new Date(w + WEEK).toISOString()}&limit=200`)).body;
        const before = await watch();
        const other = status(ORG, p.id) === 'CLEAN' ? 'FLAGGED' : 'CLEAN';
        for (const org of [ORG, TWIN]) await moderate(org, p.id, other);
        expect(await watch(), `round ${round}: GET /pulses moved when ${p.id} was moderated before its release`).toBe(before);
        if (rnd() < 0.5) {
          for (const org of [ORG, TWIN]) await moderate(org, p.id, other === 'CLEAN' ? 'FLAGGED' : 'CLEAN');
          expect(await watch(), `round ${round}: GET /pulses moved when ${p.id} was moderated back`).toBe(before);
        } else if (other === 'FLAGGED') everFlagged.add(p.id);
        watchedBeforeRelease++;
      }

      // The attacker with the operator token re-sends pulses with guessed comments (right and wrong):
      // every answer is the same, so no guess is confirmed; stored comments stay.
      const listed: Record<string, unknown>[] = (await api(t.app, KEYS[0]).get(`/v1/pulses?from=${new Date(clock - 60 * DAY).toISOString()}&limit=200`)).json()
        .items;
      for (let i = 0; i < 4 && listed.length > 0; i++) {
        const { subteamName: _, ...stored } = pick(listed) as Record<string, unknown> & { id: string; subteamName: unknown };
        const right = model.pulses.get(stored.id)!.comment;
        const answers = new Set<string>();
        for (const comment of [right, `words of adv_${String(int(1, seq)).padStart(5, '0')}`, null]) {
          answers.add(JSON.stringify(await ingestPulses(t.db, ORG, [{ ...stored, comment }], operatorActor(), new Date())));
          guessesSent++;
        }
        expect([...answers], `round ${round}: re-sending ${stored.id} with guesses`).toEqual([JSON.stringify({ inserted: 0, unchanged: 1, inFrozenWeeks: 0 })]);
      }

      // Moderation between rounds, the same in both organizations except for the twin moves.
      const released = [...model.frozen.keys()].filter((id) => model.cellOf(id)?.released);
      for (let i = 0; i < int(4, 10); i++) {
        const id = pick(rnd() < 0.5 && released.length > 0 ? released : [...model.pulses.keys()]);
        if (twins.some((x) => x.x === id || x.y === id)) continue;
        const s = rnd() < 0.6 ? 'FLAGGED' : 'CLEAN';
        for (const org of [ORG, TWIN]) await moderate(org, id, s);
        if (s === 'FLAGGED') everFlagged.add(id);
      }
      // Twin moves: one organization flags a comment's pulse, the other a silent pulse of the same released cell.
      for (const cell of new Set(released.map((id) => model.cellOf(id)!))) {
        if (twins.length > 2 * round + 2 || rnd() < 0.7) continue;
        const members = cell.members.filter(
          (id) => status(ORG, id) === 'CLEAN' && status(TWIN, id) === 'CLEAN' && !twins.some((x) => x.x === id || x.y === id),
        );
        const x = members.find((id) => models[ORG].showsComment(id) && models[TWIN].showsComment(id));
        const y = members.find((id) => !model.pulses.get(id)!.comment);
        if (!x || !y) continue;
        await moderate(ORG, x, 'FLAGGED');
        await moderate(TWIN, y, 'FLAGGED');
        everFlagged.add(x).add(y);
        twins.push({ x, y });
        twinMoves++;
      }
      // Hide twin moves (the console's only moderation): one organization hides the comment of one
      // pulse of a released cell, the other the comment of another pulse of the same cell. The answers
      // may differ by those two comments only: GET /pulses, the statistics and `suppressed` stay alike.
      for (const cell of new Set(released.map((id) => model.cellOf(id)!))) {
        if (hides.length > round + 1 || rnd() < 0.6) continue;
        const taken = (id: string) => twins.some((x) => x.x === id || x.y === id) || hides.some((x) => x.x === id || x.y === id);
        const shown = cell.members.filter((id) => models[ORG].showsComment(id) && models[TWIN].showsComment(id) && !taken(id));
        if (shown.length < 2) continue;
        const [x, y] = [shown[0], shown[1 + int(0, shown.length - 2)]];
        await hide(ORG, x, true);
        await hide(TWIN, y, true);
        everFlagged.add(x).add(y);
        hides.push({ x, y });
        hideMoves++;
      }
      if (round >= 2 && hides.length > 0 && rnd() < 0.7) {
        const { x, y } = hides.shift()!;
        await hide(ORG, x, false);
        await hide(TWIN, y, false);
      }
      // Some twin moves are undone: both come back.
      if (round >= 3 && twins.length > 0) {
        const { x, y } = twins.shift()!;
        await moderate(ORG, x, 'CLEAN');
        await moderate(TWIN, y, 'CLEAN');
      }
      // A whole released cell, flagged one pulse after another: the answer loses one comment at a time, nothing else moves.
      const whole = released.length > 0 ? model.cellOf(pick(released)) : undefined;
      if (whole && round % 2 === 0) {
        const w = ymd(whole.week);
        const team = whole.name.startsWith('team:') ? whole.name.slice(5) : undefined;
        for (const id of whole.members.filter((m) => !twins.some((x) => x.x === m || x.y === m))) {
          for (const org of [ORG, TWIN]) await moderate(org, id, 'FLAGGED');
          everFlagged.add(id);
          await ask(w, w, team, `round ${round}: cell ${cellKey(whole)} after flagging ${id}`);
        }
        await compareOtherAnswers(`round ${round} after a whole cell`);
      }

      const answers: { label: string; ids: Set<string> }[] = [];
      for (let r = 0; r < 40; r++) {
        const a = clock - int(-7, 70) * DAY;
        const b = clock - int(-7, 70) * DAY;
        const [from, to] = rnd() < 0.08 ? ['2026-01-01', ymd(clock)] : [ymd(Math.min(a, b)), ymd(Math.max(a, b))];
        const team = pick(teams);
        await ask(from, to, team, `round ${round} request ${r}: ${from}..${to} ${team ?? 'org'}`, answers);
      }
      await compareOtherAnswers(`round ${round}`);

      // Within a round (no moderation), differences and intersections of answers are whole cells of at least 5, or nothing.
      for (let i = 0; i < answers.length; i++) {
        for (let j = i + 1; j < answers.length; j++) {
          const [a, b] = [answers[i].ids, answers[j].ids];
          for (const part of [[...a].filter((x) => !b.has(x)), [...a].filter((x) => b.has(x)), [...b].filter((x) => !a.has(x))]) {
            const set = new Set(part);
            for (const [key, { cell, commentIds }] of model.cellsOf(set)) {
              if (cell.sample < 5 || !cell.released) expect.fail(`${answers[i].label} vs ${answers[j].label}: cell ${key} has ${cell.sample} pulses`);
              for (const id of commentIds) if (!set.has(id)) expect.fail(`${answers[i].label} vs ${answers[j].label}: cell ${key} is cut`);
            }
            checked++;
          }
        }
      }
    }

    // Every late release in the database is a whole new cell of at least 5 CLEAN pulses.
    const cells = await t.db.query<{ org_id: string; cell: string; batch: number; sample: number; released: boolean; members: number }>(
      sql(
        'test.late_cells',
        `SELECT c.org_id, c.cell, c.batch, c.sample, c.released,
                (SELECT count(*) FROM comment_release_members m
                  WHERE m.org_id = c.org_id AND m.week = c.week AND m.batch = c.batch AND m.cell = c.cell AND m.frozen_status = 'CLEAN')::int AS members
           FROM comment_cells c WHERE c.org_id IN ($1, $2) AND c.batch > 0`,
      ),
      [ORG, TWIN],
    );
    for (const c of cells.filter((x) => x.released)) {
      expect(c.sample, `late cell ${c.cell}#${c.batch}`).toBeGreaterThanOrEqual(5);
      expect(c.members).toBe(c.sample);
    }
    expect(model.lateCells.length).toBeGreaterThan(0);
    expect(cells.filter((c) => c.released && c.org_id === ORG).length).toBe(model.lateCells.length);

    expect(requests).toBeGreaterThan(480);
    expect(checked).toBeGreaterThan(10_000);
    // The attack found something to look at: late cells appearing, comments leaving, twins, and orders to compare.
    expect(lateCellsSeen).toBeGreaterThan(0);
    expect(removedSeen).toBeGreaterThan(0);
    expect(twinMoves).toBeGreaterThan(2);
    expect(hideMoves).toBeGreaterThan(2);
    expect(watchedBeforeRelease).toBeGreaterThan(10);
    expect(guessesSent).toBeGreaterThan(60);
    expect(compared).toBeGreaterThan(20);
    expect(sameOrder).toBe(0);
  }, 300_000);

  it('erasing the organization and creating it again with the same pulses ties no comment by its order', async () => {
    // The attacker reads every released week, erases the organization, creates it again with the same
    // id and the same pulse ids whose comments now name them, and lines the two answers up by position.
    const from = ymd(START - 40 * WEEK);
    const to = ymd(clock - 10 * DAY);
    const victim = await walk(KEYS[0], from, to, undefined, 100);
    const byWeek = (ids: string[]) => {
      const out = new Map<number, string[]>();
      for (const id of ids) out.set(model.weekOf(id), [...(out.get(model.weekOf(id)) ?? []), id]);
      return out;
    };
    const all = [...model.pulses.values()];
    await deleteOrganization(t.db, ORG, { erase: true }, operatorActor(), new Date());
    const mirror: ModelPulse[] = all.map((p) => ({ ...p, comment: p.comment ? `mirror ${p.id}` : p.comment }));
    for (const p of mirror) if (p.comment) textOf.set(p.comment, p.id);
    const ds = dataset(mirror, true);
    ds.organizations = ds.organizations!.filter((o) => o.id === ORG);
    await loadDataset(t.db, ds);
    for (const p of all) if (p.moderationStatus !== 'CLEAN') await moderatePulse(t.db, ORG, p.id, p.moderationStatus, operatorActor(), new Date());
    const again = await walk(KEYS[0], from, to, undefined, 100);
    let weeks = 0;
    let sameWeeks = 0;
    let tied = 0;
    for (const [w, ids] of byWeek(victim.ids)) {
      const other = (byWeek(again.ids).get(w) ?? []).filter((id) => ids.includes(id));
      const same = ids.filter((id) => other.includes(id));
      if (same.length < 5) continue;
      weeks++;
      // The order of a week's common comments differs (equal by chance once in 120 for five); positions match only by chance.
      if (JSON.stringify(other) === JSON.stringify(same)) sameWeeks++;
      tied += same.filter((id, i) => other[i] === id).length;
    }
    expect(weeks).toBeGreaterThan(5);
    expect(sameWeeks, 'weeks whose order mirrors the erased organization').toBeLessThan(2);
    expect(tied / victim.ids.length).toBeLessThan(0.3);
  }, 120_000);
});
