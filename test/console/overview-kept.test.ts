import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { sql } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import type { Dataset } from '../../src/domain/dataset.js';
import { ingestPulses } from '../../src/domain/ingest.js';
import { overviewInsight } from '../../src/domain/insight.js';
import { overviewStats } from '../../src/domain/stats.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * Issue 53, the Overview at scale: the figures it reads from pulses are kept in memory until the
 * organization's next pulse (src/domain/pulse-figures.ts). These tests show what that must never
 * cost: a pulse through the door shows at the next view, teams, names and participation are read
 * afresh, and two databases never share a figure.
 */
const NOW = new Date('2026-11-20T12:00:00.000Z'); // a Friday of the week 2026-11-16
const ORG = 'org_kept';
const RANGE = { fromDate: '2026-11-01', toDate: '2026-11-20' };

type Pulse = NonNullable<NonNullable<Dataset['organizations']>[number]['pulses']>[number];
const pulses = (prefix: string, monday: string, team: string | null, levels: number[]): Pulse[] =>
  levels.map((level, i) => ({
    id: `${prefix}_${i}`,
    level,
    reason: null,
    comment: null,
    moderationStatus: 'CLEAN' as const,
    subteamId: team,
    createdAt: new Date(Date.parse(`${monday}T10:00:00.000Z`) + i * 3_600_000).toISOString(),
  }));

const dataset = (levels: number[]): Dataset => ({
  organizations: [
    {
      id: ORG,
      name: 'Kept',
      plan: 'business',
      memberCount: 40,
      createdAt: '2026-01-01T00:00:00.000Z',
      deletedAt: null,
      teams: [{ id: 'team_a', name: 'Support', createdAt: '2026-01-01T00:00:00.000Z' }],
      pulses: pulses('pk', '2026-11-09', 'team_a', levels),
    },
  ],
});

/** The executor, with the names of the queries run through it (the cache is kept per executor: one wrapper for all). */
function counting(db: DatabaseExecutor) {
  const names: string[] = [];
  const wrapped = Object.create(db) as DatabaseExecutor;
  wrapped.query = (q, params) => {
    names.push(q.name);
    return db.query(q, params);
  };
  return { db: wrapped, names };
}

let t: TestApp;
let twin: TestApp;
beforeAll(async () => {
  // Two databases with the same organization, the same pulse count and the same level sum, but
  // not the same levels: 3,3,3,3,3 here and 1,2,3,4,5 in the twin.
  [t, twin] = await Promise.all([
    createTestApp({ now: NOW, dataset: dataset([3, 3, 3, 3, 3]) }),
    createTestApp({ now: NOW, dataset: dataset([1, 2, 3, 4, 5]) }),
  ]);
});
afterAll(async () => {
  await Promise.all([t?.close(), twin?.close()]);
});

describe("the Overview's figures, kept until the next pulse", () => {
  it('a second view reads no rollup again, only the stamp, the teams and the rounds', async () => {
    const c = counting(t.db);
    const first = await overviewInsight(c.db, ORG, RANGE, NOW);
    await overviewStats(c.db, ORG, { from: RANGE.fromDate, to: RANGE.toDate }, NOW);
    expect(c.names).toEqual(expect.arrayContaining(['stats.team_days', 'stats.by_day', 'insight.week_levels']));
    c.names.length = 0;
    const again = await overviewInsight(c.db, ORG, RANGE, NOW);
    await overviewStats(c.db, ORG, { from: RANGE.fromDate, to: RANGE.toDate }, NOW);
    expect(again).toEqual(first);
    expect([...c.names].sort()).toEqual(['checkin_round_slots.counts', 'stats.totals', 'stats.totals', 'teams.list', 'teams.list'].sort());
  });

  it('a pulse through the door shows at the very next view', async () => {
    const before = await overviewInsight(t.db, ORG, RANGE, NOW);
    expect(before.heatmap.teams[0].cells[2]).toEqual({ count: 5, avg: 3 });
    const r = await ingestPulses(
      t.db,
      ORG,
      [{ id: 'pk_new', level: 5, reason: null, comment: null, moderationStatus: 'CLEAN', subteamId: 'team_a', createdAt: '2026-11-10T08:00:00.000Z' }],
      operatorActor(),
      NOW,
    );
    expect(r.inserted).toBe(1);
    const after = await overviewInsight(t.db, ORG, RANGE, NOW);
    expect(after.heatmap.teams[0].cells[2]).toEqual({ count: 6, avg: 3.33 });
    expect(after.change.current).toEqual({ count: 6, avg: 3.33 });
    const stats = await overviewStats(t.db, ORG, { from: RANGE.fromDate, to: RANGE.toDate }, NOW);
    expect(stats.teams).toEqual([expect.objectContaining({ id: 'team_a', count: 6 })]);
    expect(stats.organization.days.find((d) => d.date === '2026-11-10')).toEqual({ date: '2026-11-10', count: 1, avg: 5 });
  });

  it("a team's new name, and a round's answers, show without a pulse", async () => {
    await overviewInsight(t.db, ORG, RANGE, NOW);
    await t.db.query(sql('t.rename', `UPDATE teams SET name = 'Customer care' WHERE org_id = $1 AND id = 'team_a'`), [ORG]);
    await t.db.query(sql('t.round', 'INSERT INTO checkin_rounds (org_id, week, started_at) VALUES ($1, $2, $3)'), [
      ORG,
      '2026-11-16',
      '2026-11-16T09:00:00.000Z',
    ]);
    await t.db.query(
      sql(
        't.slot',
        `INSERT INTO checkin_round_slots (org_id, week, team_slot, respondents, recent_joiners, capacity, answered) VALUES ($1, '2026-11-16', 'team_a', 8, 0, 8, 6)`,
      ),
      [ORG],
    );
    const i = await overviewInsight(t.db, ORG, RANGE, NOW);
    expect(i.heatmap.teams.map((row) => row.name)).toEqual(['Customer care']);
    expect(i.participation.slots).toEqual([{ teamId: 'team_a', teamName: 'Customer care', thisWeek: { invited: 8, answered: 6, rate: 0.75 }, lastWeek: null }]);
    const page = await overviewStats(t.db, ORG, { from: RANGE.fromDate, to: RANGE.toDate }, NOW);
    expect(page.teams.map((row) => row.name)).toEqual(['Customer care']);
  });

  it('two databases never share a figure, even with the same organization, count and level sum', async () => {
    const a = await overviewInsight(twin.db, ORG, RANGE, NOW);
    expect(a.high.share).toBe(2 / 5);
    const fresh = await createTestApp({ now: NOW, dataset: dataset([3, 3, 3, 3, 3]) });
    try {
      expect((await overviewInsight(fresh.db, ORG, RANGE, NOW)).high.share).toBe(0);
    } finally {
      await fresh.close();
    }
  });
});
