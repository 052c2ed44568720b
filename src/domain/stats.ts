import type { Queryable } from '../db/executor.js';
import { dailyAggregates, pulseTotals, rangeAggregate, teamDailyAggregates, type Aggregate } from '../db/repositories/stats.js';
import { listTeams } from '../db/repositories/teams.js';
import { invalid } from '../contract/errors.js';
import type { DailyStats, DailyStatsQuery, Stats } from '../contract/schemas/stats.js';
import { average, DAY_MS, parseDate, resolveRange, startOfUtcDay, ymd } from './time.js';

export const MINIMUM_SAMPLE = 5;

export async function overallStats(db: Queryable, orgId: string, now: Date): Promise<Stats> {
  const [total, week] = await Promise.all([
    pulseTotals(db, orgId),
    rangeAggregate(db, orgId, new Date(now.getTime() - 7 * DAY_MS), now),
  ]);
  return {
    avgLevel: average(total.sum, total.count),
    minimumSample: MINIMUM_SAMPLE,
    pulseCount: total.count,
    weeklyAvgLevel: average(week.sum, week.count),
    weeklyPulseCount: week.count,
  };
}

export async function dailyStats(db: Queryable, orgId: string, q: DailyStatsQuery, now: Date): Promise<DailyStats> {
  const { from, to } = resolveRange(q, 90 * DAY_MS, now);
  if (from.getTime() < now.getTime() - 365 * DAY_MS) {
    throw invalid(`'from' must be at most 365 days back.`);
  }
  return { from: from.toISOString(), to: to.toISOString(), days: dayEntries(await dailyAggregates(db, orgId, from, to)) };
}

/** The days with at least one pulse, ascending, as GET /stats/daily lists them. */
function dayEntries(days: Map<string, Aggregate>): DailyStats['days'] {
  return [...days.entries()]
    .filter(([, a]) => a.count > 0)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([date, a]) => ({ date, count: a.count, avg: average(a.sum, a.count)! }));
}

/** The console's overview covers at most this many calendar days (a year, as GET /stats/daily). */
export const OVERVIEW_MAX_DAYS = 365;

export interface Overview {
  /** The range as calendar dates (both inclusive) and as GET /stats/daily's instants ([from, to)). */
  fromDate: string;
  toDate: string;
  organization: DailyStats;
  teams: { id: string; name: string; days: DailyStats['days'] }[];
}

/**
 * The console's overview (CONTRACT.md section 11): per day, the organization's average level and
 * pulse count, and every team's, over whole UTC days [fromDate, toDate]. The organization's figures
 * are GET /stats/daily's answer for the same instants (the same function), the teams' come from
 * their own daily rollup; neither reads a pulse. Defaults: the last 30 days, today included.
 */
export async function overviewStats(db: Queryable, orgId: string, q: { from?: string; to?: string }, now: Date): Promise<Overview> {
  const today = startOfUtcDay(now);
  const to = q.to ? parseDate(q.to, 'to') : today;
  const from = q.from ? parseDate(q.from, 'from') : new Date(to.getTime() - 29 * DAY_MS);
  if (from > to) throw invalid(`'from' must not be after 'to'.`);
  if ((to.getTime() - from.getTime()) / DAY_MS + 1 > OVERVIEW_MAX_DAYS || from.getTime() < today.getTime() - (OVERVIEW_MAX_DAYS - 1) * DAY_MS) {
    throw invalid(`The overview covers at most ${OVERVIEW_MAX_DAYS} days, back to ${ymd(new Date(today.getTime() - (OVERVIEW_MAX_DAYS - 1) * DAY_MS))}.`);
  }
  const end = new Date(to.getTime() + DAY_MS);
  const [organization, perTeam, teams] = await Promise.all([
    dailyStats(db, orgId, { from: from.toISOString(), to: end.toISOString() }, now),
    teamDailyAggregates(db, orgId, ymd(from), ymd(end)),
    listTeams(db, orgId),
  ]);
  return {
    fromDate: ymd(from),
    toDate: ymd(to),
    organization,
    teams: teams.map((t) => ({ id: t.id, name: t.name, days: dayEntries(perTeam.get(t.id) ?? new Map()) })),
  };
}
