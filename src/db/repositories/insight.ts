import { sql, type Queryable } from '../executor.js';

/**
 * Per ISO week (its Monday, UTC) in [from, to): pulses, their level sum and how many are at 4 or 5.
 * The rollups keep no level's count, so this reads pulses: an index-only scan of `pulses_page`
 * (org_id, created_at, id, subteam_id, level) over the few weeks asked, never the whole history.
 */
const weekLevelsQuery = sql(
  'insight.week_levels',
  `SELECT to_char(date_trunc('week', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS week,
          count(*)::int AS count, sum(level)::int AS sum, (count(*) FILTER (WHERE level >= 4))::int AS high
     FROM pulses
    WHERE org_id = $1 AND created_at >= $2 AND created_at < $3
    GROUP BY 1`,
);

export interface WeekLevels {
  count: number;
  sum: number;
  /** Pulses at level 4 or 5. */
  high: number;
}

export async function weekLevels(db: Queryable, orgId: string, from: Date, to: Date): Promise<Map<string, WeekLevels>> {
  const rows = await db.query<{ week: string } & WeekLevels>(weekLevelsQuery, [orgId, from.toISOString(), to.toISOString()]);
  return new Map(rows.map((r) => [r.week, { count: r.count, sum: r.sum, high: r.high }]));
}

/** As weekLevels, for each of some teams (a manager's): by team id, then week. */
const teamWeekLevelsQuery = sql(
  'insight.team_week_levels',
  `SELECT subteam_id AS team, to_char(date_trunc('week', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS week,
          count(*)::int AS count, sum(level)::int AS sum, (count(*) FILTER (WHERE level >= 4))::int AS high
     FROM pulses
    WHERE org_id = $1 AND created_at >= $2 AND created_at < $3 AND subteam_id = ANY ($4::text[])
    GROUP BY 1, 2`,
);

export async function teamWeekLevels(
  db: Queryable,
  orgId: string,
  teamIds: readonly string[],
  from: Date,
  to: Date,
): Promise<Map<string, Map<string, WeekLevels>>> {
  const out = new Map<string, Map<string, WeekLevels>>();
  if (teamIds.length === 0) return out;
  const rows = await db.query<{ team: string; week: string } & WeekLevels>(teamWeekLevelsQuery, [orgId, from.toISOString(), to.toISOString(), [...teamIds]]);
  for (const r of rows) {
    const weeks = out.get(r.team) ?? new Map<string, WeekLevels>();
    weeks.set(r.week, { count: r.count, sum: r.sum, high: r.high });
    out.set(r.team, weeks);
  }
  return out;
}
