/**
 * Cold start (issue 20, finding 9): a server process that just started gets its first burst,
 * GET /v1/pulses at 50 connections, once its shedding warm-up window is over. Counts the 503s
 * of that first round and of a second one, over several fresh starts.
 *
 *   npx tsx bench/cold.ts [--starts 3] [--connections 50] [--seconds 3] [--pulses 200000]
 *
 * PostgreSQL only (the embedded mode never sheds). Builds its own database once.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { PgExecutor } from '../src/db/pg.js';
import { generateOrg } from './dataset.js';

const ROOT = resolve(import.meta.dirname, '..');
const { values: flags } = parseArgs({
  options: {
    'database-url': { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test' },
    starts: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '3' },
    pulses: { type: 'string', default: '200000' },
    // The first burst arrives once the shedding warm-up (5 s after the app is ready) is over.
    'wait-ms': { type: 'string', default: '5500' },
  },
});
const KEY = 'cp_bench_cold_0123456789abcdef';
const log = (...a: unknown[]) => console.log(`[cold ${new Date().toISOString().slice(11, 19)}]`, ...a);

async function database(): Promise<string> {
  const name = `climate_pulse_cold_${flags.pulses}`;
  const admin = new pg.Client({ connectionString: flags['database-url'] });
  await admin.connect();
  const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount! > 0;
  if (!exists) await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(flags['database-url']!);
  url.pathname = `/${name}`;
  if (!exists) {
    const db = new PgExecutor({ connectionString: url.toString(), max: 2 });
    await migrate(db);
    log(`generating ${flags.pulses} pulses`);
    await generateOrg(db, { orgId: 'org_cold', pulses: Number(flags.pulses), teams: 20, key: KEY });
    await db.exec('VACUUM ANALYZE');
    await db.close();
  }
  return url.toString();
}

async function freePort(): Promise<number> {
  const srv = createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  return port;
}

async function round(url: string): Promise<{ total: number; s503: number; p99: number }> {
  const statuses: Record<number, number> = {};
  const result = await autocannon({
    url: `${url}/v1/pulses`,
    connections: Number(flags.connections),
    duration: Number(flags.seconds),
    headers: { authorization: `Bearer ${KEY}` },
    setupClient: (client) => client.on('response', (status: number) => (statuses[status] = (statuses[status] ?? 0) + 1)),
  } as autocannon.Options);
  const total = Object.values(statuses).reduce((a, b) => a + b, 0);
  return { total, s503: statuses[503] ?? 0, p99: result.latency.p99 };
}

const url = await database();
const rows: string[] = [];
for (let i = 1; i <= Number(flags.starts); i++) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: url,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ALERTS_INTERVAL_MINUTES: '0',
      WEBHOOK_POLL_MS: '60000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const base = `http://127.0.0.1:${port}`;
  for (let up = false; !up; ) {
    up = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (!up) await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, Number(flags['wait-ms'])));
  const first = await round(base);
  const second = await round(base);
  const shed = out.split('\n').filter((l) => l.includes('shedding load'));
  const worst = Math.max(0, ...shed.map((l) => Number(JSON.parse(l).value) || 0));
  rows.push(`| ${i} | ${first.total} | ${first.s503} | ${first.p99} | ${second.total} | ${second.s503} | ${shed.length ? worst.toFixed(0) : '-'} |`);
  log(rows.at(-1));
  child.kill('SIGTERM');
  await once(child, 'exit');
}
console.log(
  [
    `Cold start: GET /v1/pulses at ${flags.connections} connections, ${flags.seconds} s rounds, ${flags['wait-ms']} ms after /healthz answers (${flags.pulses} pulses).`,
    '',
    '| start | 1st round answers | 1st round 503 | 1st round p99 ms | 2nd round answers | 2nd round 503 | worst delay logged ms |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n'),
);
