import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import type { Dataset } from '../../src/domain/dataset.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { lastClosedWeek } from '../../src/domain/alert-engine.js';
import { isoWeekLabel, parseIsoWeek } from '../../src/domain/time.js';
import { createCliDatabase, openApp, runCli, runCliInProcess as cli } from '../helpers/cli.js';
import { TEST_DATABASE_URL } from '../helpers/db.js';

const DAY = 86_400_000;
/** Several CLI processes in one test: each starts node and opens the database. */
const CLI_TIMEOUT = 240_000;
const T0 = '2026-01-01T00:00:00.000Z';
type P = NonNullable<NonNullable<Dataset['organizations']>[number]['pulses']>[number];

function week(prefix: string, label: string, team: string | null, levels: number[]): P[] {
  const monday = parseIsoWeek(label)!.getTime();
  return levels.map((level, i) => ({
    id: `${prefix}_${label}_${i}`,
    level,
    moderationStatus: 'CLEAN' as const,
    subteamId: team,
    createdAt: new Date(monday + 2 * DAY + i * 60_000).toISOString(),
  }));
}
const times = (n: number, level: number) => Array<number>(n).fill(level);

function dataset(): Dataset {
  return {
    organizations: [
      {
        id: 'org_e',
        name: 'E',
        plan: 'business',
        createdAt: T0,
        teams: [{ id: 'team_sup', name: 'Support', createdAt: T0 }],
        pulses: [
          ...['2026-W30', '2026-W31', '2026-W32', '2026-W33'].flatMap((l) => week('e', l, 'team_sup', [...times(5, 3), ...times(5, 4)])),
          ...week('e', '2026-W34', 'team_sup', times(10, 3)),
        ],
      },
      {
        id: 'org_f',
        name: 'F',
        plan: 'business',
        createdAt: T0,
        pulses: [...week('f', '2026-W30', null, times(5, 2)), ...week('f', '2026-W32', null, times(5, 2))],
      },
    ],
  };
}

/** The lines of `alerts run` output, ids replaced, the summary apart. */
function parse(stdout: string) {
  const lines = stdout.trim().split('\n');
  return {
    alerts: lines.slice(0, -1).map((l) => {
      const [weekISO, orgId, type, id, message] = l.split('\t');
      expect(id).toMatch(/^al_[0-9A-Za-z]{16}$/);
      return [weekISO, orgId, type, message];
    }),
    summary: lines[lines.length - 1],
  };
}

// The CLI runs in this process (runCliInProcess); two runs at once (below) are two processes.
describe('climate-pulse alerts run', () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  beforeAll(async () => {
    cdb = await createCliDatabase();
    expect((await cli(['migrate'], cdb.env)).code).toBe(0);
    const s = await openApp(cdb.env);
    await loadDataset(s.db, dataset());
    await s.close();
  });
  afterAll(() => cdb.close());

  const MOOD_E = 'averaged 3.00 in 2026-W34, 0.50 below its 4-week average of 3.50 (10 pulses).';
  const low = (w: string, who: string) => `Mood ${who} averaged 2.00 in ${w} (5 pulses), at or below the low-mood level of 2.50.`;

  it(
    '--week raises that closed week once and prints each alert; a repeated run raises nothing',
    async () => {
      const r = await cli(['alerts', 'run', '--week', '2026-W34'], cdb.env);
      expect(r.code, r.stderr).toBe(0);
      expect(parse(r.stdout)).toEqual({
        alerts: [
          ['2026-W34', 'org_e', 'MOOD_DROP', `Mood across the organization ${MOOD_E}`],
          ['2026-W34', 'org_e', 'MOOD_DROP', `Mood in Support ${MOOD_E}`],
        ],
        summary: 'raised 2 alerts for 2026-W34 in 2 organizations',
      });
      const again = await cli(['alerts', 'run', '--week', '2026-W34'], cdb.env);
      expect(again.stdout).toBe('raised 0 alerts for 2026-W34 in 2 organizations\n');
    },
    CLI_TIMEOUT,
  );

  it(
    '--since backfills every closed week from that one on, and only those; --org keeps to one organization',
    async () => {
      const last = isoWeekLabel(lastClosedWeek(new Date(), 60));
      const r = await cli(['alerts', 'run', '--since', '2026-W31', '--org', 'org_f'], cdb.env);
      expect(r.code, r.stderr).toBe(0);
      const out = parse(r.stdout);
      expect(out.alerts).toEqual([
        ['2026-W32', 'org_f', 'LOW_MOOD', low('2026-W32', 'among pulses without a team')],
        ['2026-W32', 'org_f', 'LOW_MOOD', low('2026-W32', 'across the organization')],
      ]);
      expect(out.summary).toBe(`raised 2 alerts for 2026-W31..${last} in 1 organization`);
      const all = parse((await cli(['alerts', 'run', '--since', '2026-W01'], cdb.env)).stdout);
      expect(all.alerts).toEqual([
        ['2026-W30', 'org_f', 'LOW_MOOD', low('2026-W30', 'among pulses without a team')],
        ['2026-W30', 'org_f', 'LOW_MOOD', low('2026-W30', 'across the organization')],
      ]);
      // The last closed week, not a year written here: the test runs in 2027 too.
      expect(all.summary).toBe(`raised 2 alerts for 2026-W01..${last} in 2 organizations`);
      expect(parse((await cli(['alerts', 'run'], cdb.env)).stdout).summary).toBe(`raised 0 alerts for ${last} in 0 organizations`);

      const s = await openApp(cdb.env);
      const rows = await s.db.query<{ org_id: string; week_iso: string; n: number }>(
        sql('t.alerts', `SELECT org_id, week_iso, count(*)::int AS n FROM alerts GROUP BY 1, 2 ORDER BY 1, 2`),
      );
      await s.close();
      expect(rows).toEqual([
        { org_id: 'org_e', week_iso: '2026-W34', n: 2 },
        { org_id: 'org_f', week_iso: '2026-W30', n: 2 },
        { org_id: 'org_f', week_iso: '2026-W32', n: 2 },
      ]);
    },
    CLI_TIMEOUT,
  );

  it.each([
    [['--week', '2026-W99'], 'climate-pulse: --week "2026-W99" is not an ISO week like 2026-W47'],
    [['--since', 'last week'], 'climate-pulse: --since "last week" is not an ISO week like 2026-W47'],
    [['--week', '2026-W30', '--since', '2026-W30'], 'climate-pulse: give --week or --since, not both'],
    [['--week', '2026-W30', '--org', 'org_nope'], 'climate-pulse: no organization "org_nope" (or it is deleted)'],
  ])('refuses %j with one line and exit 1', async (args, message) => {
    const r = await cli(['alerts', 'run', ...args], cdb.env);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(message);
    expect(r.stdout).toBe('');
  });

  it('refuses a week that is not closed yet, naming the latest closed one', async () => {
    const current = isoWeekLabel(new Date(Date.now() + 7 * DAY));
    const r = await cli(['alerts', 'run', '--week', current], cdb.env);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(
      new RegExp(
        `^climate-pulse: --week ${current} is not closed yet: the latest closed week is \\d{4}-W\\d\\d \\(weeks close at Monday 00:00 UTC plus ALERTS_CLOSE_DELAY_MINUTES=60\\)$`,
      ),
    );
  });
});

/** A fixed pseudo-random sequence, so a failure reproduces. */
function sequence(seed: number) {
  return () => (seed = (seed * 16807) % 2147483647) / 2147483647;
}

describe.skipIf(!TEST_DATABASE_URL)('two engine runs at once on PostgreSQL', () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  beforeAll(async () => {
    cdb = await createCliDatabase();
    // 12 organizations x 4 teams (and pulses without a team) over 20 weeks, with random dips and quiet weeks.
    const rnd = sequence(11);
    const weeks = Array.from({ length: 20 }, (_, i) => `2026-W${String(10 + i).padStart(2, '0')}`);
    const organizations = Array.from({ length: 12 }, (_, o) => {
      const teams = Array.from({ length: 4 }, (_, t) => ({ id: `team_${t}`, name: `Team ${t}`, createdAt: T0 }));
      const pulses = weeks.flatMap((l) =>
        [...teams.map((t) => t.id), null].flatMap((team) => {
          const n = rnd() < 0.15 ? Math.floor(rnd() * 6) : 6 + Math.floor(rnd() * 10);
          const dip = rnd() < 0.2 ? 1.5 : 0;
          return week(
            `o${o}_${team ?? 'none'}`,
            l,
            team,
            Array.from({ length: n }, () => Math.max(1, Math.min(5, Math.round(3.8 - dip + (rnd() - 0.5) * 2)))),
          );
        }),
      );
      return { id: `org_c${o}`, name: `C${o}`, plan: 'business', createdAt: T0, teams, pulses };
    });
    const s = await openApp(cdb.env);
    await loadDataset(s.db, { organizations });
    await s.close();
  });
  afterAll(() => cdb.close());

  it(
    'raise each alert once between them, and a third run raises nothing',
    async () => {
      const [a, b] = await Promise.all([runCli(['alerts', 'run', '--since', '2026-W01'], cdb.env), runCli(['alerts', 'run', '--since', '2026-W01'], cdb.env)]);
      expect(a.code, a.stderr).toBe(0);
      expect(b.code, b.stderr).toBe(0);
      const printed = [...parse(a.stdout).alerts, ...parse(b.stdout).alerts];
      const s = await openApp(cdb.env);
      const rows = await s.db.query<{ week_iso: string; org_id: string; type: string; message: string; group_key: string }>(
        sql('t.all', `SELECT week_iso, org_id, type, message, group_key FROM alerts ORDER BY 1, 2, 3, 4`),
      );
      const [dups] = await s.db.query<{ n: number }>(
        sql('t.dups', `SELECT count(*)::int AS n FROM (SELECT 1 FROM alerts GROUP BY org_id, week_iso, group_key, type HAVING count(*) > 1) d`),
      );
      await s.close();
      expect(rows.length).toBeGreaterThan(30);
      expect(new Set(rows.map((r) => r.type))).toEqual(new Set(['MOOD_DROP', 'LOW_MOOD', 'PARTICIPATION_DROP']));
      expect(dups.n).toBe(0);
      // Every row was printed by exactly one of the two processes.
      const key = (x: string[]) => x.join('\t');
      expect(printed.map(key).sort()).toEqual(rows.map((r) => key([r.week_iso, r.org_id, r.type, r.message])).sort());
      const third = await runCli(['alerts', 'run', '--since', '2026-W01'], cdb.env);
      expect(third.stdout).toMatch(/^raised 0 alerts for 2026-W01\.\.2026-W\d\d in 12 organizations\n$/);
    },
    CLI_TIMEOUT,
  );
});
