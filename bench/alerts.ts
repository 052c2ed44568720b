/**
 * The alert engine bench: one engine run over one ISO week for 100 organizations x 20 teams
 * (plus pulses without a team), on PostgreSQL, in its own database
 * `climate_pulse_bench_alerts`, built once with set-based SQL and reused. Target: < 2 s.
 * Run alone with `npx tsx bench/run.ts --only alerts` (or `npx tsx bench/alerts.ts`).
 */
import pg from 'pg';
import { sql } from '../src/db/executor.js';
import { migrate } from '../src/db/migrate.js';
import { PgExecutor } from '../src/db/pg.js';
import { rebuildRollups } from '../src/db/pulse-writes.js';
import { DEFAULT_THRESHOLDS, runAlertEngine } from '../src/domain/alert-engine.js';
import { parseIsoWeek } from '../src/domain/time.js';

export const ALERTS_BENCH_DB = 'climate_pulse_bench_alerts';
const ORGS = 100;
const TEAMS = 20;
const PULSES_PER_GROUP_WEEK = 20;
/** Four baseline weeks and the measured one. */
const FIRST_WEEK = '2026-W10';
const WEEK = '2026-W14';
const ROUNDS = 5;
const TARGET_SECONDS = 2;

export interface AlertsBenchResult {
  organizations: number;
  teams: number;
  pulses: number;
  week: string;
  raised: number;
  /** Fresh runs (the week's alerts deleted first), seconds each, and their median. */
  runs: number[];
  medianSeconds: number;
  /** A run repeated over the same week: raises nothing. */
  repeatSeconds: number;
  targetSeconds: number;
  met: boolean;
}

function dbUrl(admin: string, name: string) {
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return u.toString();
}

const SIZES = JSON.stringify({ ORGS, TEAMS, PULSES_PER_GROUP_WEEK, FIRST_WEEK, WEEK, v: 1 });

async function prepare(adminUrl: string, log: (...a: unknown[]) => void): Promise<string> {
  const url = dbUrl(adminUrl, ALERTS_BENCH_DB);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [ALERTS_BENCH_DB])).rowCount! > 0;
  if (exists) {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const meta = await c.query(`SELECT value FROM bench_meta WHERE name = 'sizes'`).catch(() => ({ rows: [] as { value: string }[] }));
    await c.end();
    if (meta.rows[0]?.value === SIZES) {
      await admin.end();
      log('reusing', ALERTS_BENCH_DB);
      // Later migrations (the webhook outbox the engine writes to, say) apply to a reused database too.
      const db = new PgExecutor({ connectionString: url, max: 1 });
      await migrate(db).finally(() => db.close());
      return url;
    }
  }
  await admin.query(`DROP DATABASE IF EXISTS ${ALERTS_BENCH_DB}`);
  await admin.query(`CREATE DATABASE ${ALERTS_BENCH_DB}`);
  await admin.end();
  const db = new PgExecutor({ connectionString: url, max: 2 });
  await migrate(db);
  const t0 = Date.now();
  const monday = parseIsoWeek(FIRST_WEEK)!.toISOString();
  const run = (name: string, text: string, params: unknown[] = []) => db.query(sql(name, text), params);
  await run('ba.plan', `INSERT INTO plans (name, rest_api, rate_limit_per_minute) VALUES ('bench', true, 1000000000) ON CONFLICT DO NOTHING`);
  await run(
    'ba.orgs',
    `INSERT INTO organizations (id, name, plan, member_count, created_at)
     SELECT 'org_ba_' || o, 'Bench ' || o, 'bench', 500, $1::timestamptz - interval '30 days' FROM generate_series(1, $2::int) o`,
    [monday, ORGS],
  );
  await run(
    'ba.teams',
    `INSERT INTO teams (org_id, id, name, created_at)
     SELECT 'org_ba_' || o, 'team_' || t, 'Team ' || t, $1::timestamptz - interval '30 days'
       FROM generate_series(1, $2::int) o, generate_series(1, $3::int) t`,
    [monday, ORGS, TEAMS],
  );
  // Every group (team 0 = pulses without a team) sends 20 pulses a week averaging exactly 3.
  // In the measured week, groups with (o + t) % 7 = 0 dip to 1.5 (MOOD_DROP, LOW_MOOD), and
  // groups with (o + t) % 11 = 0 send 8 (PARTICIPATION_DROP).
  await run(
    'ba.pulses',
    `INSERT INTO pulses (org_id, id, level, moderation_status, subteam_id, created_at)
     SELECT 'org_ba_' || o, 'p_' || w || '_' || t || '_' || i,
            CASE WHEN w = 4 AND (o + t) % 7 = 0 THEN 1 + i % 2 ELSE 1 + (o * 31 + t * 17 + w * 13 + i * 7) % 5 END,
            'CLEAN', CASE WHEN t = 0 THEN NULL ELSE 'team_' || t END,
            $1::timestamptz + w * interval '7 days' + (i - 1) * interval '7 days' / $4::int
       FROM generate_series(1, $2::int) o, generate_series(0, $3::int) t, generate_series(0, 4) w, generate_series(1, $4::int) i
      WHERE i <= CASE WHEN w = 4 AND (o + t) % 11 = 0 THEN 8 ELSE $4::int END`,
    [monday, ORGS, TEAMS, PULSES_PER_GROUP_WEEK],
  );
  // Written around the pulse door in bulk: the rollups are computed afterwards.
  for (let o = 1; o <= ORGS; o++) await rebuildRollups(db, `org_ba_${o}`);
  await db.exec(`CREATE TABLE bench_meta (name text PRIMARY KEY, value text NOT NULL)`);
  await run('ba.meta', `INSERT INTO bench_meta VALUES ('sizes', $1)`, [SIZES]);
  await db.exec('VACUUM ANALYZE');
  await db.close();
  log(`built ${ALERTS_BENCH_DB} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return url;
}

export async function benchAlerts(adminUrl: string, log: (...a: unknown[]) => void = console.log): Promise<AlertsBenchResult> {
  const url = await prepare(adminUrl, log);
  const db = new PgExecutor({ connectionString: url, max: 10 });
  try {
    const [{ n: pulses }] = await db.query<{ n: number }>(sql('ba.count', `SELECT sum(pulse_count)::int AS n FROM pulse_totals`));
    const weeks = [parseIsoWeek(WEEK)!];
    const forget = () => db.query(sql('ba.forget', `DELETE FROM alerts WHERE week_iso = $1`), [WEEK]);
    const timed = async () => {
      const t0 = performance.now();
      const r = await runAlertEngine(db, { thresholds: DEFAULT_THRESHOLDS, weeks, clock: () => new Date() });
      return { seconds: (performance.now() - t0) / 1000, raised: r.raised.length };
    };
    await forget();
    await timed(); // warm-up: connections, prepared statements, caches
    const runs: number[] = [];
    let raised = 0;
    for (let i = 0; i < ROUNDS; i++) {
      await forget();
      const r = await timed();
      runs.push(r.seconds);
      raised = r.raised;
    }
    const repeat = await timed();
    if (repeat.raised !== 0) throw new Error(`a repeated run raised ${repeat.raised} alerts`);
    const medianSeconds = [...runs].sort((a, b) => a - b)[Math.floor(runs.length / 2)];
    const result: AlertsBenchResult = {
      organizations: ORGS,
      teams: TEAMS,
      pulses,
      week: WEEK,
      raised,
      runs,
      medianSeconds,
      repeatSeconds: repeat.seconds,
      targetSeconds: TARGET_SECONDS,
      met: medianSeconds < TARGET_SECONDS,
    };
    log(
      `alert engine: ${ORGS} organizations x ${TEAMS} teams, ${WEEK}: raised ${raised} in ${medianSeconds.toFixed(3)} s (median of ${ROUNDS}); repeated run ${repeat.seconds.toFixed(3)} s`,
    );
    return result;
  } finally {
    await db.close();
  }
}

export function alertsMarkdown(r: AlertsBenchResult): string {
  return [
    '## Alert engine',
    '',
    `One engine run over ${r.week} for ${r.organizations} organizations x ${r.teams} teams (and pulses without a team), ${r.pulses.toLocaleString('en')} pulses in 5 weeks, on PostgreSQL (database \`${ALERTS_BENCH_DB}\`).`,
    '',
    '| run | seconds | alerts raised | target | met |',
    '|---|---|---|---|---|',
    `| fresh (median of ${r.runs.length}) | ${r.medianSeconds.toFixed(3)} | ${r.raised} | < ${r.targetSeconds} s | ${r.met ? 'yes' : '**no**'} |`,
    `| repeated (nothing new) | ${r.repeatSeconds.toFixed(3)} | 0 | — | — |`,
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await benchAlerts(process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test');
  console.log(`\n${alertsMarkdown(r)}`);
}
