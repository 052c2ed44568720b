import type { Queryable } from '../db/executor.js';
import { dailyAggregates, pulseTotals, rangeAggregate } from '../db/repositories/stats.js';
import { invalid } from '../contract/errors.js';
import type { DailyStats, DailyStatsQuery, Stats } from '../contract/schemas/stats.js';
import { average, DAY_MS, resolveRange } from './time.js';

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
  const days = await dailyAggregates(db, orgId, from, to);
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    days: [...days.entries()]
      .filter(([, a]) => a.count > 0)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([date, a]) => ({ date, count: a.count, avg: average(a.sum, a.count)! })),
  };
}
