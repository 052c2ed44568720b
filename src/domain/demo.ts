import type { DatabaseExecutor } from '../db/executor.js';
import { DEFAULT_THRESHOLDS, lastClosedWeek, runAlertEngine, type AlertThresholds } from './alert-engine.js';
import { loadDataset, type Dataset } from './dataset.js';
import { randomBase62 } from './ids.js';
import { seedDemoCheckins } from './demo-checkins.js';
import { operatorActor } from './audit.js';

const DAY = 86_400_000;
const DEMO_DAYS = 120;
const TEAMS = [
  { id: 'team_engineering', name: 'Engineering' },
  { id: 'team_support', name: 'Customer Support' },
  { id: 'team_sales', name: 'Sales' },
  { id: 'team_design', name: 'Design' },
  { id: 'team_people', name: 'People & Ops' },
];
/** The team whose mood dips over the last two weeks: the alert engine flags it (MOOD_DROP). */
export const DIP_TEAM = 'team_support';
const REASONS = ['workload', 'team', 'management', 'growth', 'balance'];
const COMMENTS = [
  'Great sprint, the team really pulled together.',
  'Too many meetings this week.',
  'Loving the new onboarding process.',
  'Deadlines feel unrealistic lately.',
  'Thanks for the flexible hours!',
  'Ticket queue is overwhelming, we need more hands.',
  'Good feedback from the customer demo.',
  'Not enough time for deep work.',
  'The offsite was really valuable.',
  'Weekend on-call is wearing people down.',
];

/** Mulberry32: a small seeded generator, so a demo looks the same for one seed. */
function prng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A realistic organization: five teams, 120 days of pulses with a weekly rhythm (fewer on
 * weekends, lower on Mondays), a visible dip in Customer Support over the last 14 days,
 * comments (some FLAGGED) and a few actions. Its alerts come from the alert engine.
 */
export function demoDataset(now: Date, opts: { orgId: string; key: string; seed?: number }): Dataset {
  const rnd = prng(opts.seed ?? 42);
  const start = Math.floor(now.getTime() / DAY) * DAY - (DEMO_DAYS - 1) * DAY;
  const pulses: NonNullable<NonNullable<Dataset['organizations']>[number]['pulses']> = [];
  let n = 0;
  for (let d = 0; d < DEMO_DAYS; d++) {
    const dayStart = start + d * DAY;
    const weekday = new Date(dayStart).getUTCDay();
    const weekend = weekday === 0 || weekday === 6;
    for (const team of TEAMS) {
      const count = weekend ? Math.floor(rnd() * 3) : 6 + Math.floor(rnd() * 6);
      const dip = team.id === DIP_TEAM && now.getTime() - dayStart <= 14 * DAY;
      for (let i = 0; i < count; i++) {
        const at = dayStart + (8 + rnd() * 10) * 3_600_000;
        if (at >= now.getTime()) continue;
        const mean = (dip ? 2.2 : 3.7) - (weekday === 1 ? 0.4 : 0) + (weekday === 5 ? 0.2 : 0);
        const level = Math.min(5, Math.max(1, Math.round(mean + (rnd() - 0.5) * 2.2)));
        const commented = rnd() < 0.3;
        pulses.push({
          id: `demo_p_${++n}`,
          level,
          reason: rnd() < 0.6 ? REASONS[Math.floor(rnd() * REASONS.length)] : null,
          comment: commented ? COMMENTS[Math.floor(rnd() * COMMENTS.length)] : null,
          moderationStatus: commented && rnd() < 0.1 ? 'FLAGGED' : 'CLEAN',
          subteamId: team.id,
          createdAt: new Date(at).toISOString(),
        });
      }
    }
  }
  const created = new Date(start - 30 * DAY).toISOString();
  const week2 = new Date(now.getTime() - 3 * DAY);
  return {
    organizations: [
      {
        id: opts.orgId,
        name: 'Demo Company',
        plan: 'business',
        memberCount: 86,
        createdAt: created,
        apiKeys: [{ key: opts.key, name: 'demo' }],
        teams: TEAMS.map((t) => ({ ...t, createdAt: created })),
        pulses,
        actions: [
          {
            id: 'act_demo_1',
            title: 'Extra hands on the support queue',
            description: 'Two engineers rotate into support for two weeks.',
            startDate: week2.toISOString(),
            endDate: new Date(week2.getTime() + 14 * DAY).toISOString(),
            status: 'active',
            subteamId: DIP_TEAM,
            createdAt: week2.toISOString(),
          },
          {
            id: 'act_demo_2',
            title: 'Meeting-free Wednesdays',
            description: null,
            startDate: new Date(now.getTime() - 60 * DAY).toISOString(),
            endDate: null,
            status: 'done',
            subteamId: 'team_engineering',
            createdAt: new Date(now.getTime() - 60 * DAY).toISOString(),
          },
          {
            id: 'act_demo_3',
            title: 'Quarterly offsite',
            description: 'Postponed to next quarter.',
            startDate: new Date(now.getTime() - 20 * DAY).toISOString(),
            endDate: null,
            status: 'cancelled',
            subteamId: null,
            createdAt: new Date(now.getTime() - 25 * DAY).toISOString(),
          },
        ],
      },
    ],
  };
}

export interface DemoAlertSettings {
  thresholds: AlertThresholds;
  closeDelayMinutes: number;
}

/**
 * Creates a demo organization in one transaction, then its check-ins (a roster and last week's
 * round with its answers, src/domain/demo-checkins.ts), then runs the alert engine over every
 * closed week of its data, as `alerts run --since` would; returns its id and API key.
 */
export async function createDemo(
  db: DatabaseExecutor,
  now: Date,
  alerts: DemoAlertSettings = { thresholds: DEFAULT_THRESHOLDS, closeDelayMinutes: 60 },
): Promise<{ orgId: string; key: string; pulses: number; alerts: number; respondents: number; checkinAnswers: number }> {
  const orgId = `org_demo_${randomBase62(6)}`;
  const key = `cp_live_${randomBase62(40)}`;
  const summary = await loadDataset(db, demoDataset(now, { orgId, key, seed: now.getTime() % 2 ** 31 }));
  const checkins = await seedDemoCheckins(db, orgId, operatorActor(null), now);
  const weeks: Date[] = [];
  for (let w = lastClosedWeek(now, alerts.closeDelayMinutes); w.getTime() > now.getTime() - DEMO_DAYS * DAY; w = new Date(w.getTime() - 7 * DAY)) {
    weeks.unshift(w);
  }
  const report = await runAlertEngine(db, { thresholds: alerts.thresholds, weeks, orgIds: [orgId], clock: () => now });
  return {
    orgId,
    key,
    pulses: summary.pulses + checkins.answers,
    alerts: report.raised.length,
    respondents: checkins.respondents,
    checkinAnswers: checkins.answers,
  };
}
