/**
 * Live ingestion over HTTP against `import-pulses` of the same rows, in the same run (issue 18):
 * 100,000 pulses POSTed to the operator API in batches of 1,000 (one connection, then four), and
 * the same rows imported from an NDJSON file by `climate-pulse import-pulses`, each into a fresh
 * organization of a fresh database `climate_pulse_bench_ingest` on PostgreSQL. Then (issue 29)
 * `import-pulses` of the import bench's 1,000,000 pulses in time order and of the same rows
 * shuffled, each into a fresh database and each against its own floor (COPY of the same file into a
 * table with the primary key, the (org_id, created_at, id) index built afterwards) in the same
 * run. Uses the built `dist/`. Run alone with `npx tsx bench/run.ts --only ingest`.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { PgExecutor } from '../src/db/pg.js';
import { importFiles, SHUFFLE_SEED, type ImportFile } from './import-files.js';

export const INGEST_BENCH_DB = 'climate_pulse_bench_ingest';
const ORDER_BENCH_DB = 'climate_pulse_bench_import_order';
const ROWS = 100_000;
const BATCH = 1_000;
const TEAMS = 20;
const TOKEN = 'bench-admin-token-0123456789abcdef0123456789';

export interface IngestBenchResult {
  ranAt: string;
  rows: number;
  batch: number;
  http1: { seconds: number; pulsesPerSec: number; p50BatchMs: number; p99BatchMs: number };
  http4: { seconds: number; pulsesPerSec: number };
  importPulses: { seconds: number; pulsesPerSec: number; processSeconds: number };
  resentBatchMs: number;
  /** Issue 29: the same rows imported in time order and shuffled, each against its floor. */
  importOrder?: ImportOrderResult;
}

export interface ImportOrderRun {
  order: 'sorted' | 'shuffled';
  /** The `import-pulses` process, start to exit (the figure set against the floor). */
  processSeconds: number;
  /** The importer's own `seconds` and `phases` (its summary). */
  importerSeconds: number;
  phases?: Record<string, number>;
  peakRssMb?: number;
  /** The faster of the two floors measured around the import. */
  floor: { copySeconds: number; indexSeconds: number; seconds: number };
  floorRuns: number[];
  /** The import's rows/s over the floor's: floor seconds / process seconds. */
  floorRatio: number;
}

export interface ImportOrderResult {
  ranAt: string;
  rows: number;
  seed: number;
  runs: ImportOrderRun[];
}

const ROOT = new URL('../', import.meta.url).pathname;

function dbUrl(admin: string, name: string) {
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return u.toString();
}

async function freePort(): Promise<number> {
  const srv = createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  return port;
}

function row(i: number) {
  return {
    id: `ing_${i}`,
    level: 1 + (i % 5),
    reason: i % 4 === 0 ? 'workload' : null,
    comment: i % 3 === 0 ? `note ${i}` : null,
    moderationStatus: i % 10 === 0 ? 'FLAGGED' : 'CLEAN',
    subteamId: `team_${1 + (i % TEAMS)}`,
    createdAt: new Date(Date.parse('2026-01-05T00:00:00.000Z') + i * 60_000).toISOString(),
  };
}

const median = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function freshDatabase(adminUrl: string, name: string, orgs: string[]): Promise<string> {
  const url = dbUrl(adminUrl, name);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const db = new PgExecutor({ connectionString: url, max: 2 });
  await migrate(db);
  await db.close();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  for (const org of orgs) {
    await c.query(`INSERT INTO organizations (id, name, plan, created_at) VALUES ($1, $1, 'enterprise', now())`, [org]);
    await c.query(`INSERT INTO teams (org_id, id, name, created_at) SELECT $1, 'team_' || g, 'Team ' || g, now() FROM generate_series(1, ${TEAMS}) g`, [org]);
  }
  await c.end();
  return url;
}

/** The floor for one file: COPY of it into a new table with the primary key, then the index. */
async function floorOnce(url: string, file: ImportFile): Promise<ImportOrderRun['floor']> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`DROP TABLE IF EXISTS bench_floor`);
  await c.query(`CREATE TABLE bench_floor (org_id text NOT NULL, id text NOT NULL, level smallint NOT NULL, reason text, comment text,
    moderation_status text NOT NULL, subteam_id text, created_at timestamptz NOT NULL, PRIMARY KEY (org_id, id))`);
  const tc = performance.now();
  const copy = `-c "\\copy bench_floor (org_id, id, level, reason, comment, moderation_status, subteam_id, created_at) FROM STDIN WITH (FORMAT csv)"`;
  execFileSync('bash', ['-c', `sed 's/^ORG,/org_floor,/' ${file.csv} | psql "${url}" -q -v ON_ERROR_STOP=1 ${copy}`], { stdio: 'inherit' });
  const copySeconds = (performance.now() - tc) / 1000;
  const ti = performance.now();
  await c.query(`CREATE INDEX ON bench_floor (org_id, created_at, id)`);
  const indexSeconds = (performance.now() - ti) / 1000;
  await c.query(`DROP TABLE bench_floor`);
  await c.end();
  return { copySeconds, indexSeconds, seconds: copySeconds + indexSeconds };
}

/**
 * One file: the floor, `import-pulses` into a fresh database, the floor again, all in that
 * database; the faster floor counts (a single COPY on this shared machine varied twofold).
 */
async function importAgainstFloor(
  adminUrl: string,
  rows: number,
  order: ImportOrderRun['order'],
  file: ImportFile,
  log: (...a: unknown[]) => void,
): Promise<ImportOrderRun> {
  const url = await freshDatabase(adminUrl, ORDER_BENCH_DB, ['org_file']);
  log(`floor: COPY of the ${order} file, then the index`);
  const floorBefore = await floorOnce(url, file);
  log(`import-pulses of ${rows} pulses, ${order}`);
  const t = performance.now();
  // GNU time reports the importer's peak RSS on stderr.
  const run = spawnSync('/usr/bin/time', ['-f', 'PEAK_RSS_KB=%M', process.execPath, 'dist/cli/index.js', 'import-pulses', '--org', 'org_file', file.ndjson], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' },
    maxBuffer: 64 * 1024 * 1024,
  });
  const processSeconds = (performance.now() - t) / 1000;
  if (run.status !== 0) throw new Error(`import-pulses failed: ${run.stderr}`);
  const summary = JSON.parse(run.stdout.toString().trim().split('\n').pop()!) as { imported: number; seconds: number; phases: Record<string, number> };
  if (summary.imported !== rows) throw new Error(`imported ${summary.imported}`);
  const peak = /PEAK_RSS_KB=(\d+)/.exec(run.stderr.toString());
  log(`floor again`);
  const floorAfter = await floorOnce(url, file);
  const floor = floorBefore.seconds <= floorAfter.seconds ? floorBefore : floorAfter;
  const out: ImportOrderRun = {
    order,
    processSeconds,
    importerSeconds: summary.seconds,
    phases: summary.phases,
    peakRssMb: peak ? Math.round(Number(peak[1]) / 1024) : undefined,
    floor,
    floorRuns: [floorBefore.seconds, floorAfter.seconds],
    floorRatio: floor.seconds / processSeconds,
  };
  log(
    `${order}: import ${processSeconds.toFixed(1)} s (importer ${summary.seconds.toFixed(1)} s), floor ${floor.seconds.toFixed(1)} s (${out.floorRuns.map((x) => x.toFixed(1)).join(' and ')}), ${out.floorRatio.toFixed(2)}x`,
  );
  return out;
}

/** Issue 29: `import-pulses` of the same rows in time order and shuffled, each against its floor. */
export async function benchImportOrder(adminUrl: string, rows: number, log: (...a: unknown[]) => void): Promise<ImportOrderResult> {
  const files = await importFiles(rows, log);
  const ranAt = new Date().toISOString();
  const runs = [
    await importAgainstFloor(adminUrl, rows, 'sorted', files.sorted, log),
    await importAgainstFloor(adminUrl, rows, 'shuffled', files.shuffled, log),
  ];
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${ORDER_BENCH_DB}`);
  await admin.end();
  return { ranAt, rows, seed: SHUFFLE_SEED, runs };
}

export async function benchIngest(adminUrl: string, log: (...a: unknown[]) => void, importRows = 1_000_000): Promise<IngestBenchResult> {
  const url = dbUrl(adminUrl, INGEST_BENCH_DB);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${INGEST_BENCH_DB}`);
  await admin.query(`CREATE DATABASE ${INGEST_BENCH_DB}`);
  await admin.end();
  const db = new PgExecutor({ connectionString: url, max: 2 });
  await migrate(db);
  await db.close();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  for (const org of ['org_http1', 'org_http4', 'org_file']) {
    await c.query(`INSERT INTO organizations (id, name, plan, created_at) VALUES ($1, $1, 'enterprise', now())`, [org]);
    await c.query(`INSERT INTO teams (org_id, id, name, created_at) SELECT $1, 'team_' || g, 'Team ' || g, now() FROM generate_series(1, ${TEAMS}) g`, [org]);
  }
  await c.end();

  const rows = Array.from({ length: ROWS }, (_, i) => row(i));
  const dir = join(ROOT, '.test-tmp', 'bench-ingest');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `pulses-${ROWS}.ndjson`);
  const out = createWriteStream(file);
  for (const r of rows) if (!out.write(`${JSON.stringify(r)}\n`)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');

  const adminPort = await freePort();
  const child = spawn(process.execPath, ['dist/cli/index.js', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: url,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      ADMIN_PORT: String(adminPort),
      ADMIN_TOKEN: TOKEN,
      LOG_LEVEL: 'warn',
      ALERTS_INTERVAL_MINUTES: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${text}`)), 60_000);
    const check = () => {
      if (!/operator API on/.test(text)) return;
      clearTimeout(timer);
      resolve();
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${text}`)));
  });
  const base = `http://127.0.0.1:${adminPort}/admin/v1/organizations`;
  const post = async (orgId: string, pulses: unknown[]) => {
    const t = performance.now();
    const res = await fetch(`${base}/${orgId}/pulses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ pulses }),
    });
    const body = (await res.json()) as { inserted?: number };
    if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${JSON.stringify(body)}`);
    return { ms: performance.now() - t, inserted: body.inserted! };
  };
  const batches = Array.from({ length: ROWS / BATCH }, (_, i) => rows.slice(i * BATCH, (i + 1) * BATCH));
  let result: IngestBenchResult;
  try {
    log(`ingesting ${ROWS} pulses in batches of ${BATCH}, one connection`);
    const t1 = performance.now();
    const times: number[] = [];
    let inserted = 0;
    for (const b of batches) {
      const r = await post('org_http1', b);
      times.push(r.ms);
      inserted += r.inserted;
    }
    const s1 = (performance.now() - t1) / 1000;
    if (inserted !== ROWS) throw new Error(`inserted ${inserted}`);
    const resent = await post('org_http1', batches[0]);

    log('ingesting again into another organization, four connections');
    const t4 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < batches.length) await post('org_http4', batches[next++]);
      }),
    );
    const s4 = (performance.now() - t4) / 1000;

    log('import-pulses of the same rows');
    const ti = performance.now();
    const run = spawnSync(process.execPath, ['dist/cli/index.js', 'import-pulses', '--org', 'org_file', file], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' },
      maxBuffer: 64 * 1024 * 1024,
    });
    const si = (performance.now() - ti) / 1000;
    if (run.status !== 0) throw new Error(`import-pulses failed: ${run.stderr}`);
    const summary = JSON.parse(run.stdout.toString().trim().split('\n').pop()!) as { imported: number; seconds: number };
    if (summary.imported !== ROWS) throw new Error(`imported ${summary.imported}`);
    result = {
      ranAt: new Date().toISOString(),
      rows: ROWS,
      batch: BATCH,
      http1: { seconds: s1, pulsesPerSec: Math.round(ROWS / s1), p50BatchMs: Math.round(median(times, 0.5)), p99BatchMs: Math.round(median(times, 0.99)) },
      http4: { seconds: s4, pulsesPerSec: Math.round(ROWS / s4) },
      importPulses: { seconds: summary.seconds, pulsesPerSec: Math.round(ROWS / summary.seconds), processSeconds: si },
      resentBatchMs: Math.round(resent.ms),
    };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
  // With the server stopped: nothing else of the bench runs beside the imports.
  if (importRows > 0) result.importOrder = await benchImportOrder(adminUrl, importRows, log);
  return result;
}

export function ingestMarkdown(r: IngestBenchResult): string {
  return [
    `## Live ingestion over HTTP vs import-pulses (${r.rows.toLocaleString('en')} pulses, PostgreSQL, section run ${r.ranAt})`,
    '',
    '| path | seconds | pulses/s |',
    '|---|---|---|',
    `| POST /admin/v1/organizations/{id}/pulses, batches of ${r.batch}, 1 connection (batch p50 ${r.http1.p50BatchMs} ms, p99 ${r.http1.p99BatchMs} ms) | ${r.http1.seconds.toFixed(1)} | ${r.http1.pulsesPerSec.toLocaleString('en')} |`,
    `| the same, 4 connections | ${r.http4.seconds.toFixed(1)} | ${r.http4.pulsesPerSec.toLocaleString('en')} |`,
    `| import-pulses of the same rows (NDJSON; importer time, process ${r.importPulses.processSeconds.toFixed(1)} s) | ${r.importPulses.seconds.toFixed(1)} | ${r.importPulses.pulsesPerSec.toLocaleString('en')} |`,
    '',
    `A re-sent batch of ${r.batch} (all unchanged): ${r.resentBatchMs} ms.`,
    '',
    ...(r.importOrder ? importOrderMarkdown(r.importOrder) : []),
  ].join('\n');
}

function importOrderMarkdown(o: ImportOrderResult): string[] {
  const f = (x: number | undefined) => (x === undefined ? '—' : x.toFixed(1));
  return [
    `### import-pulses of ${o.rows.toLocaleString('en')} pulses in time order and shuffled (issue 29, section run ${o.ranAt})`,
    '',
    `The same rows (the import section's file), in time order and in a seeded random order (seed ${o.seed}), each imported into a fresh database, with its floor measured in that database just before and just after the import (the faster counts): a COPY of the same file in the same order into a table with the primary key, the (org_id, created_at, id) index built afterwards.`,
    '',
    '| file | import-pulses process s (importer s) | floor s (COPY + index; both runs) | import / floor | importer phases s: parse+validate, stream wait, end (staged rows moved), commit | peak RSS MB |',
    '|---|---|---|---|---|---|',
    ...o.runs.map((r) => {
      const p = r.phases ?? {};
      return `| ${r.order} | ${f(r.processSeconds)} (${f(r.importerSeconds)}) | ${f(r.floor.seconds)} (${f(r.floor.copySeconds)} + ${f(r.floor.indexSeconds)}; ${(r.floorRuns ?? [r.floor.seconds]).map(f).join(', ')}) | **${r.floorRatio.toFixed(2)}x** | ${[p.parseValidate, p.streamWait, p.finish, p.commit].map(f).join(', ')} | ${r.peakRssMb ?? '—'} |`;
    }),
    '',
  ];
}
