import type { DatabaseExecutor } from '../db/executor.js';
import { slotCounts } from '../db/repositories/checkins.js';
import { dailyAggregates, teamDailyAggregates, type Aggregate, type TeamDaySeries } from '../db/repositories/stats.js';
import { teamWeekLevels, weekLevels, type WeekLevels } from '../db/repositories/insight.js';
import { MIN_TEAM } from './checkins/roster.js';
import { addWeeks, weekOf, weekStart } from './checkins/week.js';
import { MINIMUM_SAMPLE, overviewReads, type OverviewReads } from './stats.js';
import { average, WEEK_MS, ymd } from './time.js';

/**
 * The Overview's insight (CONTRACT.md section 11, *Insight, not API figures*): participation as a
 * rate, a heatmap of teams by week, last week against the four before, the share of answers at 4-5.
 * Read-only. A figure from fewer than 5 pulses, and a participation count under 5, is never in
 * what this returns: the page cannot show what it does not receive.
 */

/** A week's (or a range's) figure, from 5 pulses; null below ("fewer than 5"). */
export type Figure = { count: number; avg: number } | null;

const figure = (a: Aggregate | undefined): Figure => (a && a.count >= MINIMUM_SAMPLE ? { count: a.count, avg: average(a.sum, a.count)! } : null);

/** Answered of invited for one week: each count only from 5 (else null), the rate only when both are shown. */
export interface Rate {
  invited: number | null;
  answered: number | null;
  rate: number | null;
}

const rateOf = (invited: number | null, answered: number | null): Rate => ({
  invited,
  answered,
  rate: invited !== null && answered !== null && invited > 0 ? Math.min(1, answered / invited) : null,
});

export interface SlotParticipation {
  /** The team, or null for the organization's own key (people without a team, and teams under 5). */
  teamId: string | null;
  teamName: string | null;
  /** Null when the slot had no one in that week's round. */
  thisWeek: Rate | null;
  lastWeek: Rate | null;
}

/** One team's last week against the four before, and its shares at 4-5 (a manager's Overview). */
export interface TeamTrend {
  id: string;
  name: string;
  change: { current: Figure; previous: Figure };
  high: { share: number | null; previousShare: number | null };
}

export interface Insight {
  /**
   * Whether this insight is of some teams only (a manager's): then it holds no organization-wide
   * figure at all (participation's total, the change, the share at 4-5 and the heatmap's
   * organization row are empty), and `teamTrends` has each team's change instead.
   */
  scoped?: boolean;
  teamTrends?: TeamTrend[];
  /** Mondays (YYYY-MM-DD) of the current ISO week and the one before. */
  thisWeek: string;
  lastWeek: string;
  participation: {
    /** Null when no round ran that week. */
    organization: { thisWeek: Rate | null; lastWeek: Rate | null };
    slots: SlotParticipation[];
  };
  /** Last week against the four weeks before it, pooled (their level sum over their count). */
  change: { week: string; current: Figure; previousFrom: string; previous: Figure };
  /** The share of last week's answers at 4 or 5, and of the four weeks before; null under 5 pulses. */
  high: { week: string; share: number | null; previousShare: number | null };
  /** The range's ISO weeks (Mondays), the organization's figure in each and each team's. */
  heatmap: { weeks: string[]; organization: Figure[]; teams: { id: string; name: string; cells: Figure[] }[] };
}

/** The weeks the heatmap shows at most: a year. */
export const HEATMAP_MAX_WEEKS = 53;

/**
 * The organization's total of one week: the sum over its slots, shown from 5 like every count.
 * The total minus the teams shown can tell how many of a slot under 5 were asked or answered: a
 * count, never a level, and one that GET /v1/pulses (every pulse with its team) tells key holders
 * anyway. Withholding the total whenever a small team answered (section 5's remainder rule) left
 * nearly every organization without one (docs/decisions.md).
 */
const totalOf = (counts: number[]): number | null => from5(counts.reduce((a, n) => a + n, 0));

const from5 = (n: number) => (n >= MIN_TEAM ? n : null);

/** Teams in name order, case and accents aside (one collator: `localeCompare` with options makes one a call). */
const byName = new Intl.Collator('en', { sensitivity: 'base' });

/**
 * `range`: the Overview's calendar days (both included); the heatmap covers their ISO weeks whole.
 * `now`: "this week" is the ISO week that holds it.
 * `teams`: a manager's teams, or null for the whole organization. With teams, nothing of the
 * organization as a whole is returned: a total beside a team's figure would let its reader subtract
 * their way to the other teams, and to groups under 5 among them (docs/decisions.md, "Managers").
 * Each team's figures keep every threshold (from 5); teams are never pooled together either, for
 * the same reason (two teams' pool minus one of them is the other, under 5 or not).
 */
export async function overviewInsight(
  db: DatabaseExecutor,
  orgId: string,
  range: { fromDate: string; toDate: string },
  now: Date,
  teams: readonly string[] | null = null,
  reads?: OverviewReads,
): Promise<Insight> {
  const thisWeek = weekOf(now);
  const lastWeek = addWeeks(thisWeek, -1);
  const previousFrom = addWeeks(lastWeek, -4);
  const firstWeek = weekOf(new Date(`${range.fromDate}T00:00:00.000Z`));
  const finalWeek = weekOf(new Date(`${range.toDate}T00:00:00.000Z`));
  const weeks: string[] = [];
  for (let w = firstWeek; w <= finalWeek && weeks.length < HEATMAP_MAX_WEEKS; w = addWeeks(w, 1)) weeks.push(w);
  const heatEnd = ymd(new Date(weekStart(weeks[weeks.length - 1]).getTime() + WEEK_MS));

  const scoped = teams !== null;
  const inScope = (teamId: string | null) => !scoped || (teamId !== null && teams.includes(teamId));
  // What the pulses give is kept until the organization's next pulse (pulse-figures.ts), summed by
  // week already (a year of 50 teams is 18,000 days to sum); rounds, participation and teams are
  // read afresh on every view.
  const { teams: allTeams, figures } = reads ?? (await overviewReads(db, orgId));
  const heatFrom = weekStart(firstWeek);
  const [allRows, levels, teamWeeks, orgWeeks, byTeam] = await Promise.all([
    slotCounts(db, orgId, lastWeek),
    scoped
      ? new Map<string, WeekLevels>()
      : figures.get(`week-levels ${previousFrom} ${thisWeek}`, () => weekLevels(db, orgId, weekStart(previousFrom), weekStart(thisWeek))),
    figures.get(`team-weeks ${firstWeek} ${heatEnd}`, async () => {
      const out = new Map<string, Aggregate[]>();
      for (const [id, s] of await teamDailyAggregates(db, orgId, firstWeek, heatEnd)) out.set(id, weekSums(weeks, seriesDays(s)));
      return out;
    }),
    scoped
      ? ([] as Aggregate[])
      : figures.get(`org-weeks ${firstWeek} ${heatEnd}`, async () =>
          weekSums(weeks, (await dailyAggregates(db, orgId, heatFrom, new Date(`${heatEnd}T00:00:00.000Z`))).entries()),
        ),
    scoped
      ? figures.get(`team-week-levels ${previousFrom} ${thisWeek} ${[...teams].sort().join(' ')}`, () =>
          teamWeekLevels(db, orgId, teams, weekStart(previousFrom), weekStart(thisWeek)),
        )
      : new Map<string, Map<string, WeekLevels>>(),
  ]);
  const rows = allRows.filter((r) => inScope(r.team_slot || null));
  const shownTeams = allTeams.filter((t) => inScope(t.id));

  // Participation: the slots of this week and last, by team (the organization's own slot last).
  const slots = new Map<string, SlotParticipation>();
  const byWeek = { [thisWeek]: [] as { invited: number; answered: number }[], [lastWeek]: [] as { invited: number; answered: number }[] };
  for (const r of rows) {
    if (r.week !== thisWeek && r.week !== lastWeek) continue;
    byWeek[r.week].push({ invited: r.invited, answered: r.answered });
    const slot = slots.get(r.team_slot) ?? { teamId: r.team_slot || null, teamName: r.team_name, thisWeek: null, lastWeek: null };
    slot[r.week === thisWeek ? 'thisWeek' : 'lastWeek'] = rateOf(from5(r.invited), from5(r.answered));
    slots.set(r.team_slot, slot);
  }
  const total = (week: string): Rate | null =>
    byWeek[week].length === 0 ? null : rateOf(totalOf(byWeek[week].map((s) => s.invited)), totalOf(byWeek[week].map((s) => s.answered)));

  // Last week against the four before, and the share at 4-5 of each.
  const pooled = (ws: string[], of = levels): WeekLevels =>
    ws.reduce(
      (a, w) => {
        const l = of.get(w);
        return l ? { count: a.count + l.count, sum: a.sum + l.sum, high: a.high + l.high } : a;
      },
      { count: 0, sum: 0, high: 0 } as WeekLevels,
    );
  const fourBefore = [0, 1, 2, 3].map((i) => addWeeks(previousFrom, i));
  const last = pooled([lastWeek]);
  const before = pooled(fourBefore);
  const share = (l: WeekLevels) => (l.count >= MINIMUM_SAMPLE ? l.high / l.count : null);
  const teamTrends: TeamTrend[] = scoped
    ? shownTeams.map((t) => {
        const of = byTeam.get(t.id) ?? new Map<string, WeekLevels>();
        const [l, b] = [pooled([lastWeek], of), pooled(fourBefore, of)];
        return { id: t.id, name: t.name, change: { current: figure(l), previous: figure(b) }, high: { share: share(l), previousShare: share(b) } };
      })
    : [];

  return {
    scoped,
    teamTrends,
    thisWeek,
    lastWeek,
    participation: {
      organization: scoped ? { thisWeek: null, lastWeek: null } : { thisWeek: total(thisWeek), lastWeek: total(lastWeek) },
      slots: [...slots.values()].sort((a, b) => (a.teamId === null ? 1 : b.teamId === null ? -1 : byName.compare(a.teamName ?? '', b.teamName ?? ''))),
    },
    change: { week: lastWeek, current: figure(last), previousFrom, previous: figure(before) },
    high: { week: lastWeek, share: share(last), previousShare: share(before) },
    heatmap: {
      weeks,
      organization: scoped ? [] : orgWeeks.map(figure),
      teams: shownTeams.map((t) => ({ id: t.id, name: t.name, cells: (teamWeeks.get(t.id) ?? weeks.map(() => undefined)).map(figure) })),
    },
  };
}

/** Days' counts and level sums summed into `weeks` (Mondays, ascending, consecutive); a day outside them is left out. */
function weekSums(weeks: readonly string[], days: Iterable<[string, Aggregate]>): Aggregate[] {
  const out = weeks.map(() => ({ count: 0, sum: 0 }));
  const first = Date.parse(`${weeks[0]}T00:00:00.000Z`);
  for (const [day, a] of days) {
    const i = Math.floor((Date.parse(`${day}T00:00:00.000Z`) - first) / WEEK_MS);
    if (i < 0 || i >= out.length) continue;
    out[i].count += a.count;
    out[i].sum += a.sum;
  }
  return out;
}

function* seriesDays(s: TeamDaySeries): Iterable<[string, Aggregate]> {
  for (let i = 0; i < s.days.length; i++) yield [s.days[i], { count: s.counts[i], sum: s.sums[i] }];
}
