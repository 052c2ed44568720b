import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { sql } from '../../src/db/executor.js';
import type { AlertRow } from '../../src/db/repositories/alerts.js';
import { DEFAULT_THRESHOLDS, evaluateGroupWeek, lastClosedWeek, runAlertEngine, type AlertGroup, type WeekAggregate } from '../../src/domain/alert-engine.js';
import type { Dataset } from '../../src/domain/dataset.js';
import { isoWeekLabel, parseIsoWeek } from '../../src/domain/time.js';
import { runScheduledAlerts, startAlertSchedule } from '../../src/jobs/alerts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { api } from '../helpers/openapi.js';

const DAY = 86_400_000;
const WEEK = 7 * DAY;
const w = (label: string) => parseIsoWeek(label)!;
const agg = (count: number, sum: number): WeekAggregate => ({ count, sum });
const SUPPORT: AlertGroup = { kind: 'team', subteamId: 'team_sup', name: 'Support' };
const types = (fs: { type: string }[]) => fs.map((f) => f.type);

describe('ISO weeks', () => {
  it.each([
    ['2026-W47', '2026-11-16'],
    ['2026-W01', '2025-12-29'],
    ['2026-W53', '2026-12-28'],
    ['2020-W53', '2020-12-28'],
    ['2021-W01', '2021-01-04'],
    ['2027-W01', '2027-01-04'],
    ['0001-W01', '0001-01-01'],
  ])('%s starts on Monday %s 00:00 UTC and labels back', (label, monday) => {
    expect(parseIsoWeek(label)!.toISOString()).toBe(`${monday}T00:00:00.000Z`);
    expect(isoWeekLabel(new Date(`${monday}T00:00:00.000Z`))).toBe(label);
    expect(isoWeekLabel(new Date(Date.parse(`${monday}T00:00:00.000Z`) + WEEK - 1))).toBe(label);
  });

  it.each(['2025-W53', '2026-W54', '2026-W00', '2026-w47', '2026-W4', '26-W47', '0000-W10', ' 2026-W47'])('refuses %j', (label) => {
    expect(parseIsoWeek(label)).toBeNull();
  });

  it('a week is closed at the next Monday 00:00 UTC plus the delay, not a millisecond earlier', () => {
    expect(isoWeekLabel(lastClosedWeek(new Date('2026-11-22T23:59:59.999Z'), 0))).toBe('2026-W46');
    expect(isoWeekLabel(lastClosedWeek(new Date('2026-11-23T00:00:00.000Z'), 0))).toBe('2026-W47');
    expect(isoWeekLabel(lastClosedWeek(new Date('2026-11-23T00:59:59.999Z'), 60))).toBe('2026-W46');
    expect(isoWeekLabel(lastClosedWeek(new Date('2026-11-23T01:00:00.000Z'), 60))).toBe('2026-W47');
  });
});

describe('alert rules (exact, at the threshold)', () => {
  const base = [agg(10, 35), agg(10, 35), agg(10, 35), agg(10, 35)]; // 3.50 a pulse, 10 a week

  it('MOOD_DROP: raised at exactly 0.50 below the baseline, not at 0.499', () => {
    expect(evaluateGroupWeek(SUPPORT, '2026-W47', agg(10, 30), base)).toEqual([
      { type: 'MOOD_DROP', message: 'Mood in Support averaged 3.00 in 2026-W47, 0.50 below its 4-week average of 3.50 (10 pulses).' },
    ]);
    expect(evaluateGroupWeek(SUPPORT, '2026-W47', agg(1000, 3001), [agg(1000, 3500), ...base.slice(1)])).toEqual([]);
    // A baseline of 3.5 exactly against 3.0 + 1/1000: 0.499 below.
    expect(evaluateGroupWeek(SUPPORT, '2026-W47', agg(1000, 3001), base)).toEqual([]);
  });

  it('LOW_MOOD: raised at an average of exactly 2.50, not at 2.501', () => {
    const flat = [agg(10, 25), agg(10, 25), agg(10, 25), agg(10, 25)];
    expect(evaluateGroupWeek(SUPPORT, '2026-W47', agg(10, 25), flat)).toEqual([
      { type: 'LOW_MOOD', message: 'Mood in Support averaged 2.50 in 2026-W47 (10 pulses), at or below the low-mood level of 2.50.' },
    ]);
    expect(evaluateGroupWeek(SUPPORT, '2026-W47', agg(1000, 2501), flat)).toEqual([]);
    // No baseline needed for LOW_MOOD.
    expect(types(evaluateGroupWeek(SUPPORT, '2026-W47', agg(5, 5), []))).toEqual(['LOW_MOOD']);
  });

  it('PARTICIPATION_DROP: raised at exactly half the baseline weekly count, not one pulse above', () => {
    const twenty = [agg(20, 70), agg(20, 70), agg(20, 70), agg(20, 70)];
    expect(evaluateGroupWeek(SUPPORT, '2026-W47', agg(10, 35), twenty)).toEqual([
      {
        type: 'PARTICIPATION_DROP',
        message: 'Participation in Support fell to 10 pulses in 2026-W47, at most 50% of its 4-week average of 20.00 pulses a week.',
      },
    ]);
    expect(evaluateGroupWeek(SUPPORT, '2026-W47', agg(11, 39), twenty)).toEqual([]);
    // A baseline of 2000.5 a week: half is 1000.25, so 1000 raises and 1001 does not.
    const odd = [agg(2000, 7000), agg(2001, 7004), agg(2000, 7000), agg(2001, 7004)];
    expect(types(evaluateGroupWeek(SUPPORT, '2026-W47', agg(1000, 3502), odd))).toEqual(['PARTICIPATION_DROP']);
    expect(types(evaluateGroupWeek(SUPPORT, '2026-W47', agg(1001, 3504), odd))).toEqual([]);
  });

  it('a group-week of 4 pulses raises nothing, however bad; 5 pulses can', () => {
    expect(evaluateGroupWeek(SUPPORT, '2026-W47', agg(4, 4), [agg(40, 200), agg(40, 200), agg(40, 200), agg(40, 200)])).toEqual([]);
    expect(types(evaluateGroupWeek(SUPPORT, '2026-W47', agg(5, 5), [agg(40, 200), agg(40, 200), agg(40, 200), agg(40, 200)]))).toEqual([
      'MOOD_DROP',
      'LOW_MOOD',
      'PARTICIPATION_DROP',
    ]);
  });

  it('the baseline skips weeks under 5 pulses and needs at least 2 weeks that count', () => {
    // The small week (4 pulses at 1.0) would pull the baseline down to 3.0 and hide the drop.
    const withSmall = [agg(4, 4), agg(10, 35), agg(0, 0), agg(10, 35)];
    expect(evaluateGroupWeek(SUPPORT, '2026-W47', agg(10, 30), withSmall)).toEqual([
      { type: 'MOOD_DROP', message: 'Mood in Support averaged 3.00 in 2026-W47, 0.50 below its average in 2 of the previous 4 weeks of 3.50 (10 pulses).' },
    ]);
    // Left out, it does not lower the weekly baseline count either: that is 10, and 5 pulses are half of it.
    expect(types(evaluateGroupWeek(SUPPORT, '2026-W47', agg(5, 18), withSmall))).toEqual(['PARTICIPATION_DROP']);
    expect(types(evaluateGroupWeek(SUPPORT, '2026-W47', agg(6, 21), withSmall))).toEqual([]);
    // One week that counts is no baseline: no MOOD_DROP or PARTICIPATION_DROP at all.
    expect(evaluateGroupWeek(SUPPORT, '2026-W47', agg(5, 5), [agg(4, 20), agg(10, 50), agg(3, 15), agg(0, 0)]).map((f) => f.type)).toEqual(['LOW_MOOD']);
  });

  it('names the group: a team, pulses without a team, the organization', () => {
    const msg = (g: AlertGroup) => evaluateGroupWeek(g, '2026-W47', agg(10, 30), [agg(10, 35), agg(10, 35)])[0].message;
    expect(msg({ kind: 'no_team' })).toBe(
      'Mood among pulses without a team averaged 3.00 in 2026-W47, 0.50 below its average in 2 of the previous 4 weeks of 3.50 (10 pulses).',
    );
    expect(msg({ kind: 'org' })).toBe(
      'Mood across the organization averaged 3.00 in 2026-W47, 0.50 below its average in 2 of the previous 4 weeks of 3.50 (10 pulses).',
    );
  });

  it('takes its thresholds from the configuration, exactly', () => {
    const config = loadConfig({ ALERTS_MOOD_DROP: '0.25', ALERTS_LOW_MOOD: '3', ALERTS_PARTICIPATION_DROP: '0.75' });
    expect(config.alertThresholds).toEqual({ moodDrop: 25, lowMood: 300, participationDrop: 75 });
    expect(loadConfig({}).alertThresholds).toEqual(DEFAULT_THRESHOLDS);
    const t = config.alertThresholds;
    const base = [agg(20, 70), agg(20, 70), agg(20, 70), agg(20, 70)];
    expect(types(evaluateGroupWeek(SUPPORT, '2026-W47', agg(15, 49), base, t))).toEqual(['PARTICIPATION_DROP']);
    expect(types(evaluateGroupWeek(SUPPORT, '2026-W47', agg(20, 65), base, t))).toEqual(['MOOD_DROP']); // 3.25: 0.25 below
    expect(types(evaluateGroupWeek(SUPPORT, '2026-W47', agg(20, 66), base, t))).toEqual([]); // 3.30: 0.20 below
    expect(types(evaluateGroupWeek(SUPPORT, '2026-W47', agg(20, 60), base, t))).toEqual(['MOOD_DROP', 'LOW_MOOD']);
    for (const [name, value] of [
      ['ALERTS_MOOD_DROP', '0'],
      ['ALERTS_MOOD_DROP', '0.505'],
      ['ALERTS_LOW_MOOD', '5.5'],
      ['ALERTS_PARTICIPATION_DROP', '1.5'],
      ['ALERTS_INTERVAL_MINUTES', '-1'],
    ]) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(/invalid configuration/);
    }
  });
});

const T0 = '2026-01-01T00:00:00.000Z';
const KEY_A = 'cp_test_alerts_a_0123456789abcdef';
const KEY_B = 'cp_test_alerts_b_0123456789abcdef';
const KEY_C = 'cp_test_alerts_c_0123456789abcdef';
const KEY_D = 'cp_test_alerts_d_0123456789abcdef';
type P = NonNullable<NonNullable<Dataset['organizations']>[number]['pulses']>[number];

/** `levels` pulses in the week `label`, on its Wednesday unless `at` (an offset from Monday 00:00 UTC in ms) is given. */
function week(prefix: string, label: string, team: string | null, levels: number[], at?: (i: number) => number): P[] {
  const monday = w(label).getTime();
  return levels.map((level, i) => ({
    id: `${prefix}_${label}_${i}`,
    level,
    moderationStatus: 'CLEAN' as const,
    subteamId: team,
    createdAt: new Date(monday + (at ? at(i) : 2 * DAY + 3_600_000 + i * 60_000)).toISOString(),
  }));
}
const times = (n: number, level: number) => Array<number>(n).fill(level);
const BASELINE = ['2026-W43', '2026-W44', '2026-W45', '2026-W46'];

function dataset(): Dataset {
  const org = (id: string, key: string) => ({ id, name: id, plan: 'business', createdAt: T0, apiKeys: [{ key }] });
  return {
    organizations: [
      {
        // Support: 3.50 for four weeks, exactly 3.00 in W47. The edges of W47 are on its instants:
        // one pulse at Monday 00:00:00.000 (in), one the Sunday before at 23:59:59.999 (in W46),
        // one at the next Monday 00:00:00.000 (in W48). Counted wrongly, W47 is not 3.00 from 10 pulses.
        ...org('org_a', KEY_A),
        teams: [{ id: 'team_sup', name: 'Support', createdAt: T0 }],
        pulses: [
          ...BASELINE.flatMap((l) =>
            week('a', l, 'team_sup', [...times(5, 3), ...times(5, 4)], (i) => (l === '2026-W46' && i === 9 ? WEEK - 1 : 2 * DAY + i * 60_000)),
          ),
          ...week('a', '2026-W47', 'team_sup', times(10, 3), (i) => (i === 0 ? 0 : DAY + i * 3_600_000)),
          ...week('a', '2026-W48', 'team_sup', [1], () => 0),
        ],
      },
      {
        // Three groups of 3 pulses a week: none may be reported on, the organization (9) is.
        ...org('org_b', KEY_B),
        teams: [
          { id: 'team_x', name: 'X', createdAt: T0 },
          { id: 'team_y', name: 'Y', createdAt: T0 },
        ],
        pulses: [
          ...[...BASELINE, '2026-W47'].flatMap((l) => {
            const level = l === '2026-W47' ? 2 : 4;
            return [...week('bx', l, 'team_x', times(3, level)), ...week('by', l, 'team_y', times(3, level)), ...week('bn', l, null, times(3, level))];
          }),
        ],
      },
      {
        // Pulses without a team drop, their W44 is small (4 pulses at 5) and left out of their baseline.
        ...org('org_c', KEY_C),
        teams: [{ id: 'team_z', name: 'Z', createdAt: T0 }],
        pulses: [
          ...[...BASELINE, '2026-W47'].flatMap((l) => week('cz', l, 'team_z', times(10, 4))),
          ...BASELINE.flatMap((l) => week('cn', l, null, l === '2026-W44' ? times(4, 5) : times(10, 4))),
          ...week('cn', '2026-W47', null, times(10, 2)),
        ],
      },
      {
        // No teams, and low weeks long before the others' data: for the backfill.
        ...org('org_d', KEY_D),
        pulses: [...week('d', '2026-W40', null, times(5, 2)), ...week('d', '2026-W42', null, times(5, 2))],
      },
    ],
  };
}

const NOW = new Date('2026-11-25T10:00:00.000Z');
const RUN_AT = '2026-11-25T10:00:05.000Z';

describe('the alert engine on the database', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ dataset: dataset(), now: NOW });
  });
  afterAll(() => t.close());

  const alertsOf = async (orgId: string) =>
    t.db.query<{ type: string; week_iso: string; group_key: string; message: string }>(
      sql('t.alerts', `SELECT type, week_iso, group_key, message FROM alerts WHERE org_id = $1 ORDER BY week_iso, group_key, type`),
      [orgId],
    );

  it('raises, in one run over the closed week, exactly the alerts the rules give', async () => {
    const inserted: { orgId: string; alerts: AlertRow[]; visible: number }[] = [];
    const report = await runAlertEngine(t.db, {
      thresholds: DEFAULT_THRESHOLDS,
      weeks: [w('2026-W47')],
      clock: () => new Date(RUN_AT),
      async onInserted(tx, orgId, alerts) {
        const [r] = await tx.query<{ n: number }>(sql('t.count_in_tx', `SELECT count(*)::int AS n FROM alerts WHERE org_id = $1`), [orgId]);
        inserted.push({ orgId, alerts, visible: r.n });
      },
    });
    expect(report.weeks).toEqual(['2026-W47']);
    expect(report.organizations).toBe(3);
    expect(await alertsOf('org_a')).toEqual([
      {
        type: 'MOOD_DROP',
        week_iso: '2026-W47',
        group_key: 'org',
        message: 'Mood across the organization averaged 3.00 in 2026-W47, 0.50 below its 4-week average of 3.50 (10 pulses).',
      },
      {
        type: 'MOOD_DROP',
        week_iso: '2026-W47',
        group_key: 'team:team_sup',
        message: 'Mood in Support averaged 3.00 in 2026-W47, 0.50 below its 4-week average of 3.50 (10 pulses).',
      },
    ]);
    expect(await alertsOf('org_b')).toEqual([
      {
        type: 'LOW_MOOD',
        week_iso: '2026-W47',
        group_key: 'org',
        message: 'Mood across the organization averaged 2.00 in 2026-W47 (9 pulses), at or below the low-mood level of 2.50.',
      },
      {
        type: 'MOOD_DROP',
        week_iso: '2026-W47',
        group_key: 'org',
        message: 'Mood across the organization averaged 2.00 in 2026-W47, 2.00 below its 4-week average of 4.00 (9 pulses).',
      },
    ]);
    expect(await alertsOf('org_c')).toEqual([
      {
        type: 'LOW_MOOD',
        week_iso: '2026-W47',
        group_key: 'no_team',
        message: 'Mood among pulses without a team averaged 2.00 in 2026-W47 (10 pulses), at or below the low-mood level of 2.50.',
      },
      {
        type: 'MOOD_DROP',
        week_iso: '2026-W47',
        group_key: 'no_team',
        message: 'Mood among pulses without a team averaged 2.00 in 2026-W47, 2.00 below its average in 3 of the previous 4 weeks of 4.00 (10 pulses).',
      },
      // The organization counts W44 whole (10 at 4 and 4 at 5): 300 / 74 = 4.05 against 60 / 20.
      {
        type: 'MOOD_DROP',
        week_iso: '2026-W47',
        group_key: 'org',
        message: 'Mood across the organization averaged 3.00 in 2026-W47, 1.05 below its 4-week average of 4.05 (20 pulses).',
      },
    ]);
    // The callback ran inside each (organization, week) transaction with exactly the rows it inserted.
    // On PostgreSQL organizations run side by side, so the callbacks come in any order.
    const byOrg = [...inserted].sort((x, y) => x.orgId.localeCompare(y.orgId));
    expect(byOrg.map((i) => [i.orgId, i.alerts.length, i.visible])).toEqual([
      ['org_a', 2, 2],
      ['org_b', 2, 2],
      ['org_c', 3, 3],
    ]);
    expect(report.raised.map(({ orgId, ...a }) => ({ orgId, a }))).toEqual(byOrg.flatMap((i) => i.alerts.map((a) => ({ orgId: i.orgId, a }))));
    for (const a of report.raised) {
      expect(a.id).toMatch(/^al_[0-9A-Za-z]{16}$/);
      expect(a).toMatchObject({ weekISO: '2026-W47', readAt: null, createdAt: RUN_AT });
      expect(a.subteamName).toBe(a.message.includes(' in Support ') ? 'Support' : null);
    }
  });

  it('a repeated run raises nothing new, and neither does a run over the same week from another clock', async () => {
    const again = await runAlertEngine(t.db, { thresholds: DEFAULT_THRESHOLDS, weeks: [w('2026-W47')], clock: () => new Date() });
    expect(again.raised).toEqual([]);
    const scheduled = await runScheduledAlerts({ db: t.db, config: loadConfig({}), now: () => NOW });
    expect(scheduled.weeks).toEqual(['2026-W46', '2026-W47']);
    expect(scheduled.raised).toEqual([]);
    const [n] = await t.db.query<{ n: number }>(sql('t.count', `SELECT count(*)::int AS n FROM alerts`));
    expect(n.n).toBe(7);
  });

  it('a failing onInserted rolls its transaction back: nothing is raised, and the next run raises it', async () => {
    await t.db.query(sql('t.forget', `DELETE FROM alerts WHERE org_id = 'org_b'`));
    await expect(
      runAlertEngine(t.db, {
        thresholds: DEFAULT_THRESHOLDS,
        weeks: [w('2026-W47')],
        orgIds: ['org_b'],
        clock: () => new Date(),
        onInserted: async () => {
          throw new Error('webhook outbox down');
        },
      }),
    ).rejects.toThrow('webhook outbox down');
    expect(await alertsOf('org_b')).toEqual([]);
    const r = await runAlertEngine(t.db, { thresholds: DEFAULT_THRESHOLDS, weeks: [w('2026-W47')], orgIds: ['org_b'], clock: () => new Date(RUN_AT) });
    expect(r.raised.map((a) => a.type).sort()).toEqual(['LOW_MOOD', 'MOOD_DROP']);
  });

  it('GET /alerts shows the engine alerts newest first with exactly the seed fields', async () => {
    const res = await api(t.app, KEY_A).get('/v1/alerts');
    expect(res.statusCode).toBe(200);
    const items = res.json().items as AlertRow[];
    expect(items.map((a) => Object.keys(a))).toEqual(items.map(() => ['id', 'type', 'message', 'weekISO', 'subteamName', 'readAt', 'createdAt']));
    expect([...items].sort((a, b) => (a.id < b.id ? 1 : -1))).toEqual(items); // same createdAt: id descending
    expect(items.map(({ id, ...a }) => a).sort((a, b) => (a.message < b.message ? -1 : 1))).toEqual([
      {
        type: 'MOOD_DROP',
        message: 'Mood across the organization averaged 3.00 in 2026-W47, 0.50 below its 4-week average of 3.50 (10 pulses).',
        weekISO: '2026-W47',
        subteamName: null,
        readAt: null,
        createdAt: RUN_AT,
      },
      {
        type: 'MOOD_DROP',
        message: 'Mood in Support averaged 3.00 in 2026-W47, 0.50 below its 4-week average of 3.50 (10 pulses).',
        weekISO: '2026-W47',
        subteamName: 'Support',
        readAt: null,
        createdAt: RUN_AT,
      },
    ]);
    // Another organization's alerts are not there.
    expect((await api(t.app, KEY_C).get('/v1/alerts?limit=50')).json().items.map((a: AlertRow) => a.subteamName)).toEqual([null, null, null]);
  });

  it('a backfill evaluates weeks oldest first and stamps newer weeks later, so GET /alerts lists the newest week first', async () => {
    const tick = Date.parse('2026-11-25T11:00:00.000Z');
    const r = await runAlertEngine(t.db, {
      thresholds: DEFAULT_THRESHOLDS,
      weeks: ['2026-W42', '2026-W40', '2026-W41'].map(w),
      clock: () => new Date(tick),
    });
    expect(r.weeks).toEqual(['2026-W40', '2026-W41', '2026-W42']);
    expect(r.raised.map((a) => [a.orgId, a.weekISO, a.type, a.message, a.createdAt])).toEqual([
      [
        'org_d',
        '2026-W40',
        'LOW_MOOD',
        'Mood among pulses without a team averaged 2.00 in 2026-W40 (5 pulses), at or below the low-mood level of 2.50.',
        '2026-11-25T11:00:00.000Z',
      ],
      [
        'org_d',
        '2026-W40',
        'LOW_MOOD',
        'Mood across the organization averaged 2.00 in 2026-W40 (5 pulses), at or below the low-mood level of 2.50.',
        '2026-11-25T11:00:00.000Z',
      ],
      [
        'org_d',
        '2026-W42',
        'LOW_MOOD',
        'Mood among pulses without a team averaged 2.00 in 2026-W42 (5 pulses), at or below the low-mood level of 2.50.',
        '2026-11-25T11:00:00.002Z',
      ],
      [
        'org_d',
        '2026-W42',
        'LOW_MOOD',
        'Mood across the organization averaged 2.00 in 2026-W42 (5 pulses), at or below the low-mood level of 2.50.',
        '2026-11-25T11:00:00.002Z',
      ],
    ]);
    const items = (await api(t.app, KEY_D).get('/v1/alerts')).json().items as AlertRow[];
    expect(items.map((a) => a.weekISO)).toEqual(['2026-W42', '2026-W42', '2026-W40', '2026-W40']);
  });

  it('the schedule runs in each process on its own timer and stops cleanly; 0 turns it off', async () => {
    await t.db.query(sql('t.forget_a', `DELETE FROM alerts WHERE org_id = 'org_a'`));
    const logged: string[] = [];
    const log = { info: (_: object, msg: string) => logged.push(msg), warn: (_: object, msg: string) => logged.push(msg) };
    const config = loadConfig({ ALERTS_INTERVAL_MINUTES: '1' });
    const s = startAlertSchedule({ db: t.db, config, log, now: () => NOW, random: () => 0, firstRunWithinMs: 1 });
    expect(s).not.toBeNull();
    for (let i = 0; i < 100 && logged.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    await s!.stop();
    expect(logged).toEqual(['alert engine raised alerts']);
    expect((await alertsOf('org_a')).map((a) => a.group_key)).toEqual(['org', 'team:team_sup']);
    expect(startAlertSchedule({ db: t.db, config: loadConfig({ ALERTS_INTERVAL_MINUTES: '0' }), log })).toBeNull();
  });
});

/** A fixed pseudo-random sequence, so a failure reproduces. */
function sequence(seed: number) {
  return () => (seed = (seed * 16807) % 2147483647) / 2147483647;
}

describe('the engine against a scan of the pulses (seeded adversary)', () => {
  const rnd = sequence(2026);
  const WEEKS = Array.from({ length: 12 }, (_, i) => `2026-W${String(20 + i).padStart(2, '0')}`);
  const EDGES = [0, 1, DAY - 1, 3 * DAY + 12 * 3_600_000, WEEK - 1]; // Monday 00:00:00.000, +1 ms, ..., Sunday 23:59:59.999
  const orgs = Array.from({ length: 4 }, (_, o) => {
    const teams = Array.from({ length: 3 + o }, (_, t) => ({ id: `team_${t}`, name: `Team ${o}.${t}`, createdAt: T0 }));
    const pulses: P[] = [];
    for (const label of WEEKS) {
      const monday = w(label).getTime();
      for (const team of [...teams.map((t) => t.id), null]) {
        // Small weeks (0-6 pulses) are common, so the 5-pulse floor and baseline skipping are crossed often.
        const n = rnd() < 0.4 ? Math.floor(rnd() * 7) : 5 + Math.floor(rnd() * 12);
        const mean = 1.5 + rnd() * 3;
        for (let i = 0; i < n; i++) {
          const at = rnd() < 0.3 ? EDGES[Math.floor(rnd() * EDGES.length)] : Math.floor(rnd() * WEEK);
          pulses.push({
            id: `r${pulses.length}`,
            level: Math.max(1, Math.min(5, Math.round(mean + (rnd() - 0.5) * 2))),
            moderationStatus: 'CLEAN',
            subteamId: team,
            createdAt: new Date(monday + at).toISOString(),
          });
        }
      }
    }
    return { id: `org_r${o}`, name: `R${o}`, plan: 'business', createdAt: T0, teams, pulses };
  });

  /** What the rules give, from the raw pulses: group-weeks by the JavaScript ISO week of each createdAt. */
  function expected(weeks: string[]) {
    const out: string[] = [];
    for (const org of orgs) {
      const names = new Map(org.teams.map((t) => [t.id, t.name]));
      const agg = new Map<string, WeekAggregate>();
      const add = (key: string, label: string, level: number) => {
        const a = agg.get(`${key}|${label}`) ?? { count: 0, sum: 0 };
        agg.set(`${key}|${label}`, { count: a.count + 1, sum: a.sum + level });
      };
      for (const p of org.pulses) {
        const label = isoWeekLabel(new Date(p.createdAt));
        add(p.subteamId ? `team:${p.subteamId}` : 'no_team', label, p.level);
        add('org', label, p.level);
      }
      const keys = ['org', 'no_team', ...org.teams.map((t) => `team:${t.id}`)];
      for (const label of weeks) {
        for (const key of keys) {
          const group: AlertGroup =
            key === 'org'
              ? { kind: 'org' }
              : key === 'no_team'
                ? { kind: 'no_team' }
                : { kind: 'team', subteamId: key.slice(5), name: names.get(key.slice(5))! };
          const at = (back: number) => agg.get(`${key}|${isoWeekLabel(new Date(w(label).getTime() - back * WEEK))}`) ?? { count: 0, sum: 0 };
          for (const f of evaluateGroupWeek(group, label, at(0), [at(1), at(2), at(3), at(4)])) out.push(`${org.id}|${label}|${key}|${f.type}|${f.message}`);
        }
      }
    }
    return out.sort();
  }

  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ dataset: { organizations: orgs } });
  });
  afterAll(() => t.close());

  it('raises exactly what the rules give for the weeks evaluated, each once, across overlapping and repeated runs', async () => {
    const evaluated = new Set<string>();
    for (let round = 0; round < 4; round++) {
      // Random sets of weeks in random order, two runs at once (interleaved on PostgreSQL).
      const pick = () => WEEKS.filter(() => rnd() < 0.4).sort(() => rnd() - 0.5);
      const a = pick();
      const b = pick();
      for (const l of [...a, ...b]) evaluated.add(l);
      await Promise.all([a, b].map((ws) => runAlertEngine(t.db, { thresholds: DEFAULT_THRESHOLDS, weeks: ws.map(w), clock: () => new Date() })));
      const rows = await t.db.query<{ line: string }>(
        sql('t.lines', `SELECT org_id || '|' || week_iso || '|' || group_key || '|' || type || '|' || message AS line FROM alerts`),
      );
      expect(rows.map((r) => r.line).sort()).toEqual(expected([...evaluated].sort()));
    }
    const all = expected(WEEKS);
    expect(all.length).toBeGreaterThan(20);
    expect(new Set(all.map((l) => l.split('|')[3]))).toEqual(new Set(['MOOD_DROP', 'LOW_MOOD', 'PARTICIPATION_DROP']));
  });
});
