import { sql, type Queryable } from '../executor.js';
import { day } from './time.js';

export interface Aggregate {
  count: number;
  sum: number;
}

const totalsQuery = sql(
  'stats.totals',
  `SELECT pulse_count::float8 AS count, level_sum::float8 AS sum FROM pulse_totals WHERE org_id = $1`,
);

export async function pulseTotals(db: Queryable, orgId: string): Promise<Aggregate> {
  const [r] = await db.query<Aggregate>(totalsQuery, [orgId]);
  return r ?? { count: 0, sum: 0 };
}

const dayRowsQuery = sql(
  'stats.day_rows',
  `SELECT day, pulse_count AS count, level_sum::float8 AS sum
     FROM pulse_day_stats WHERE org_id = $1 AND day >= $2::date AND day < $3::date ORDER BY day`,
);

const teamDaySumQuery = sql(
  'stats.team_day_sum',
  `SELECT COALESCE(sum(pulse_count), 0)::float8 AS count, COALESCE(sum(level_sum), 0)::float8 AS sum
     FROM pulse_team_day_stats WHERE org_id = $1 AND subteam_id = $2 AND day >= $3::date AND day < $4::date`,
);

const daySumQuery = sql(
  'stats.day_sum',
  `SELECT COALESCE(sum(pulse_count), 0)::float8 AS count, COALESCE(sum(level_sum), 0)::float8 AS sum
     FROM pulse_day_stats WHERE org_id = $1 AND day >= $2::date AND day < $3::date`,
);

/** Partial days at the edges of a range are counted from pulses; each spans less than one day. */
const edgeQuery = sql(
  'stats.edge_days',
  `SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*)::int AS count, sum(level)::float8 AS sum
     FROM pulses WHERE org_id = $1 AND created_at >= $2 AND created_at < $3
    GROUP BY 1`,
);

const DAY_MS = 86_400_000;
const startOfDay = (t: Date) => new Date(Math.floor(t.getTime() / DAY_MS) * DAY_MS);
const startOfNextDay = (t: Date) => new Date(Math.ceil(t.getTime() / DAY_MS) * DAY_MS);
const ymd = (t: Date) => t.toISOString().slice(0, 10);

/**
 * Per-day count and level sum of pulses in [from, to): whole days come from the rollup,
 * the partial days at either edge from an indexed scan of at most a day of pulses each.
 */
export async function dailyAggregates(db: Queryable, orgId: string, from: Date, to: Date): Promise<Map<string, Aggregate>> {
  const out = new Map<string, Aggregate>();
  const wholeFrom = startOfNextDay(from);
  const wholeTo = startOfDay(to);
  const edges: [Date, Date][] = [];
  if (wholeFrom >= wholeTo) {
    edges.push([from, to]);
  } else {
    if (from < wholeFrom) edges.push([from, wholeFrom]);
    if (wholeTo < to) edges.push([wholeTo, to]);
    for (const r of await db.query<{ day: Date | string } & Aggregate>(dayRowsQuery, [orgId, ymd(wholeFrom), ymd(wholeTo)])) {
      out.set(day(r.day), { count: r.count, sum: r.sum });
    }
  }
  for (const [a, b] of edges) {
    for (const r of await db.query<{ day: Date | string } & Aggregate>(edgeQuery, [orgId, a.toISOString(), b.toISOString()])) {
      out.set(day(r.day), { count: r.count, sum: r.sum });
    }
  }
  return out;
}

/** Count and level sum of pulses in [from, to), exact, without scanning whole days. */
export async function rangeAggregate(db: Queryable, orgId: string, from: Date, to: Date): Promise<Aggregate> {
  let count = 0;
  let sum = 0;
  const wholeFrom = startOfNextDay(from);
  const wholeTo = startOfDay(to);
  const edges: [Date, Date][] = [];
  if (wholeFrom >= wholeTo) {
    edges.push([from, to]);
  } else {
    if (from < wholeFrom) edges.push([from, wholeFrom]);
    if (wholeTo < to) edges.push([wholeTo, to]);
    const [r] = await db.query<Aggregate>(daySumQuery, [orgId, ymd(wholeFrom), ymd(wholeTo)]);
    count += r.count;
    sum += r.sum;
  }
  for (const [a, b] of edges) {
    for (const r of await db.query<Aggregate>(edgeQuery, [orgId, a.toISOString(), b.toISOString()])) {
      count += r.count;
      sum += r.sum;
    }
  }
  return { count, sum };
}

/** Pulses of whole UTC days [fromDay, toDayExclusive), optionally of one team. */
export async function wholeDaysCount(
  db: Queryable,
  orgId: string,
  fromDay: string,
  toDayExclusive: string,
  subteamId?: string,
): Promise<number> {
  const [r] =
    subteamId === undefined
      ? await db.query<Aggregate>(daySumQuery, [orgId, fromDay, toDayExclusive])
      : await db.query<Aggregate>(teamDaySumQuery, [orgId, subteamId, fromDay, toDayExclusive]);
  return r.count;
}
