import type { Config } from '../config.js';
import type { DatabaseExecutor, Transaction } from '../db/executor.js';
import { recordAlertCreated } from './webhook-deliveries.js';
import {
  groupWeekAggregates,
  insertRaisedAlerts,
  orgIdsWithPulsesBetween,
  type AlertRow,
  type GroupWeekRow,
  type RaisedAlert,
} from '../db/repositories/alerts.js';
import { newId } from './ids.js';
import { requireLiveOrg } from './orgs.js';
import { DAY_MS, isoWeekLabel, startOfIsoWeek, WEEK_MS, ymd } from './time.js';

/**
 * The alert engine: rules over closed ISO weeks (Monday 00:00 UTC to the next Monday), per
 * team, for pulses without a team and for the whole organization, computed from the day
 * rollups. Every comparison is exact, in integers (thresholds are in hundredths); see
 * docs/alerts.md.
 */

export const ALERT_TYPES = ['MOOD_DROP', 'LOW_MOOD', 'PARTICIPATION_DROP'] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

/** A group-week with fewer pulses raises nothing and does not count in a baseline. */
export const MIN_PULSES = 5;
/** The baseline is the weeks just before the evaluated week... */
export const BASELINE_WEEKS = 4;
/** ...of which at least this many must have MIN_PULSES, else no comparison is made. */
export const MIN_BASELINE_WEEKS = 2;
/** Organizations evaluated at once on PostgreSQL. */
const ORG_CONCURRENCY = 4;

/** Thresholds in hundredths: moodDrop 50 = 0.50 points, lowMood 250 = 2.50, participationDrop 50 = 50%. */
export interface AlertThresholds {
  moodDrop: number;
  lowMood: number;
  participationDrop: number;
}
export const DEFAULT_THRESHOLDS: AlertThresholds = { moodDrop: 50, lowMood: 250, participationDrop: 50 };

export interface WeekAggregate {
  count: number;
  sum: number;
}

/** Who an alert is about. */
export type AlertGroup = { kind: 'team'; subteamId: string; name: string } | { kind: 'no_team' } | { kind: 'org' };

export interface Finding {
  type: AlertType;
  message: string;
}

const big = BigInt;

/** sum / count rounded half up to hundredths, exactly. */
function hundredthsOf(sum: bigint, count: bigint): bigint {
  return (200n * sum + count) / (2n * count);
}

function fmt(h: bigint): string {
  const sign = h < 0n ? '-' : '';
  const a = h < 0n ? -h : h;
  return `${sign}${a / 100n}.${String(a % 100n).padStart(2, '0')}`;
}

const subject = (g: AlertGroup) => (g.kind === 'team' ? `in ${g.name}` : g.kind === 'no_team' ? 'among pulses without a team' : 'across the organization');

/**
 * The rules for one group-week. `trailing` holds the (up to) BASELINE_WEEKS weeks before it,
 * small ones included: they are skipped here.
 *
 * - MOOD_DROP: baseline average - week average >= moodDrop.
 * - LOW_MOOD: week average <= lowMood.
 * - PARTICIPATION_DROP: week count <= participationDrop x baseline weekly count.
 *
 * Averages are exact fractions (sum / count), never rounded before comparing; the baseline
 * average is the pooled average of the eligible weeks (their level sum over their count).
 */
export function evaluateGroupWeek(
  group: AlertGroup,
  weekISO: string,
  week: WeekAggregate,
  trailing: WeekAggregate[],
  t: AlertThresholds = DEFAULT_THRESHOLDS,
): Finding[] {
  if (week.count < MIN_PULSES) return [];
  const n = big(week.count);
  const s = big(week.sum);
  const eligible = trailing.filter((w) => w.count >= MIN_PULSES);
  const weeks = big(eligible.length);
  const bc = eligible.reduce((a, w) => a + big(w.count), 0n);
  const bs = eligible.reduce((a, w) => a + big(w.sum), 0n);
  const avg = hundredthsOf(s, n);
  const baselineLabel = (what: string) =>
    eligible.length === BASELINE_WEEKS ? `its ${BASELINE_WEEKS}-week ${what}` : `its ${what} in ${eligible.length} of the previous ${BASELINE_WEEKS} weeks`;
  const out: Finding[] = [];
  const comparable = eligible.length >= MIN_BASELINE_WEEKS;

  // bs/bc - s/n >= d/100  <=>  100 (bs n - s bc) >= d bc n
  if (comparable && 100n * (bs * n - s * bc) >= big(t.moodDrop) * bc * n) {
    const base = hundredthsOf(bs, bc);
    out.push({
      type: 'MOOD_DROP',
      message: `Mood ${subject(group)} averaged ${fmt(avg)} in ${weekISO}, ${fmt(base - avg)} below ${baselineLabel('average')} of ${fmt(base)} (${n} pulses).`,
    });
  }
  // s/n <= l/100  <=>  100 s <= l n
  if (100n * s <= big(t.lowMood) * n) {
    out.push({
      type: 'LOW_MOOD',
      message: `Mood ${subject(group)} averaged ${fmt(avg)} in ${weekISO} (${n} pulses), at or below the low-mood level of ${fmt(big(t.lowMood))}.`,
    });
  }
  // n <= (p/100) (bc / weeks)  <=>  100 n weeks <= p bc
  if (comparable && 100n * n * weeks <= big(t.participationDrop) * bc) {
    out.push({
      type: 'PARTICIPATION_DROP',
      message: `Participation ${subject(group)} fell to ${n} pulses in ${weekISO}, at most ${t.participationDrop}% of ${baselineLabel('average')} of ${fmt(hundredthsOf(bc, weeks))} pulses a week.`,
    });
  }
  return out;
}

/** Monday 00:00 UTC of the latest week that is closed at `now`: its next Monday plus the delay has passed. */
export function lastClosedWeek(now: Date, closeDelayMinutes: number): Date {
  return new Date(startOfIsoWeek(new Date(now.getTime() - closeDelayMinutes * 60_000)).getTime() - WEEK_MS);
}

export interface AlertEngineOptions {
  thresholds: AlertThresholds;
  /** Mondays (00:00 UTC) of the weeks to evaluate; each must be closed. */
  weeks: Date[];
  /** Only these organizations; default: every organization with pulses in the weeks read. */
  orgIds?: string[];
  /** The clock that stamps createdAt (the caller's: the scheduler's, a test's pinned one). */
  clock: () => Date;
  /**
   * Called inside the transaction that inserted one (organization, week)'s alerts, with
   * exactly the alerts it inserted (GET /alerts shape), never with an empty list.
   */
  onInserted?: (tx: Transaction, orgId: string, alerts: AlertRow[]) => Promise<void>;
}

export interface RaisedByEngine extends AlertRow {
  orgId: string;
}

export interface AlertRunReport {
  weeks: string[];
  organizations: number;
  raised: RaisedByEngine[];
}

export function thresholdsFrom(config: Pick<Config, 'alertThresholds'>): AlertThresholds {
  return { ...config.alertThresholds };
}

function groupOf(r: GroupWeekRow): AlertGroup {
  if (r.groupKey === 'org') return { kind: 'org' };
  if (r.groupKey === 'no_team') return { kind: 'no_team' };
  return { kind: 'team', subteamId: r.subteamId!, name: r.subteamName! };
}

/** The first day, and the day after the last, that a pulse can be on (CONTRACT.md section 4: 0001-01-01 to 9999-12-31). */
const FIRST_DAY_MS = Date.parse('0001-01-01T00:00:00.000Z');
const AFTER_LAST_DAY_MS = Date.parse('9999-12-31T00:00:00.000Z') + DAY_MS;

/**
 * A bound of the days read, as the database reads a date: kept inside the days a pulse can be on.
 * The baseline of 0001-W01..W04 starts in year 0, which PostgreSQL has no date for, and 9999-W52
 * ends in year 10000, which ymd() writes +010000-01-03: both were a 500.
 */
function rollupDay(ms: number): string {
  return ms >= AFTER_LAST_DAY_MS ? '10000-01-01' : ymd(new Date(Math.max(ms, FIRST_DAY_MS)));
}

/**
 * Evaluates the given weeks for each organization: one rollup query per organization, then
 * one transaction per (organization, week) that has findings. Weeks run oldest first and
 * each week's alerts get a later createdAt than the previous week's (by a millisecond), so
 * GET /alerts lists a backfill's newest week first. Raising is exactly-once by the unique index, not by timing: any number
 * of runs, in any number of processes, may overlap.
 */
export async function runAlertEngine(db: DatabaseExecutor, opts: AlertEngineOptions): Promise<AlertRunReport> {
  // Organizations named by the caller must exist (404 otherwise); the scheduled run takes those with pulses.
  for (const orgId of opts.orgIds ?? []) await requireLiveOrg(db, orgId);
  const weeks = [...new Set(opts.weeks.map((w) => w.getTime()))].sort((a, b) => a - b).map((t) => new Date(t));
  const report: AlertRunReport = { weeks: weeks.map(isoWeekLabel), organizations: 0, raised: [] };
  if (weeks.length === 0) return report;
  const from = rollupDay(weeks[0].getTime() - BASELINE_WEEKS * WEEK_MS);
  const to = rollupDay(weeks[weeks.length - 1].getTime() + WEEK_MS);
  const orgIds = opts.orgIds ?? (await orgIdsWithPulsesBetween(db, from, to));
  // createdAt: the run's start, plus one millisecond per week after the first of a backfill.
  const startedAt = opts.clock().getTime();
  const evaluateOrg = async (orgId: string): Promise<RaisedByEngine[]> => {
    const raised: RaisedByEngine[] = [];
    const rows = await groupWeekAggregates(db, orgId, from, to);
    const groups = new Map<string, { group: AlertGroup; weeks: Map<string, WeekAggregate> }>();
    for (const r of rows) {
      let g = groups.get(r.groupKey);
      if (!g) groups.set(r.groupKey, (g = { group: groupOf(r), weeks: new Map() }));
      g.weeks.set(r.week, { count: r.count, sum: r.sum });
    }
    for (const [k, monday] of weeks.entries()) {
      const weekISO = isoWeekLabel(monday);
      const candidates: Omit<RaisedAlert, 'createdAt'>[] = [];
      for (const [groupKey, g] of groups) {
        const at = (back: number) => g.weeks.get(ymd(new Date(monday.getTime() - back * WEEK_MS))) ?? { count: 0, sum: 0 };
        const trailing = Array.from({ length: BASELINE_WEEKS }, (_, i) => at(i + 1));
        for (const f of evaluateGroupWeek(g.group, weekISO, at(0), trailing, opts.thresholds)) {
          candidates.push({
            id: newId('al'),
            type: f.type,
            message: f.message,
            weekISO,
            groupKey,
            subteamId: g.group.kind === 'team' ? g.group.subteamId : null,
            subteamName: g.group.kind === 'team' ? g.group.name : null,
          });
        }
      }
      if (candidates.length === 0) continue;
      // One order for every process: two runs inserting the same keys then never deadlock.
      candidates.sort((a, b) => (a.groupKey < b.groupKey ? -1 : a.groupKey > b.groupKey ? 1 : a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
      const createdAt = new Date(startedAt + k).toISOString();
      const inserted = await db.transaction(async (tx) => {
        const rowsIn = await insertRaisedAlerts(
          tx,
          orgId,
          candidates.map((c) => ({ ...c, createdAt })),
        );
        // alert.created goes to the webhook outbox in the transaction that raised the alert: never lost, never early.
        for (const alert of rowsIn) await recordAlertCreated(tx, orgId, alert, new Date(startedAt));
        if (rowsIn.length > 0 && opts.onInserted) await opts.onInserted(tx, orgId, rowsIn);
        return rowsIn;
      });
      raised.push(...inserted.map((a) => ({ orgId, ...a })));
    }
    return raised;
  };
  // A few organizations at a time on PostgreSQL (each in its own connection); PGlite is one connection.
  const perOrg: RaisedByEngine[][] = new Array(orgIds.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < orgIds.length && !failed) {
      const i = next++;
      perOrg[i] = await evaluateOrg(orgIds[i]).catch((err) => {
        failed = true;
        throw err;
      });
    }
  };
  const concurrency = db.kind === 'pg' ? ORG_CONCURRENCY : 1;
  await Promise.all(Array.from({ length: Math.min(concurrency, orgIds.length) }, worker));
  report.organizations = orgIds.length;
  report.raised = perOrg.flat();
  return report;
}
