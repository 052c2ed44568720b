import type { Queryable } from '../db/executor.js';
import {
  dailyAggregates,
  pulseTotals,
  rangeAggregate,
  teamDailyAggregates,
  teamRangeTotals,
  type Aggregate,
  type TeamDaySeries,
} from '../db/repositories/stats.js';
import { listTeams, type TeamRow } from '../db/repositories/teams.js';
import { pulseFigures, type PulseFigures } from './pulse-figures.js';
import { invalid } from '../contract/errors.js';
import type { DailyStats, DailyStatsQuery, Stats } from '../contract/schemas/stats.js';
import { average, DAY_MS, parseDate, resolveRange, startOfUtcDay, ymd } from './time.js';

export const MINIMUM_SAMPLE = 5;

export async function overallStats(db: Queryable, orgId: string, now: Date): Promise<Stats> {
  const [total, week] = await Promise.all([pulseTotals(db, orgId), rangeAggregate(db, orgId, new Date(now.getTime() - 7 * DAY_MS), now)]);
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

/** A team's days as GET /stats/daily lists an organization's (the rollup gives them ascending, none empty). */
function seriesEntries(s: TeamDaySeries | undefined): DailyStats['days'] {
  if (!s) return [];
  return s.days.map((date, i) => ({ date, count: s.counts[i], avg: average(s.sums[i], s.counts[i])! }));
}

/** The console's overview covers at most this many calendar days (a year, as GET /stats/daily). */
export const OVERVIEW_MAX_DAYS = 365;

/**
 * The overview draws every team's daily chart inline while that is at most this many days of
 * figures (20 teams over three months); beyond it, a team's chart is one choice away. A year of 20
 * teams inline was 7,300 table rows, 420 KB a page.
 */
export const OVERVIEW_INLINE_TEAM_DAYS = 2000;

export interface OverviewTeam {
  id: string;
  name: string;
  /** Pulses and average level over the whole range (average null without pulses). */
  count: number;
  avg: number | null;
  /** Its days, when its chart is on the page (every team's within the inline bound, else the chosen one's). */
  days: DailyStats['days'] | null;
}

export interface Overview {
  /** The range as calendar dates (both inclusive) and as GET /stats/daily's instants ([from, to)). */
  fromDate: string;
  toDate: string;
  organization: DailyStats;
  teams: OverviewTeam[];
  /** The team chosen with `team`, else null. */
  team: string | null;
  /** Whether every team's chart is on the page. */
  inline: boolean;
}

/**
 * The console's overview (CONTRACT.md section 11): per day, the organization's average level and
 * pulse count, and every team's, over whole UTC days [fromDate, toDate]. The organization's figures
 * are GET /stats/daily's answer for the same instants (the same rollups and days), the teams' come
 * from their own daily rollup; neither reads a pulse. Both are kept in memory until the
 * organization's next pulse (pulse-figures.ts). Defaults: the last 30 days, today included.
 */
/**
 * What the Overview's figures and insight both start from, read once for a view: the teams, and the
 * organization's kept pulse figures under the stamp of now.
 */
export interface OverviewReads {
  teams: TeamRow[];
  figures: PulseFigures;
}
export async function overviewReads(db: Queryable, orgId: string): Promise<OverviewReads> {
  const [teams, figures] = await Promise.all([listTeams(db, orgId), pulseFigures(db, orgId)]);
  return { teams, figures };
}

export async function overviewStats(
  db: Queryable,
  orgId: string,
  q: { from?: string; to?: string; team?: string },
  now: Date,
  reads?: OverviewReads,
): Promise<Overview> {
  const today = startOfUtcDay(now);
  const to = q.to ? parseDate(q.to, 'to') : today;
  const from = q.from ? parseDate(q.from, 'from') : new Date(to.getTime() - 29 * DAY_MS);
  if (from > to) throw invalid(`'from' must not be after 'to'.`);
  const dayCount = (to.getTime() - from.getTime()) / DAY_MS + 1;
  if (dayCount > OVERVIEW_MAX_DAYS || from.getTime() < today.getTime() - (OVERVIEW_MAX_DAYS - 1) * DAY_MS) {
    throw invalid(`The overview covers at most ${OVERVIEW_MAX_DAYS} days, back to ${ymd(new Date(today.getTime() - (OVERVIEW_MAX_DAYS - 1) * DAY_MS))}.`);
  }
  const end = new Date(to.getTime() + DAY_MS);
  const { teams, figures } = reads ?? (await overviewReads(db, orgId));
  const team = q.team ? q.team : null;
  if (team !== null && !teams.some((t) => t.id === team)) throw invalid(`'team' names no team of this organization.`);
  const inline = team === null && teams.length * dayCount <= OVERVIEW_INLINE_TEAM_DAYS;
  const [fromDay, endDay] = [ymd(from), ymd(end)];
  // The rollups' figures are kept until the next pulse (pulse-figures.ts); the teams are read afresh.
  const [orgDays, perTeam, totals] = await Promise.all([
    figures.get(`days ${fromDay} ${endDay}`, () => dailyAggregates(db, orgId, from, end)),
    inline || team !== null
      ? figures.get(`team-days ${fromDay} ${endDay} ${team ?? ''}`, () => teamDailyAggregates(db, orgId, fromDay, endDay, team))
      : new Map<string, TeamDaySeries>(),
    inline ? null : figures.get(`team-totals ${fromDay} ${endDay}`, () => teamRangeTotals(db, orgId, fromDay, endDay)),
  ]);
  // GET /stats/daily's answer for the same instants (its range checks pass: at most 365 days back).
  const organization: DailyStats = { from: from.toISOString(), to: end.toISOString(), days: dayEntries(orgDays) };
  return {
    fromDate: ymd(from),
    toDate: ymd(to),
    organization,
    team,
    inline,
    teams: teams.map((t) => {
      const series = perTeam.get(t.id);
      const total = totals ? (totals.get(t.id) ?? { count: 0, sum: 0 }) : sumOf(series);
      const days = inline || t.id === team ? seriesEntries(series) : null;
      return { id: t.id, name: t.name, count: total.count, avg: average(total.sum, total.count), days };
    }),
  };
}

function sumOf(s: TeamDaySeries | undefined): Aggregate {
  let count = 0;
  let sum = 0;
  for (let i = 0; i < (s?.days.length ?? 0); i++) {
    count += s!.counts[i];
    sum += s!.sums[i];
  }
  return { count, sum };
}
