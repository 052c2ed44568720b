import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { dailyAggregates, decompose, rangeAggregate } from '../../src/db/repositories/stats.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const BASE = Date.parse('2026-11-10T00:00:00.000Z');
const DAY = 86_400_000;

/** A fixed pseudo-random sequence, so a failure reproduces. */
function sequence(seed: number) {
  return () => (seed = (seed * 16807) % 2147483647) / 2147483647;
}

describe('pulse rollups', () => {
  let t: TestDatabase;
  const rnd = sequence(7);
  const pulses = Array.from({ length: 2000 }, (_, i) => ({
    id: `p${i}`,
    level: 1 + Math.floor(rnd() * 5),
    moderationStatus: 'CLEAN' as const,
    subteamId: i % 3 === 0 ? 'team_a' : null,
    createdAt: new Date(BASE + Math.floor(rnd() * 10 * DAY)).toISOString(),
  }));

  beforeAll(async () => {
    t = await createTestDatabase();
    // Two loads: the trigger must add to existing rollup rows, not replace them.
    const org = { id: 'org_r', name: 'R', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' };
    await loadDataset(t.db, {
      organizations: [{ ...org, teams: [{ id: 'team_a', name: 'A', createdAt: '2026-01-01T00:00:00.000Z' }], pulses: pulses.slice(0, 1200) }],
    });
    await loadDataset(t.db, { organizations: [{ ...org, pulses: pulses.slice(1200) }] });
  });
  afterAll(() => t.close());

  it('decomposes a range into at most one day span and two spans of each finer grain', () => {
    const d = decompose(new Date('2026-11-10T10:17:23.500Z'), new Date('2026-11-14T03:45:10.250Z'));
    expect(d.days?.map((x) => x.toISOString())).toEqual(['2026-11-11T00:00:00.000Z', '2026-11-14T00:00:00.000Z']);
    expect(d.hours.map((s) => s.map((x) => x.toISOString()))).toEqual([
      ['2026-11-10T11:00:00.000Z', '2026-11-11T00:00:00.000Z'],
      ['2026-11-14T00:00:00.000Z', '2026-11-14T03:00:00.000Z'],
    ]);
    expect(d.minutes.map((s) => s.map((x) => x.toISOString()))).toEqual([
      ['2026-11-10T10:18:00.000Z', '2026-11-10T11:00:00.000Z'],
      ['2026-11-14T03:00:00.000Z', '2026-11-14T03:45:00.000Z'],
    ]);
    expect(d.raw.map((s) => s.map((x) => x.toISOString()))).toEqual([
      ['2026-11-10T10:17:23.500Z', '2026-11-10T10:18:00.000Z'],
      ['2026-11-14T03:45:00.000Z', '2026-11-14T03:45:10.250Z'],
    ]);
  });

  it('gives the exact count, level sum and per-day split for 200 random ranges', async () => {
    for (let k = 0; k < 200; k++) {
      const a = BASE - DAY / 2 + Math.floor(rnd() * 11 * DAY);
      const b = a + 1 + Math.floor(rnd() * rnd() * 9 * DAY);
      const want = { count: 0, sum: 0 };
      const byDay = new Map<string, { count: number; sum: number }>();
      for (const p of pulses) {
        const at = Date.parse(p.createdAt);
        if (at < a || at >= b) continue;
        want.count++;
        want.sum += p.level;
        const d = byDay.get(p.createdAt.slice(0, 10)) ?? { count: 0, sum: 0 };
        byDay.set(p.createdAt.slice(0, 10), { count: d.count + 1, sum: d.sum + p.level });
      }
      const range = `[${new Date(a).toISOString()}, ${new Date(b).toISOString()})`;
      expect(await rangeAggregate(t.db, 'org_r', new Date(a), new Date(b)), range).toEqual(want);
      const days = await dailyAggregates(t.db, 'org_r', new Date(a), new Date(b));
      expect(new Map([...days].filter(([, v]) => v.count > 0)), range).toEqual(byDay);
    }
  });

  it('keeps the team-day rollup exact', async () => {
    const [row] = await t.db.query<{ n: number }>(
      sql('test.team_sum', `SELECT sum(pulse_count)::int AS n FROM pulse_team_day_stats WHERE org_id = 'org_r' AND subteam_id = 'team_a'`),
    );
    expect(row.n).toBe(pulses.filter((p) => p.subteamId === 'team_a').length);
  });

  it('refuses to delete a pulse or change its level, so rollups cannot drift', async () => {
    await expect(t.db.query(sql('test.delete', `DELETE FROM pulses WHERE org_id = 'org_r' AND id = 'p1'`))).rejects.toThrow(/append-only/);
    await expect(t.db.query(sql('test.update', `UPDATE pulses SET level = 1 WHERE org_id = 'org_r' AND id = 'p1'`))).rejects.toThrow(/append-only/);
  });
});
