/**
 * `npm run bench`: the service against the floor (bare node:http + pg, plainest SQL), on
 * the same PostgreSQL, in one run, alternating rounds. Writes bench/results/latest.json and
 * bench/results/latest.md. Not a test: it measures, it asserts nothing.
 */
import { spawn, spawnSync, execFileSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { PgExecutor } from '../src/db/pg.js';
import { PGLITE_SETTINGS, PgliteExecutor } from '../src/db/pglite.js';
import { alertsMarkdown, benchAlerts, type AlertsBenchResult } from './alerts.js';
import { generateOrg } from './dataset.js';
import { benchCommentRelease } from './comments.js';
import { benchIngest, ingestMarkdown, type IngestBenchResult } from './ingest.js';
import { importFiles } from './import-files.js';
import { benchConsole, consoleMarkdown, type ConsoleRow } from './console.js';
import { benchCheckin, checkinMarkdown, type CheckinBenchResult } from './checkin.js';
import { benchHrConsole, hrConsoleMarkdown } from './hr-console.js';
import { benchScim, scimMarkdown } from './scim.js';
import { onlySignInFlood } from './sign-in-flood.js';

const ROOT = resolve(import.meta.dirname, '..');
const { values: flags } = parseArgs({
  options: {
    'database-url': { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test' },
    pulses: { type: 'string', default: '1000000' },
    teams: { type: 'string', default: '20' },
    orgs: { type: 'string', default: '99' },
    'org-pulses': { type: 'string', default: '10000' },
    curve: { type: 'string', default: '10000,100000,1000000,10000000' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    'pglite-pulses': { type: 'string', default: '100000' },
    'import-rows': { type: 'string', default: '1000000' },
    only: { type: 'string' },
    rebuild: { type: 'boolean', default: false },
    'prepare-only': { type: 'boolean', default: false },
    // Rewrites latest.md from latest.json, measuring nothing.
    'render-only': { type: 'boolean', default: false },
    'skip-curve': { type: 'boolean', default: false },
    'skip-pglite': { type: 'boolean', default: false },
    'skip-import': { type: 'boolean', default: false },
    'skip-alerts': { type: 'boolean', default: false },
    'skip-ingest': { type: 'boolean', default: false },
    'skip-checkin': { type: 'boolean', default: false },
    // The check-in round (--only checkin): respondents, and the concurrency of its steps.
    respondents: { type: 'string', default: '10000' },
    'checkin-concurrency': { type: 'string', default: '50' },
    // SCIM provisioning (--only scim, issue 56): users, groups, concurrency.
    'scim-users': { type: 'string', default: '10000' },
    'scim-groups': { type: 'string', default: '200' },
    'scim-concurrency': { type: 'string', default: '8' },
    // Skips the HTTP scenarios and the curve; skipped sections keep their figures from the last latest.json.
    'skip-http': { type: 'boolean', default: false },
  },
});
const num = (k: keyof typeof flags) => Number(flags[k]);

const MAIN_ORG = 'org_bench';
const MAIN_KEY = 'cp_bench_main_0123456789abcdef';
const DAY = 86_400_000;
const log = (...a: unknown[]) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}]`, ...a);

async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  return port;
}

function dbUrl(admin: string, name: string) {
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A bench database built once per set of sizes and reused by later runs. */
async function prepareDatabase(): Promise<string> {
  const sizes = { pulses: num('pulses'), teams: num('teams'), orgs: num('orgs'), orgPulses: num('org-pulses'), curve: flags.curve };
  const name = 'climate_pulse_bench';
  const admin = new pg.Client({ connectionString: flags['database-url'] });
  await admin.connect();
  const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount! > 0;
  const url = dbUrl(flags['database-url']!, name);
  if (exists && !flags.rebuild) {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const meta = await c.query(`SELECT value FROM bench_meta WHERE name = 'sizes'`).catch(() => ({ rows: [] as { value: string }[] }));
    await c.end();
    if (meta.rows[0]?.value === JSON.stringify(sizes)) {
      log('reusing bench database', name, sizes);
      await admin.end();
      return url;
    }
  }
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const db = new PgExecutor({ connectionString: url, max: 2 });
  await migrate(db);
  const t0 = Date.now();
  const now = new Date();
  log(`generating ${MAIN_ORG}: ${sizes.pulses} pulses in ${sizes.teams} teams`);
  await generateOrg(db, { orgId: MAIN_ORG, pulses: sizes.pulses, teams: sizes.teams, key: MAIN_KEY, now });
  log(`generating ${sizes.orgs} organizations of ${sizes.orgPulses} pulses`);
  for (let i = 1; i <= sizes.orgs; i++) {
    await generateOrg(db, { orgId: `org_other_${i}`, pulses: sizes.orgPulses, teams: 5, key: `cp_bench_other_${i}_0123456789`, now });
  }
  for (const size of curveSizes()) {
    if (size === sizes.pulses) continue;
    log(`generating curve organization of ${size} pulses`);
    await generateOrg(db, { orgId: `org_curve_${size}`, pulses: size, teams: 20, key: `cp_bench_curve_${size}_0123456789`, now });
  }
  await db.exec(`CREATE TABLE bench_meta (name text PRIMARY KEY, value text NOT NULL)`);
  await db.query({ name: '', text: `INSERT INTO bench_meta VALUES ('sizes', $1)` }, [JSON.stringify(sizes)]);
  await db.exec('VACUUM ANALYZE');
  await db.close();
  log(`dataset built in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return url;
}

const curveSizes = () =>
  flags['skip-curve']
    ? []
    : flags
        .curve!.split(',')
        .map(Number)
        .filter((n) => n > 0);
const curveKey = (size: number) => (size === num('pulses') ? MAIN_KEY : `cp_bench_curve_${size}_0123456789`);

interface Proc {
  child: ChildProcess;
  url: string;
  peakRssMb(): number;
  stop(): Promise<void>;
}

async function startProcess(label: string, args: string[], env: Record<string, string>, cwd = ROOT): Promise<Proc> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logFile = createWriteStream(join(tmpdir(), `bench-${label}.log`));
  child.stdout!.pipe(logFile);
  child.stderr!.pipe(logFile);
  const url = `http://127.0.0.1:${port}`;
  let up = false;
  for (let i = 0; i < 600 && !up; i++) {
    if (child.exitCode !== null) throw new Error(`${label} exited early; see ${join(tmpdir(), `bench-${label}.log`)}`);
    try {
      const r = await fetch(url + (label.startsWith('floor') ? '/nope' : '/healthz'));
      await r.arrayBuffer();
      up = true;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  if (!up) {
    child.kill('SIGKILL');
    throw new Error(`${label} did not answer within 60 s; see ${join(tmpdir(), `bench-${label}.log`)}`);
  }
  return {
    child,
    url,
    peakRssMb() {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
        return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
      } catch {
        return 0;
      }
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

interface Scenario {
  name: string;
  path: string;
  method?: 'GET' | 'POST';
  body?: () => string;
  /** Extra request headers (e.g. Accept-Encoding). */
  headers?: Record<string, string>;
  /** Which targets apply. */
  target: { throughput?: number; p99?: number };
}

interface Measure {
  reqPerSec: number;
  p50: number;
  p99: number;
  errors: number;
}

async function drive(baseUrl: string, s: Scenario, key: string, seconds: number, connections: number): Promise<Measure> {
  let n = 0;
  const prefix = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const result = await autocannon({
    url: baseUrl,
    connections,
    duration: seconds,
    requests: [
      {
        method: s.method ?? 'GET',
        path: s.path,
        headers: {
          authorization: `Bearer ${key}`,
          ...(s.method === 'POST' ? { 'content-type': 'application/json' } : {}),
          ...s.headers,
        },
        setupRequest: (req: Record<string, unknown>) => {
          if (s.method !== 'POST') return req;
          n++;
          return {
            ...req,
            body: s.body!(),
            headers: { ...(req.headers as object), 'idempotency-key': `bench-${prefix}-${n}` },
          };
        },
      },
    ],
  } as unknown as autocannon.Options);
  return {
    reqPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

/**
 * Waits until the database runs no statement but this one: a round's slow requests (the floor's
 * year of raw pulses takes seconds) go on in the database after autocannon stops, and took both
 * cores from the next round's process (GET /v1/stats/daily measured 64 req/s in its rounds and
 * 417 alone). At most 60 s.
 */
async function settle(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      const { rows } = await c.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()`,
      );
      if (rows[0].n === 0) return;
    }
  } finally {
    await c.end();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sumUp = (ms: Measure[]): Measure => ({
  reqPerSec: median(ms.map((m) => m.reqPerSec)),
  p50: median(ms.map((m) => m.p50)),
  p99: median(ms.map((m) => m.p99)),
  errors: ms.reduce((a, m) => a + m.errors, 0),
});

/** Sequential requests timed one by one: sub-millisecond resolution, no queueing. */
async function probeLatency(url: string, key: string, n: number): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < n + 50; i++) {
    const t = performance.now();
    const r = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`${url}: status ${r.status}`);
    if (i >= 50) times.push(performance.now() - t); // the first 50 warm up
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(n * 0.5)], p99: times[Math.floor(n * 0.99)] };
}

async function deepCursor(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const { rows } = await c.query(
    `SELECT created_at, id FROM pulses WHERE org_id = $1 AND created_at < now() - interval '25 days'
      ORDER BY created_at DESC, id DESC LIMIT 1`,
    [MAIN_ORG],
  );
  await c.end();
  return rows[0] ? `${(rows[0].created_at as Date).toISOString()}|${rows[0].id}` : '';
}

async function benchHttp(url: string, results: Record<string, unknown>) {
  const cursor = encodeURIComponent(await deepCursor(url));
  const daily = encodeURIComponent(new Date(Date.now() - 364 * DAY).toISOString());
  const scenarios: Scenario[] = [
    { name: 'GET /v1/pulses first page', path: '/v1/pulses', target: { throughput: 0.9, p99: 1.5 } },
    // The floor ignores Accept-Encoding; compare this row's req/s with the plain first page (issue 21: at least 0.9x).
    { name: 'GET /v1/pulses first page, gzip', path: '/v1/pulses', headers: { 'accept-encoding': 'gzip' }, target: {} },
    { name: 'GET /v1/pulses deep cursor page', path: `/v1/pulses?cursor=${cursor}`, target: { throughput: 0.9, p99: 1.5 } },
    { name: 'GET /v1/stats', path: '/v1/stats', target: { throughput: 20 } },
    { name: 'GET /v1/stats/daily (365 days)', path: `/v1/stats/daily?from=${daily}`, target: { throughput: 20 } },
    { name: 'GET /v1/comments', path: '/v1/comments', target: {} },
    {
      name: 'POST /v1/actions',
      path: '/v1/actions',
      method: 'POST',
      body: () => JSON.stringify({ title: 'Bench action', description: 'created by the benchmark' }),
      target: { throughput: 0.7 },
    },
  ].filter((s) => !flags.only || s.name.includes(flags.only)) as Scenario[];

  // The alert engine's first run falls at a random moment of the first minute and took the
  // database from whichever scenario ran then (the engine has its own section below).
  const env = { DATABASE_URL: url, DB_POOL_MAX: '10', ALERTS_INTERVAL_MINUTES: '0' };
  const service = await startProcess('service', ['dist/cli/index.js', 'serve'], env);
  const floor = await startProcess('floor', ['bench/floor/server.mjs'], { ...env, FLOOR_ORG: MAIN_ORG });
  // An earlier build (a checkout with its own dist/, BENCH_BASELINE_DIR) measured in the same rounds:
  // "as fast as before" compared on the same machine in the same minutes, not against another day's run.
  const baselineDir = process.env.BENCH_BASELINE_DIR;
  const baseline = baselineDir ? await startProcess('baseline', ['dist/cli/index.js', 'serve'], env, baselineDir) : undefined;
  if (baseline) results.baseline = { dir: baselineDir, commit: execFileSync('git', ['-C', baselineDir!, 'rev-parse', '--short', 'HEAD']).toString().trim() };
  const rounds = num('rounds');
  const seconds = num('duration');
  const connections = num('connections');
  const table: Record<string, unknown>[] = [];
  try {
    for (const s of scenarios) {
      await drive(service.url, s, MAIN_KEY, 1, connections); // warm-up: JIT, prepared statements, caches
      await drive(floor.url, s, MAIN_KEY, 1, connections);
      // The baseline takes part only where it answers this scenario (an older schema may not serve it).
      const withBaseline = baseline && (await drive(baseline.url, s, MAIN_KEY, 1, connections)).errors === 0 ? baseline : undefined;
      const svc: Measure[] = [];
      const flr: Measure[] = [];
      const bsl: Measure[] = [];
      await settle(url);
      for (let r = 0; r < rounds; r++) {
        svc.push(await drive(service.url, s, MAIN_KEY, seconds, connections));
        await settle(url);
        flr.push(await drive(floor.url, s, MAIN_KEY, seconds, connections));
        await settle(url);
        if (withBaseline) {
          bsl.push(await drive(withBaseline.url, s, MAIN_KEY, seconds, connections));
          await settle(url);
        }
      }
      const a = sumUp(svc);
      const b = sumUp(flr);
      const base = bsl.length ? sumUp(bsl) : undefined;
      const row = {
        scenario: s.name,
        service: a,
        floor: b,
        throughputRatio: a.reqPerSec / b.reqPerSec,
        p99Ratio: a.p99 / Math.max(b.p99, 1),
        ...(base ? { baseline: base, baselineRatio: a.reqPerSec / base.reqPerSec, baselineFloorRatio: base.reqPerSec / b.reqPerSec } : {}),
        targets: s.target,
        met:
          a.errors === 0 &&
          (s.target.throughput === undefined || a.reqPerSec / b.reqPerSec >= s.target.throughput) &&
          (s.target.p99 === undefined || a.p99 / Math.max(b.p99, 1) <= s.target.p99),
      };
      table.push(row);
      log(
        `${s.name}: service ${a.reqPerSec.toFixed(0)} req/s p50 ${a.p50} p99 ${a.p99} | floor ${b.reqPerSec.toFixed(0)} req/s p50 ${b.p50} p99 ${b.p99} | ratio ${row.throughputRatio.toFixed(2)}x errors ${a.errors}/${b.errors}${base ? ` | baseline ${base.reqPerSec.toFixed(0)} req/s (${(b.reqPerSec ? base.reqPerSec / b.reqPerSec : 0).toFixed(2)}x of the floor), service/baseline ${(a.reqPerSec / base.reqPerSec).toFixed(2)}x` : ''}`,
      );
    }
    results.scenarios = table;
    if (!flags.only || 'console'.includes(flags.only)) {
      await settle(url);
      results.console = await benchConsole(service.url, url, MAIN_ORG, { rounds, seconds, connections, log });
    }
    results.servicePeakRssMb = service.peakRssMb();
    results.floorPeakRssMb = floor.peakRssMb();

    const curve: { pulses: number; p50: number; p99: number }[] = [];
    for (const size of curveSizes()) {
      const m = await probeLatency(`${service.url}/v1/stats`, curveKey(size), 400);
      curve.push({ pulses: size, ...m });
      log(`stats at ${size} pulses: p50 ${m.p50.toFixed(2)} ms p99 ${m.p99.toFixed(2)} ms (sequential)`);
    }
    results.statsCurve = curve;
  } finally {
    await service.stop();
    await floor.stop();
    await baseline?.stop();
  }
}

async function main() {
  if (flags.only === 'alerts') return onlyAlerts();
  if (flags.only === 'privacy') return onlyPrivacy();
  if (flags.only === 'ingest') return onlyIngest();
  if (flags.only === 'checkin') return onlyCheckin();
  if (flags.only === 'hr-console') return onlyHrConsole();
  if (flags.only === 'scim') return onlyScim();
  if (flags.only === 'sign-in-flood') return onlySignInFlood(flags['database-url']!, log);
  if (flags['render-only']) {
    const r = JSON.parse(readFileSync(join(ROOT, 'bench/results/latest.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(ROOT, 'bench/results/latest.md'), renderMarkdown(r));
    return;
  }
  const results: Record<string, unknown> = { startedAt: new Date().toISOString(), flags, machine: { cpus: 2 } };
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  const url = await prepareDatabase();
  if (flags['prepare-only']) return;
  const latestJson = join(ROOT, 'bench/results/latest.json');
  const previous = (existsSync(latestJson) ? JSON.parse(readFileSync(latestJson, 'utf8')) : {}) as Record<string, unknown>;
  if (flags['skip-http']) {
    for (const k of ['scenarios', 'console', 'servicePeakRssMb', 'floorPeakRssMb', 'statsCurve', 'baseline']) results[k] = previous[k];
    results.httpFrom = previous.httpFrom ?? previous.startedAt;
  } else {
    await benchHttp(url, results);
  }
  results.pglite = flags['skip-pglite'] ? previous.pglite : await benchPglite();
  results.import = flags['skip-import'] ? previous.import : await benchImport(url);
  if (!flags.only || flags.only.includes('release')) {
    results.commentRelease = await benchCommentRelease(url);
    log('first release of a 1,000-pulse week', JSON.stringify(results.commentRelease));
  }
  results.alerts = flags['skip-alerts'] ? previous.alerts : await benchAlerts(flags['database-url']!, log);
  results.ingest = flags['skip-ingest'] ? previous.ingest : await benchIngest(flags['database-url']!, log, num('import-rows'));
  results.checkin = flags['skip-checkin'] ? previous.checkin : await benchCheckin(flags['database-url']!, checkinOptions());

  results.finishedAt = new Date().toISOString();
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench/results/latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  const md = renderMarkdown(results);
  writeFileSync(join(ROOT, 'bench/results/latest.md'), md);
  console.log(`\n${md}`);
}

/** `npm start` on an empty DATA_DIR, then again on the directory it made: time to answer, peak and idle RSS. */
async function benchEmbeddedStart() {
  const dir = join(ROOT, '.test-tmp', 'bench-pglite-start');
  const out: Record<string, unknown> = {};
  rmSync(dir, { recursive: true, force: true });
  for (const phase of ['emptyDir', 'existingDir'] as const) {
    const t = Date.now();
    const proc = await startProcess(`pglite-start-${phase}`, ['dist/cli/index.js', 'serve', '--demo-if-empty'], { DATA_DIR: dir, DATABASE_URL: '' });
    const secondsToAnswer = (Date.now() - t) / 1000;
    const peakAtStart = proc.peakRssMb();
    await new Promise((r) => setTimeout(r, 10_000)); // idle: the demo is made, start-up work is done
    let idleRssMb = 0;
    try {
      idleRssMb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${proc.child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    } catch {
      /* gone */
    }
    const peakRssMb = Math.max(peakAtStart, proc.peakRssMb());
    out[phase] = { secondsToAnswer, peakRssMb, idleRssMb };
    await proc.stop();
    log(`PGlite npm start (${phase}): answers after ${secondsToAnswer.toFixed(1)} s, peak RSS ${peakRssMb.toFixed(0)} MB, idle ${idleRssMb.toFixed(0)} MB`);
  }
  rmSync(dir, { recursive: true, force: true });
  return out;
}

async function benchPglite() {
  const start = await benchEmbeddedStart();
  const dir = join(ROOT, '.test-tmp', 'bench-pglite');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const db = await PgliteExecutor.open(dir);
  await migrate(db);
  const n = num('pglite-pulses');
  log(`PGlite: generating ${n} pulses`);
  await generateOrg(db, { orgId: MAIN_ORG, pulses: n, teams: 20, key: MAIN_KEY, days: 365 });
  await db.close();
  const proc = await startProcess('pglite', ['dist/cli/index.js', 'serve'], { DATA_DIR: dir, DATABASE_URL: '' });
  const out: Record<string, unknown>[] = [];
  try {
    for (const [name, path] of [
      ['GET /v1/pulses first page', '/v1/pulses'],
      ['GET /v1/stats', '/v1/stats'],
      ['GET /v1/stats/daily (90 days)', '/v1/stats/daily'],
      ['GET /v1/comments', '/v1/comments'],
    ]) {
      await drive(proc.url, { name, path, target: {} }, MAIN_KEY, 1, 4);
      const m = await drive(proc.url, { name, path, target: {} }, MAIN_KEY, num('duration'), 4);
      out.push({ scenario: name, ...m });
      log(`PGlite ${name}: ${m.reqPerSec.toFixed(0)} req/s p50 ${m.p50} p99 ${m.p99} errors ${m.errors}`);
    }
    return { ranAt: new Date().toISOString(), settings: PGLITE_SETTINGS, start, pulses: n, scenarios: out, peakRssMb: proc.peakRssMb() };
  } finally {
    await proc.stop();
  }
}

async function benchImport(url: string) {
  const rows = num('import-rows');
  const { ndjson, csv } = (await importFiles(rows, log)).sorted;
  // Pulses are append-only, so every run imports into a fresh organization.
  const suffix = Date.now().toString(36);
  const cliOrg = `org_import_cli_${suffix}`;
  const copyOrg = `org_import_copy_${suffix}`; // names the rows COPYed into the bench's own tables
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`INSERT INTO organizations (id, name, plan, created_at) VALUES ($1, $1, 'bench', now())`, [cliOrg]);
  await c.query(`INSERT INTO teams (org_id, id, name, created_at) SELECT $1, 'team_' || g, 'Team ' || g, now() FROM generate_series(1, 20) g`, [cliOrg]);
  await c.end();
  const out: Record<string, unknown> = { ranAt: new Date().toISOString(), rows };
  const t0 = Date.now();
  // GNU time reports the importer's peak RSS on stderr.
  const run = spawnSync('/usr/bin/time', ['-f', 'PEAK_RSS_KB=%M', process.execPath, 'dist/cli/index.js', 'import-pulses', '--org', cliOrg, ndjson], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' },
    maxBuffer: 64 * 1024 * 1024,
  });
  const seconds = (Date.now() - t0) / 1000;
  const stderr = run.stderr?.toString() ?? '';
  const peak = /PEAK_RSS_KB=(\d+)/.exec(stderr);
  const summaryLine = run.status === 0 ? run.stdout.toString().trim().split('\n').pop()! : '';
  const summary = summaryLine ? (JSON.parse(summaryLine) as { phases?: Record<string, number> }) : undefined;
  out.cli = {
    ok: run.status === 0,
    seconds,
    rowsPerSec: run.status === 0 ? rows / seconds : undefined,
    peakRssMb: peak ? Number(peak[1]) / 1024 : undefined,
    phases: summary?.phases,
    output: (run.status === 0 ? run.stdout.toString() : stderr).trim().split('\n').slice(-3).join('\n'),
  };
  const psqlCopy = (table: string, org: string) => {
    const t = Date.now();
    const copy = `-c "\\copy ${table} (org_id, id, level, reason, comment, moderation_status, subteam_id, created_at) FROM STDIN WITH (FORMAT csv)"`;
    execFileSync('bash', ['-c', `sed 's/^ORG,/${org},/' ${csv} | psql "${url}" -q -v ON_ERROR_STOP=1 ${copy}`], { stdio: 'inherit' });
    return (Date.now() - t) / 1000;
  };

  // The floor (issue 14): a plain COPY of the same rows into a table with pulses' primary key,
  // the (org_id, created_at, id) index built afterwards. Then the same COPY into copies of pulses
  // with more of its machinery each, to show where the importer's time goes. Every pulse write
  // goes through the door (src/db/pulse-writes.ts), so none of these COPYs touches pulses itself.
  const c2 = new pg.Client({ connectionString: url });
  await c2.connect();
  const sqlTimed = async (text: string) => {
    const t = Date.now();
    await c2.query(text);
    return (Date.now() - t) / 1000;
  };
  const S = 'bench_import_phases';
  await c2.query(`DROP SCHEMA IF EXISTS ${S} CASCADE`);
  await c2.query(`CREATE SCHEMA ${S}`);
  await c2.query(`CREATE TABLE ${S}.floor (org_id text NOT NULL, id text NOT NULL, level smallint NOT NULL, reason text, comment text,
    moderation_status text NOT NULL, subteam_id text, created_at timestamptz NOT NULL, PRIMARY KEY (org_id, id))`);
  await c2.query(`CREATE TABLE ${S}.indexed (LIKE public.pulses INCLUDING ALL)`);
  // The two foreign keys pulses had until migration 0007, checked row by row: measured again.
  await c2.query(`CREATE TABLE ${S}.with_fks (LIKE public.pulses INCLUDING ALL,
    FOREIGN KEY (org_id) REFERENCES public.organizations (id), FOREIGN KEY (org_id, subteam_id) REFERENCES public.teams (org_id, id))`);
  const floorCopy = psqlCopy(`${S}.floor`, copyOrg);
  const floorIndex = await sqlTimed(`CREATE INDEX ON ${S}.floor (org_id, created_at, id)`);
  const indexed = psqlCopy(`${S}.indexed`, copyOrg);
  // Referencing the importer's organization and teams, which exist.
  const withFks = psqlCopy(`${S}.with_fks`, cliOrg);
  await c2.query(`DROP SCHEMA ${S} CASCADE`);
  await c2.end();
  const floorSeconds = floorCopy + floorIndex;
  out.floor = { seconds: floorSeconds, copySeconds: floorCopy, indexSeconds: floorIndex, rowsPerSec: rows / floorSeconds };
  out.indexedCopy = { seconds: indexed, rowsPerSec: rows / indexed };
  const phases = summary?.phases;
  out.breakdown = {
    // Each a difference between two COPYs of the same rows, measured one after another in this run.
    copyWithPrimaryKey: floorCopy,
    secondaryIndexes: indexed - floorCopy,
    perRowForeignKeyChecks: withFks - indexed,
    // From the importer itself: node time spent reading, parsing and validating (overlaps the
    // database's work: each batch is written while the next is read), waiting for the previous
    // batch (rows in time order inserted, indexed and folded; the others staged), the end (the
    // last batch, then the staged rows moved in time order: none in this time-ordered file), the commit.
    importerParseValidate: phases?.parseValidate,
    importerStreamWait: phases?.streamWait,
    importerLastBatch: phases?.finish,
    importerCommit: phases?.commit,
  };
  const cliRate = (out.cli as { rowsPerSec?: number }).rowsPerSec;
  if (cliRate) {
    out.ratio = cliRate / (rows / indexed);
    out.floorRatio = cliRate / (rows / floorSeconds);
  }
  log('import', JSON.stringify(out));
  return out;
}

/** GET /v1/comments req/s in the run before comments were released by cells (bench/results of 2026-11-22). */
const COMMENTS_BEFORE_CELLS = 3439;

function renderMarkdown(r: Record<string, unknown>): string {
  const lines = [
    `# Benchmark results`,
    ``,
    `Run ${r.startedAt}${r.httpFrom ? ` (HTTP scenarios and the curve: from the run of ${r.httpFrom})` : ''} on this 2-core machine; service and floor alternate (the service without its alert schedule), ${flags.rounds} rounds of ${flags.duration} s, ${flags.connections} connections, medians shown. Dataset: ${flags.pulses} pulses in ${flags.teams} teams for the measured organization, plus ${flags.orgs} organizations of ${flags['org-pulses']}.`,
    ``,
    `| scenario | service req/s | p50 ms | p99 ms | non-2xx | floor req/s | p50 ms | p99 ms | service/floor | target | met |`,
    `|---|---|---|---|---|---|---|---|---|---|---|`,
  ];
  for (const row of (r.scenarios ?? []) as {
    scenario: string;
    service: Measure;
    floor: Measure;
    throughputRatio: number;
    p99Ratio: number;
    targets: Scenario['target'];
    met: boolean;
  }[]) {
    const target =
      [row.targets.throughput !== undefined ? `>= ${row.targets.throughput}x req/s` : '', row.targets.p99 !== undefined ? `p99 <= ${row.targets.p99}x` : '']
        .filter(Boolean)
        .join(', ') || '—';
    // A floor that finished no request within a round (a full scan of a year) has no ratio, only a bound.
    const ratio =
      row.floor.reqPerSec > 0
        ? `${row.throughputRatio.toFixed(2)}x (p99 ${row.p99Ratio.toFixed(2)}x)`
        : `over ${(row.service.reqPerSec * Number(flags.duration)).toFixed(0)}x (the floor finished no request in ${flags.duration} s)`;
    lines.push(
      `| ${row.scenario} | ${row.service.reqPerSec.toFixed(0)} | ${row.service.p50} | ${row.service.p99} | ${row.service.errors} | ${row.floor.reqPerSec.toFixed(0)} | ${row.floor.reqPerSec > 0 ? row.floor.p50 : '—'} | ${row.floor.reqPerSec > 0 ? row.floor.p99 : '—'} | ${ratio} | ${target} | ${row.met ? 'yes' : '**no**'} |`,
    );
  }
  const based = ((r.scenarios ?? []) as { scenario: string; baseline?: Measure; baselineRatio?: number; baselineFloorRatio?: number }[]).filter(
    (x) => x.baseline,
  );
  const bl = r.baseline as { commit: string } | undefined;
  if (bl && based.length) {
    lines.push(
      '',
      `The same rounds against an earlier build (commit ${bl.commit}, BENCH_BASELINE_DIR), where it answers the scenario with its own code on this schema:`,
      '',
      '| scenario | baseline req/s | baseline/floor | service/baseline |',
      '|---|---|---|---|',
      ...based.map(
        (x) =>
          `| ${x.scenario} | ${x.baseline!.reqPerSec.toFixed(0)} | ${Number.isFinite(x.baselineFloorRatio) ? `${x.baselineFloorRatio!.toFixed(2)}x` : '—'} | ${x.baselineRatio!.toFixed(2)}x |`,
      ),
    );
    if (based.some((x) => x.scenario.includes('gzip'))) {
      lines.push(
        '',
        `A build from before issue 21 (as ${bl.commit}) does not compress: its gzip row is the uncompressed answer, so that ratio sets compression against none; issue 21 compares the gzip row with the plain first page of the same service.`,
      );
    }
  }
  if (r.console) {
    const daily = ((r.scenarios ?? []) as { scenario: string; floor: Measure }[]).find((x) => x.scenario === 'GET /v1/stats/daily (365 days)');
    lines.push(...consoleMarkdown(r.console as ConsoleRow[], daily?.floor.p99));
  }
  lines.push(
    '',
    `Peak RSS under load: service ${Number(r.servicePeakRssMb ?? 0).toFixed(0)} MB (target < 250 MB), floor ${Number(r.floorPeakRssMb ?? 0).toFixed(0)} MB.`,
  );
  const comments = ((r.scenarios ?? []) as { scenario: string; service: Measure }[]).find((x) => x.scenario === 'GET /v1/comments');
  if (comments) {
    lines.push(
      '',
      `GET /v1/comments (default range, released cells): ${comments.service.reqPerSec.toFixed(0)} req/s, ${(comments.service.reqPerSec / COMMENTS_BEFORE_CELLS).toFixed(2)}x the ${COMMENTS_BEFORE_CELLS} req/s measured before the cell rule (target >= 0.9x).`,
    );
  }
  const release = r.commentRelease as { pulsesPerWeek: number; runs: number[]; medianMs: number } | undefined;
  if (release) {
    lines.push(
      '',
      `First release of a ${release.pulsesPerWeek.toLocaleString('en')}-pulse week (20 teams, one transaction, PostgreSQL): median ${release.medianMs} ms over ${release.runs.length} weeks (${release.runs.join(', ')} ms); target < 50 ms.`,
    );
  }
  const curve = (r.statsCurve ?? []) as { pulses: number; p50: number; p99: number }[];
  if (curve.length) {
    lines.push('', '## GET /v1/stats latency by organization size (sequential requests)', '', '| pulses | p50 ms | p99 ms |', '|---|---|---|');
    for (const c of curve) lines.push(`| ${c.pulses.toLocaleString('en')} | ${c.p50.toFixed(2)} | ${c.p99.toFixed(2)} |`);
    const first = curve[0];
    const last = curve[curve.length - 1];
    lines.push(
      '',
      `Latency at ${last.pulses.toLocaleString('en')} / at ${first.pulses.toLocaleString('en')}: ${(last.p50 / first.p50).toFixed(2)}x (target <= 1.5x).`,
    );
  }
  type Start = { secondsToAnswer: number; peakRssMb: number; idleRssMb: number };
  const pgl = r.pglite as
    | {
        ranAt?: string;
        settings?: Record<string, string>;
        start?: { emptyDir: Start; existingDir: Start };
        pulses: number;
        scenarios: (Measure & { scenario: string })[];
        peakRssMb: number;
      }
    | undefined;
  if (pgl) {
    lines.push('', `## Embedded PGlite mode${pgl.ranAt ? ` (section run ${pgl.ranAt})` : ''}`);
    if (pgl.settings)
      lines.push(
        '',
        `Settings: ${Object.entries(pgl.settings)
          .map(([k, v]) => `${k} = ${v}`)
          .join(', ')}.`,
      );
    if (pgl.start) {
      lines.push(
        '',
        '`npm start` (serve --demo-if-empty):',
        '',
        '| DATA_DIR | answers after s | peak RSS MB | idle RSS MB (10 s after) | target |',
        '|---|---|---|---|---|',
      );
      const met = (x: Start) => x.peakRssMb <= 400 && x.idleRssMb <= 300;
      lines.push(
        `| empty (new user) | ${pgl.start.emptyDir.secondsToAnswer.toFixed(1)} | ${pgl.start.emptyDir.peakRssMb.toFixed(0)} | ${pgl.start.emptyDir.idleRssMb.toFixed(0)} | peak <= 400, idle <= 300: ${met(pgl.start.emptyDir) ? 'met' : '**not met**'} |`,
      );
      lines.push(
        `| existing | ${pgl.start.existingDir.secondsToAnswer.toFixed(1)} | ${pgl.start.existingDir.peakRssMb.toFixed(0)} | ${pgl.start.existingDir.idleRssMb.toFixed(0)} | peak <= 400, idle <= 300: ${met(pgl.start.existingDir) ? 'met' : '**not met**'} |`,
      );
    }
    lines.push('', `Throughput, ${pgl.pulses.toLocaleString('en')} pulses, 4 connections:`, '', '| scenario | req/s | p50 ms | p99 ms |', '|---|---|---|---|');
    for (const s of pgl.scenarios) lines.push(`| ${s.scenario} | ${s.reqPerSec.toFixed(0)} | ${s.p50} | ${s.p99} |`);
    lines.push('', `Peak RSS under load: ${pgl.peakRssMb.toFixed(0)} MB.`);
  }
  const imp = r.import as Record<string, unknown> | undefined;
  if (imp) {
    const cli = imp.cli as { seconds: number; rowsPerSec?: number; peakRssMb?: number };
    const floor = imp.floor as { seconds: number; copySeconds: number; indexSeconds: number } | undefined;
    const indexedCopy = imp.indexedCopy as { seconds: number } | undefined;
    const b = imp.breakdown as Record<string, number | undefined> | undefined;
    const f = (x: number | undefined) => (x === undefined ? '—' : x.toFixed(1));
    lines.push('', `## Import (${Number(imp.rows).toLocaleString('en')} NDJSON pulses, PostgreSQL${imp.ranAt ? `, section run ${imp.ranAt}` : ''})`, '');
    lines.push('| path | seconds | rows/s | importer / it |', '|---|---|---|---|');
    lines.push(`| \`climate-pulse import-pulses\` (NDJSON, abort mode) | ${f(cli.seconds)} | ${(cli.rowsPerSec ?? 0).toFixed(0)} | — |`);
    if (floor)
      lines.push(
        `| floor: plain COPY into a table with the same primary key (${f(floor.copySeconds)} s), (org_id, created_at, id) index built afterwards (${f(floor.indexSeconds)} s) | ${f(floor.seconds)} | ${(Number(imp.rows) / floor.seconds).toFixed(0)} | **${Number(imp.floorRatio ?? 0).toFixed(2)}x** (target >= 0.35x) |`,
      );
    if (indexedCopy)
      lines.push(
        `| \`psql \\copy\` into a copy of pulses (its primary key and indexes; no rollups) | ${f(indexedCopy.seconds)} | ${(Number(imp.rows) / indexedCopy.seconds).toFixed(0)} | ${Number(imp.ratio ?? 0).toFixed(2)}x |`,
      );
    if (b) {
      lines.push(
        '',
        "Where the time goes (seconds; the first three are differences between COPYs of the same rows into tables with more of pulses' machinery each, in this run):",
        '',
      );
      lines.push('| phase | seconds |', '|---|---|');
      lines.push(`| COPY into a table with the primary key (org_id, id) | ${f(b.copyWithPrimaryKey)} |`);
      lines.push(`| + maintaining the secondary indexes of pulses (two since migration 0010) | ${f(b.secondaryIndexes)} |`);
      lines.push(
        `| + the two per-row foreign key checks pulses had until migration 0007 (now held by the rollups, checked once per rollup row) | ${f(b.perRowForeignKeyChecks)} |`,
      );
      lines.push(`| importer: reading, parsing and validating NDJSON (node, overlaps the database) | ${f(b.importerParseValidate)} |`);
      lines.push(
        `| importer: waiting for the previous batch (rows in time order inserted, indexed and folded; the others staged) | ${f(b.importerStreamWait)} |`,
      );
      lines.push(`| importer: the end (the last batch, then the staged rows moved in time order) | ${f(b.importerLastBatch)} |`);
      lines.push(`| importer: commit | ${f(b.importerCommit)} |`);
    }
    lines.push(
      '',
      'Each COPY runs alone, one after another; a difference of a few seconds (or a negative one) is within the noise of a shared machine.',
      "The importer's own phases overlap: node reads and validates a batch while the database writes the previous one.",
      '',
      `Importer peak RSS: ${(cli.peakRssMb ?? 0).toFixed(0)} MB.`,
      '',
      '```json',
      JSON.stringify(imp, null, 2),
      '```',
    );
  }
  if (r.alerts) lines.push('', alertsMarkdown(r.alerts as AlertsBenchResult).trimEnd());
  if (r.ingest) lines.push('', ingestMarkdown(r.ingest as IngestBenchResult).trimEnd());
  if (r.checkin) lines.push('', checkinMarkdown(r.checkin as CheckinBenchResult).trimEnd());
  return `${lines.join('\n')}\n`;
}

/** `--only alerts`: runs the alert engine bench alone and updates its part of the results. */
async function onlyAlerts() {
  const r = await benchAlerts(flags['database-url']!, log);
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  const jsonFile = join(ROOT, 'bench/results/latest.json');
  const json = existsSync(jsonFile) ? JSON.parse(readFileSync(jsonFile, 'utf8')) : {};
  writeFileSync(jsonFile, `${JSON.stringify({ ...json, alerts: r }, null, 2)}\n`);
  const mdFile = join(ROOT, 'bench/results/latest.md');
  const md = existsSync(mdFile)
    ? `${readFileSync(mdFile, 'utf8')
        .replace(/\n## Alert engine\n[\s\S]*?(?=\n## |$)/, '')
        .trimEnd()}\n`
    : '';
  writeFileSync(mdFile, `${md}\n${alertsMarkdown(r)}`);
  console.log(`\n${alertsMarkdown(r)}`);
}

/**
 * `--only privacy` (issue 17): GET /comments and GET /pulses on a 1M-pulse organization against the
 * floor (and the build in BENCH_BASELINE_DIR, when given), and a moderation of released pulses.
 * Writes bench/results/privacy.json and privacy.md.
 */
async function onlyPrivacy() {
  const { benchPrivacy, privacyMarkdown } = await import('./comments.js');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  const r = await benchPrivacy(flags['database-url']!, {
    pulses: num('pulses'),
    orgs: num('orgs'),
    rounds: num('rounds'),
    seconds: num('duration'),
    connections: num('connections'),
    baselineDir: process.env.BENCH_BASELINE_DIR,
    log,
  });
  const out = { ranAt: new Date().toISOString(), ...r };
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench/results/privacy.json'), `${JSON.stringify(out, null, 2)}\n`);
  writeFileSync(join(ROOT, 'bench/results/privacy.md'), privacyMarkdown(out));
  console.log(`\n${privacyMarkdown(out)}`);
}

/** `--only ingest`: builds, runs the ingestion bench alone and updates its part of the results. */
async function onlyIngest() {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  const r = await benchIngest(flags['database-url']!, log, num('import-rows'));
  const jsonFile = join(ROOT, 'bench/results/latest.json');
  const json = existsSync(jsonFile) ? JSON.parse(readFileSync(jsonFile, 'utf8')) : {};
  writeFileSync(jsonFile, `${JSON.stringify({ ...json, ingest: r }, null, 2)}\n`);
  const mdFile = join(ROOT, 'bench/results/latest.md');
  const md = existsSync(mdFile)
    ? `${readFileSync(mdFile, 'utf8')
        .replace(/\n## Live ingestion[\s\S]*?(?=\n## |$)/, '')
        .trimEnd()}\n`
    : '';
  writeFileSync(mdFile, `${md}\n${ingestMarkdown(r)}`);
  console.log(`\n${ingestMarkdown(r)}`);
}

const checkinOptions = () => ({ respondents: num('respondents'), concurrency: num('checkin-concurrency'), processes: 2, log });

/** `--only checkin`: builds, runs the check-in round (issue 45) alone and updates its part of the results. */
async function onlyCheckin() {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  const r = await benchCheckin(flags['database-url']!, checkinOptions());
  const jsonFile = join(ROOT, 'bench/results/latest.json');
  const json = existsSync(jsonFile) ? JSON.parse(readFileSync(jsonFile, 'utf8')) : {};
  writeFileSync(jsonFile, `${JSON.stringify({ ...json, checkin: r }, null, 2)}\n`);
  const mdFile = join(ROOT, 'bench/results/latest.md');
  const md = existsSync(mdFile)
    ? `${readFileSync(mdFile, 'utf8')
        .replace(/\n## A round of check-ins[\s\S]*?(?=\n## |$)/, '')
        .trimEnd()}\n`
    : '';
  writeFileSync(mdFile, `${md}\n${checkinMarkdown(r)}`);
  console.log(`\n${checkinMarkdown(r)}`);
}

/** `--only hr-console` (issue 53): the People page with 5,000 people and the Overview of 50 teams over 52 weeks, against their API reads. */
async function onlyHrConsole() {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  const r = await benchHrConsole(flags['database-url']!, { rounds: num('rounds'), seconds: num('duration'), connections: num('connections'), log });
  const jsonFile = join(ROOT, 'bench/results/latest.json');
  const json = existsSync(jsonFile) ? JSON.parse(readFileSync(jsonFile, 'utf8')) : {};
  writeFileSync(jsonFile, `${JSON.stringify({ ...json, hrConsole: r }, null, 2)}\n`);
  const mdFile = join(ROOT, 'bench/results/latest.md');
  const md = existsSync(mdFile)
    ? `${readFileSync(mdFile, 'utf8')
        .replace(/\n## The HR lead's console at scale[\s\S]*?(?=\n## |$)/, '')
        .trimEnd()}\n`
    : '';
  writeFileSync(mdFile, `${md}\n${hrConsoleMarkdown(r)}`);
  console.log(`\n${hrConsoleMarkdown(r)}`);
}

await main();

/** `--only scim` (issue 56): provisioning 10,000 users and 200 groups by SCIM against the file of the same people; prints its table (bench/results/NOTES.md keeps the figures). */
async function onlyScim() {
  const r = await benchScim(flags['database-url']!, { users: num('scim-users'), groups: num('scim-groups'), concurrency: num('scim-concurrency'), log });
  console.log(`\n${scimMarkdown(r)}`);
  console.log(JSON.stringify(r));
}
