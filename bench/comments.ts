/**
 * The first release of a week of comments: one transaction that freezes a 1,000-pulse week of
 * 20 teams (CONTRACT.md section 5). Timed on the bench PostgreSQL through the service's own
 * domain code, on fresh weeks of a fresh organization, so each run measures a first release.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { moderatePulse } from '../src/domain/moderation.js';
import { generateOrg } from './dataset.js';
import { PgExecutor } from '../src/db/pg.js';
import { CommentReleases } from '../src/domain/comments.js';
import { loadDataset } from '../src/domain/dataset.js';
import { operatorActor } from '../src/domain/audit.js';

const WEEK = 7 * 86_400_000;

export async function benchCommentRelease(url: string, runs = 7): Promise<{ pulsesPerWeek: number; runs: number[]; medianMs: number }> {
  const db = new PgExecutor({ connectionString: url, max: 2 });
  try {
    const org = `org_bench_release_${randomBytes(4).toString('hex')}`;
    const teams = Array.from({ length: 20 }, (_, i) => `team_r${i}`);
    const firstMonday = Date.parse('2025-01-06T00:00:00.000Z');
    await loadDataset(db, {
      organizations: [
        {
          id: org,
          name: 'Release bench',
          plan: 'business',
          memberCount: 1000,
          createdAt: '2025-01-01T00:00:00.000Z',
          deletedAt: null,
          teams: teams.map((id) => ({ id, name: id, createdAt: '2025-01-01T00:00:00.000Z' })),
          pulses: Array.from({ length: runs * 1000 }, (_, i) => ({
            id: `rel_${i}`,
            level: 1 + (i % 5),
            reason: null,
            comment: i % 3 ? `comment ${i}` : null,
            moderationStatus: i % 17 ? ('CLEAN' as const) : ('FLAGGED' as const),
            subteamId: teams[i % 20],
            createdAt: new Date(firstMonday + Math.floor(i / 1000) * WEEK + (i % 1000) * 600_000).toISOString(),
          })),
        },
      ],
    });
    const releases = new CommentReleases('bench-secret-0123456789abcdef0123456789', 0);
    const times: number[] = [];
    for (let w = 0; w < runs; w++) {
      const week = new Date(firstMonday + w * WEEK).toISOString().slice(0, 10);
      const t0 = performance.now();
      await releases.ensureReleased(db, org, week, week);
      times.push(performance.now() - t0);
    }
    const sorted = [...times].sort((a, b) => a - b);
    return { pulsesPerWeek: 1000, runs: times.map((t) => Math.round(t * 10) / 10), medianMs: Math.round(sorted[Math.floor(runs / 2)] * 10) / 10 };
  } finally {
    await db.close();
  }
}

/**
 * Issue 17: GET /v1/comments and GET /v1/pulses on an organization of `pulses` pulses, the service
 * (and optionally an earlier build of it, `baselineDir`) against the floor, alternating rounds in
 * one run as bench/run.ts does; then a moderation of released pulses through moderatePulse. Runs on
 * its own database (`climate_pulse_bench_privacy`), built once per size and reused.
 */
export interface PrivacyBenchResult {
  pulses: number;
  scenarios: { scenario: string; reqPerSec: Record<string, number>; p99: Record<string, number> }[];
  moderation: { runs: number[]; medianMs: number };
}

export async function benchPrivacy(
  adminUrl: string,
  opts: { pulses: number; orgs: number; rounds: number; seconds: number; connections: number; baselineDir?: string; log: (...a: unknown[]) => void },
): Promise<PrivacyBenchResult> {
  const root = resolve(import.meta.dirname, '..');
  const name = 'climate_pulse_bench_privacy';
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const dbUrl = url.toString();
  const sizes = JSON.stringify({ pulses: opts.pulses, orgs: opts.orgs });
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount! > 0;
  let reuse = false;
  if (exists) {
    const c = new pg.Client({ connectionString: dbUrl });
    await c.connect();
    reuse = (await c.query(`SELECT value FROM bench_meta WHERE name = 'sizes'`).catch(() => ({ rows: [] as { value: string }[] }))).rows[0]?.value === sizes;
    await c.end();
  }
  if (!reuse) {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
  }
  await admin.end();
  const db = new PgExecutor({ connectionString: dbUrl, max: 2 });
  const key = 'cp_bench_main_0123456789abcdef';
  try {
    await migrate(db);
    if (!reuse) {
      opts.log(`privacy bench: generating org_bench (${opts.pulses} pulses) and ${opts.orgs} organizations of 10,000`);
      await generateOrg(db, { orgId: 'org_bench', pulses: opts.pulses, teams: 20, key });
      for (let i = 1; i <= opts.orgs; i++) await generateOrg(db, { orgId: `org_other_${i}`, pulses: 10_000, teams: 5, key: `cp_bench_other_${i}_0123456789` });
      await db.exec(`CREATE TABLE bench_meta (name text PRIMARY KEY, value text NOT NULL)`);
      await db.query({ name: '', text: `INSERT INTO bench_meta VALUES ('sizes', $1)` }, [sizes]);
      await db.exec('VACUUM ANALYZE');
    }

    const freePort = async () => {
      const srv = createServer();
      srv.listen(0, '127.0.0.1');
      await once(srv, 'listening');
      const port = (srv.address() as { port: number }).port;
      srv.close();
      return port;
    };
    const start = async (label: string, cwd: string, args: string[], env: Record<string, string>) => {
      const port = await freePort();
      const child = spawn(process.execPath, args, {
        cwd,
        env: { ...process.env, ...env, DATABASE_URL: dbUrl, DB_POOL_MAX: '10', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
        stdio: 'ignore',
      });
      const base = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 600; i++) {
        if (child.exitCode !== null) throw new Error(`${label} exited early`);
        try {
          await (await fetch(base + (label === 'floor' ? '/nope' : '/healthz'))).arrayBuffer();
          return { label, base, child };
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      child.kill('SIGKILL');
      throw new Error(`${label} did not start`);
    };
    const drive = async (base: string, path: string, seconds: number) => {
      const r = await autocannon({
        url: base,
        connections: opts.connections,
        duration: seconds,
        requests: [{ method: 'GET', path, headers: { authorization: `Bearer ${key}` } }],
      } as never);
      if (r.non2xx + r.errors > 0) throw new Error(`${base}${path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      return { reqPerSec: r.requests.average, p99: r.latency.p99 };
    };
    const procs = [
      await start('service', root, ['dist/cli/index.js', 'serve'], {}),
      await start('floor', root, ['bench/floor/server.mjs'], { FLOOR_ORG: 'org_bench' }),
      ...(opts.baselineDir ? [await start('baseline', opts.baselineDir, ['dist/cli/index.js', 'serve'], {})] : []),
    ];
    const scenarios: PrivacyBenchResult['scenarios'] = [];
    try {
      for (const path of ['/v1/pulses', '/v1/comments']) {
        // The baseline cannot answer GET /comments on this schema (its release tables are gone).
        const run = procs.filter((p) => !(p.label === 'baseline' && path === '/v1/comments'));
        // Warm-up: JIT, prepared statements, caches (a fresh process answers several times slower for seconds).
        for (const p of run) await drive(p.base, path, 5);
        // The warm-up released the weeks of the default range; autovacuum would analyze the new rows in time.
        await db.exec('ANALYZE comment_release_members; ANALYZE comment_cells; ANALYZE comment_frozen_groups');
        const per: Record<string, { reqPerSec: number; p99: number }[]> = {};
        for (let r = 0; r < opts.rounds; r++) for (const p of run) (per[p.label] ??= []).push(await drive(p.base, path, opts.seconds));
        const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
        const row = {
          scenario: `GET ${path}`,
          reqPerSec: Object.fromEntries(Object.entries(per).map(([k, v]) => [k, Math.round(med(v.map((m) => m.reqPerSec)))])),
          p99: Object.fromEntries(Object.entries(per).map(([k, v]) => [k, med(v.map((m) => m.p99))])),
        };
        opts.log('privacy bench', JSON.stringify(row));
        scenarios.push(row);
      }
    } finally {
      for (const p of procs) p.child.kill('SIGTERM');
    }

    // A moderation of a released pulse: weeks of the default range are released by now.
    const released = await db.query<{ pulse_id: string }>(
      { name: '', text: `SELECT pulse_id FROM comment_release_members WHERE org_id = 'org_bench' AND cell IS NOT NULL ORDER BY pulse_id LIMIT 41` },
      [],
    );
    const runs: number[] = [];
    for (const [i, r] of released.entries()) {
      const t0 = performance.now();
      await moderatePulse(db, 'org_bench', r.pulse_id, 'FLAGGED', operatorActor(), new Date());
      runs.push(performance.now() - t0);
      if (i % 2 === 0) await moderatePulse(db, 'org_bench', r.pulse_id, 'CLEAN', operatorActor(), new Date());
    }
    for (const r of released) await moderatePulse(db, 'org_bench', r.pulse_id, 'CLEAN', operatorActor(), new Date());
    const sorted = [...runs].sort((a, b) => a - b);
    const moderation = { runs: runs.map((x) => Math.round(x * 10) / 10), medianMs: Math.round(sorted[Math.floor(sorted.length / 2)] * 10) / 10 };
    opts.log('privacy bench: moderation of a released pulse', JSON.stringify(moderation));
    return { pulses: opts.pulses, scenarios, moderation };
  } finally {
    await db.close();
  }
}

/** GET /v1/comments and GET /v1/pulses first page in bench/results/latest.md before issue 17 (run of 2026-11-22): service and floor req/s. */
const BEFORE = { '/v1/comments': { service: 4214, floor: 295 }, '/v1/pulses': { service: 3904, floor: 3256 } } as const;

export function privacyMarkdown(r: PrivacyBenchResult & { ranAt: string }): string {
  const lines = [
    '# Comments privacy bench (issue 17)',
    '',
    `Run ${r.ranAt}, \`npm run bench -- --only privacy\`, on the shared 2-core machine (figures are noisy; compare the ratios to the floor of the same run). Organization of ${r.pulses.toLocaleString('en')} pulses in 20 teams.`,
    '',
    '| scenario | service req/s | floor req/s | baseline req/s | service/floor | before: service/floor (latest.md) | now / before | service/baseline |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const s of r.scenarios) {
    const path = s.scenario.slice(4) as keyof typeof BEFORE;
    const ratio = s.reqPerSec.service / s.reqPerSec.floor;
    const before = BEFORE[path].service / BEFORE[path].floor;
    const base = s.reqPerSec.baseline;
    lines.push(
      `| ${s.scenario} | ${s.reqPerSec.service} | ${s.reqPerSec.floor} | ${base ?? '—'} | ${ratio.toFixed(2)}x | ${before.toFixed(2)}x | ${(ratio / before).toFixed(2)}x | ${base ? `${(s.reqPerSec.service / base).toFixed(2)}x` : '—'} |`,
    );
  }
  lines.push(
    '',
    `Moderation of a released pulse (moderatePulse, PostgreSQL, one transaction): median ${r.moderation.medianMs} ms over ${r.moderation.runs.length} (target < 20 ms).`,
    '',
  );
  return lines.join('\n');
}
