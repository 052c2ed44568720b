/**
 * Live ingestion over HTTP against `import-pulses` of the same rows, in the same run (issue 18):
 * 100,000 pulses POSTed to the operator API in batches of 1,000 (one connection, then four), and
 * the same rows imported from an NDJSON file by `climate-pulse import-pulses`, each into a fresh
 * organization of a fresh database `climate_pulse_bench_ingest` on PostgreSQL. Uses the built
 * `dist/`. Run alone with `npx tsx bench/run.ts --only ingest`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { PgExecutor } from '../src/db/pg.js';

export const INGEST_BENCH_DB = 'climate_pulse_bench_ingest';
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
}

const ROOT = new URL('../', import.meta.url).pathname;

function dbUrl(admin: string, name: string) {
  const u = new URL(admin);
  u.pathname = '/' + name;
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

export async function benchIngest(adminUrl: string, log: (...a: unknown[]) => void): Promise<IngestBenchResult> {
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
  for (const r of rows) if (!out.write(JSON.stringify(r) + '\n')) await once(out, 'drain');
  out.end();
  await once(out, 'finish');

  const adminPort = await freePort();
  const child = spawn(process.execPath, ['dist/cli/index.js', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url, PORT: String(await freePort()), HOST: '127.0.0.1', ADMIN_PORT: String(adminPort), ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'warn', ALERTS_INTERVAL_MINUTES: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${text}`)), 60_000);
    const check = () => /operator API on/.test(text) && (clearTimeout(timer), resolve());
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
    return {
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
  ].join('\n');
}
