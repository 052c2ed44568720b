import { sql, type Queryable } from '../executor.js';

export interface Aggregate {
  count: number;
  sum: number;
}

const totalsQuery = sql('stats.totals', `SELECT pulse_count::float8 AS count, level_sum::float8 AS sum FROM pulse_totals WHERE org_id = $1`);

export async function pulseTotals(db: Queryable, orgId: string): Promise<Aggregate> {
  const [r] = await db.query<Aggregate>(totalsQuery, [orgId]);
  return r ?? { count: 0, sum: 0 };
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

type Span = [Date, Date];

/**
 * Splits [from, to) into one span of whole UTC days, up to two spans of whole hours and of
 * whole minutes around it, and up to two partial minutes at the very edges. Only those
 * partial minutes are read from pulses, so the cost does not grow with the organization.
 */
export function decompose(from: Date, to: Date) {
  const out = { days: null as Span | null, hours: [] as Span[], minutes: [] as Span[], raw: [] as Span[] };
  const levels = [
    { ms: DAY_MS, put: (s: Span) => (out.days = s) },
    { ms: HOUR_MS, put: (s: Span) => out.hours.push(s) },
    { ms: MINUTE_MS, put: (s: Span) => out.minutes.push(s) },
  ];
  const split = (a: Date, b: Date, level: number) => {
    if (a >= b) return;
    if (level === levels.length) {
      out.raw.push([a, b]);
      return;
    }
    const { ms, put } = levels[level];
    const start = new Date(Math.ceil(a.getTime() / ms) * ms);
    const end = new Date(Math.floor(b.getTime() / ms) * ms);
    if (start >= end) return split(a, b, level + 1);
    split(a, start, level + 1);
    put([start, end]);
    split(end, b, level + 1);
  };
  split(from, to, 0);
  return out;
}

/**
 * Day, hour and minute rollups plus the partial-minute edges, grouped by UTC day, in one statement.
 * The day comes back as text: parsing 365 dates into Date objects and printing them again was a
 * fifth of the CPU of a year's answer.
 */
const byDayQuery = sql(
  'stats.by_day',
  `SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(c)::int AS count, sum(s)::float8 AS sum FROM (
     SELECT day, pulse_count AS c, level_sum AS s
       FROM pulse_day_stats WHERE org_id = $1 AND day >= $2::date AND day < $3::date
     UNION ALL
     SELECT (hour AT TIME ZONE 'UTC')::date, pulse_count, level_sum
       FROM pulse_hour_stats WHERE org_id = $1 AND ((hour >= $4 AND hour < $5) OR (hour >= $6 AND hour < $7))
     UNION ALL
     SELECT (minute AT TIME ZONE 'UTC')::date, pulse_count, level_sum
       FROM pulse_minute_stats WHERE org_id = $1 AND ((minute >= $8 AND minute < $9) OR (minute >= $10 AND minute < $11))
     UNION ALL
     SELECT (created_at AT TIME ZONE 'UTC')::date, 1, level
       FROM pulses WHERE org_id = $1 AND ((created_at >= $12 AND created_at < $13) OR (created_at >= $14 AND created_at < $15))
   ) parts
   GROUP BY day`,
);

const EMPTY: Span = [new Date(0), new Date(0)];
const ymd = (t: Date) => t.toISOString().slice(0, 10);
function pair(spans: Span[]): string[] {
  if (spans.length > 2) throw new Error(`decompose produced ${spans.length} spans of one grain`);
  return [spans[0] ?? EMPTY, spans[1] ?? EMPTY].flatMap(([a, b]) => [a.toISOString(), b.toISOString()]);
}

/** Per-day count and level sum of pulses in [from, to), exact. */
export async function dailyAggregates(db: Queryable, orgId: string, from: Date, to: Date): Promise<Map<string, Aggregate>> {
  const d = decompose(from, to);
  const days = d.days ?? EMPTY;
  const rows = await db.query<{ day: string } & Aggregate>(byDayQuery, [
    orgId,
    ymd(days[0]),
    ymd(days[1]),
    ...pair(d.hours),
    ...pair(d.minutes),
    ...pair(d.raw),
  ]);
  return new Map(rows.map((r) => [r.day, { count: r.count, sum: r.sum }]));
}

/** Count and level sum of pulses in [from, to), exact. */
export async function rangeAggregate(db: Queryable, orgId: string, from: Date, to: Date): Promise<Aggregate> {
  let count = 0;
  let sum = 0;
  for (const a of (await dailyAggregates(db, orgId, from, to)).values()) {
    count += a.count;
    sum += a.sum;
  }
  return { count, sum };
}

/**
 * Per team, its days with pulses in [$2, $3) in date order as one text of `date count sum` triples:
 * one row per team instead of one per team and day (a year of 20 teams was 7,300 rows to parse).
 */
const teamDaysQuery = sql(
  'stats.team_days',
  `SELECT subteam_id, string_agg(to_char(day, 'YYYY-MM-DD') || ' ' || pulse_count || ' ' || level_sum, ' ' ORDER BY day) AS series
     FROM pulse_team_day_stats
    WHERE org_id = $1 AND day >= $2::date AND day < $3::date AND pulse_count > 0 AND ($4::text IS NULL OR subteam_id = $4)
    GROUP BY subteam_id`,
);

/** One team's days with pulses, ascending: parallel arrays of UTC date, pulse count and level sum. */
export interface TeamDaySeries {
  days: string[];
  counts: number[];
  sums: number[];
}

/** Per team (or the one `team`), its UTC days [fromDay, toDay) with pulses, from the team rollup: whole days only. */
export async function teamDailyAggregates(
  db: Queryable,
  orgId: string,
  fromDay: string,
  toDay: string,
  team: string | null = null,
): Promise<Map<string, TeamDaySeries>> {
  const out = new Map<string, TeamDaySeries>();
  for (const r of await db.query<{ subteam_id: string; series: string }>(teamDaysQuery, [orgId, fromDay, toDay, team])) {
    const t = r.series.split(' ');
    const n = t.length / 3;
    const series: TeamDaySeries = { days: new Array(n), counts: new Array(n), sums: new Array(n) };
    for (let i = 0; i < n; i++) {
      series.days[i] = t[3 * i];
      series.counts[i] = Number(t[3 * i + 1]);
      series.sums[i] = Number(t[3 * i + 2]);
    }
    out.set(r.subteam_id, series);
  }
  return out;
}

const teamTotalsQuery = sql(
  'stats.team_totals',
  `SELECT subteam_id, sum(pulse_count)::int AS count, sum(level_sum)::float8 AS sum
     FROM pulse_team_day_stats
    WHERE org_id = $1 AND day >= $2::date AND day < $3::date
    GROUP BY subteam_id`,
);

/** Per team, pulse count and level sum over the UTC days [fromDay, toDay), from the team rollup. */
export async function teamRangeTotals(db: Queryable, orgId: string, fromDay: string, toDay: string): Promise<Map<string, Aggregate>> {
  const rows = await db.query<{ subteam_id: string } & Aggregate>(teamTotalsQuery, [orgId, fromDay, toDay]);
  return new Map(rows.map((r) => [r.subteam_id, { count: r.count, sum: r.sum }]));
}
