/**
 * `npm run soak`: two minutes of mixed traffic from several API keys (reads, idempotent writes,
 * retries of acknowledged writes) against two server processes on one PostgreSQL and one Redis;
 * one process is restarted half way. At the end every acknowledged write is looked up in the
 * database: it must be there exactly once, with the id its answer gave. Writes
 * bench/results/soak.md and exits 1 when a check fails. Needs PostgreSQL and Redis up; uses its
 * own database climate_pulse_soak (dropped and created at the start, dropped at the end).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { PgExecutor } from '../src/db/pg.js';
import { generateOrg } from './dataset.js';

const ROOT = resolve(import.meta.dirname, '..');
const { values: flags } = parseArgs({
  options: {
    'database-url': { type: 'string', default: process.env.SOAK_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres' },
    'redis-url': { type: 'string', default: process.env.SOAK_REDIS_URL ?? 'redis://127.0.0.1:6379' },
    seconds: { type: 'string', default: '120' },
    clients: { type: 'string', default: '8' },
    orgs: { type: 'string', default: '4' },
    'restart-signal': { type: 'string', default: 'SIGTERM' },
    keep: { type: 'boolean', default: false },
    out: { type: 'string', default: join(ROOT, 'bench/results/soak.md') },
  },
});
const SECONDS = Number(flags.seconds);
const DB_NAME = 'climate_pulse_soak';
const log = (...a: unknown[]) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}]`, ...a);

interface Org {
  id: string;
  key: string;
}
const ORGS: Org[] = Array.from({ length: Number(flags.orgs) }, (_, i) => ({ id: `org_soak_${i + 1}`, key: `cp_soak_${i + 1}_0123456789abcdef` }));

// ---------------------------------------------------------------------------------------------
// Processes

async function freePort(): Promise<number> {
  const srv = createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  return port;
}

interface Proc {
  label: string;
  child: ChildProcess;
  url: string;
  rssMb(): number;
}

async function startServer(label: string, port: number, env: Record<string, string>): Promise<Proc> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logFile = join(tmpdir(), `soak-${label}.log`);
  const sink = createWriteStream(logFile);
  child.stdout!.pipe(sink);
  child.stderr!.pipe(sink);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${label} exited early; see ${logFile}`);
    try {
      const r = await fetch(`${url}/readyz`);
      await r.arrayBuffer();
      if (r.status === 200) {
        return {
          label,
          child,
          url,
          rssMb() {
            try {
              return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
            } catch {
              return 0;
            }
          },
        };
      }
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${label} did not become ready within 60 s; see ${logFile}`);
}

async function stopServer(p: Proc, signal: NodeJS.Signals) {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = once(p.child, 'exit');
  p.child.kill(signal);
  await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
}

// ---------------------------------------------------------------------------------------------
// Traffic

type Kind = 'read' | 'write' | 'retry';
interface Sample {
  kind: Kind;
  status: number | 'network';
  ms: number;
  at: number;
  /** For a 5xx: the error's message, to tell load shedding from a lost database. */
  message?: string;
}
interface Write {
  org: Org;
  path: '/v1/actions' | '/v1/teams';
  idem: string;
  body: string;
  marker: string; // the action's title or the team's name: unique per Idempotency-Key
  id?: string; // set once acknowledged
}

const samples: Sample[] = [];
const writes: Write[] = [];
const acknowledged: Write[] = [];
const violations: string[] = [];
let unacknowledged = 0;
let writeRetries = 0;

const servers: (Proc | null)[] = [null, null];
let rr = 0;
const pickServer = (): Proc | null => {
  for (let i = 0; i < servers.length; i++) {
    const s = servers[rr++ % servers.length];
    if (s) return s;
  }
  return null;
};

async function call(kind: Kind, method: string, path: string, org: Org, headers: Record<string, string> = {}, body?: string) {
  const target = pickServer() ?? servers.find(Boolean)!;
  const t0 = performance.now();
  try {
    const res = await fetch(target.url + path, {
      method,
      headers: { authorization: `Bearer ${org.key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let message: string | undefined;
    if (res.status >= 500) {
      try {
        message = JSON.parse(text).error?.message;
      } catch {
        message = text.slice(0, 100);
      }
    }
    samples.push({ kind, status: res.status, ms: performance.now() - t0, at: Date.now(), message });
    return { status: res.status, text, replayed: res.headers.get('idempotent-replayed') };
  } catch {
    samples.push({ kind, status: 'network', ms: performance.now() - t0, at: Date.now() });
    return { status: 0, text: '', replayed: null };
  }
}

const rand = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];
const READS = ['/v1/pulses?limit=50', '/v1/stats', '/v1/stats/daily', '/v1/comments?limit=20', '/v1/alerts', '/v1/org', '/v1/teams'];
let seq = 0;

/** A new idempotent write, retried with the same key (on either process) until it is answered 200. */
async function newWrite(org: Org) {
  const n = ++seq;
  const idem = `soak-${process.pid}-${n}-${Math.random().toString(36).slice(2, 8)}`;
  const action = Math.random() < 0.75;
  const marker = `Soak ${idem}`;
  const w: Write = {
    org,
    path: action ? '/v1/actions' : '/v1/teams',
    idem,
    marker,
    body: JSON.stringify(action ? { title: marker, description: 'soak test write' } : { name: marker }),
  };
  writes.push(w);
  for (let attempt = 0; attempt < 20; attempt++) {
    if (attempt > 0) {
      writeRetries++;
      await new Promise((r) => setTimeout(r, 250));
    }
    const res = await call(attempt ? 'retry' : 'write', 'POST', w.path, org, { 'idempotency-key': idem }, w.body);
    if (res.status === 200) {
      const id = JSON.parse(res.text).id as string;
      if (w.id && w.id !== id) violations.push(`${idem}: answered ${w.id}, then ${id}`);
      w.id = id;
      acknowledged.push(w);
      return;
    }
    if (res.status !== 0 && res.status !== 503 && res.status !== 429) {
      violations.push(`${idem}: POST ${w.path} answered ${res.status} ${res.text.slice(0, 200)}`);
      return;
    }
  }
  unacknowledged++;
}

/** An acknowledged write sent again with its key: must replay the same id. */
async function replayWrite() {
  const w = rand(acknowledged);
  const res = await call('retry', 'POST', w.path, w.org, { 'idempotency-key': w.idem }, w.body);
  if (res.status === 200) {
    const id = JSON.parse(res.text).id;
    if (id !== w.id || res.replayed !== 'true') violations.push(`${w.idem}: replay gave ${id} (replayed=${res.replayed}), first ${w.id}`);
  } else if (res.status !== 0 && res.status !== 503 && res.status !== 429) {
    violations.push(`${w.idem}: replay answered ${res.status} ${res.text.slice(0, 200)}`);
  }
}

async function client(until: number) {
  while (Date.now() < until) {
    const org = rand(ORGS);
    const r = Math.random();
    if (r < 0.65) await call('read', 'GET', rand(READS), org);
    else if (r < 0.67) await call('read', 'GET', '/v1/actions', org);
    else if (r < 0.9 || acknowledged.length === 0) await newWrite(org);
    else await replayWrite();
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

async function verify(url: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const rows = (
    await c.query<{ org_id: string; marker: string; ids: string[] }>(
      `SELECT org_id, title AS marker, array_agg(id) AS ids FROM actions WHERE title LIKE 'Soak %' GROUP BY 1, 2
       UNION ALL
       SELECT org_id, name, array_agg(id) FROM teams WHERE name LIKE 'Soak %' GROUP BY 1, 2`,
    )
  ).rows;
  await c.end();
  const found = new Map(rows.map((r) => [`${r.org_id} ${r.marker}`, r.ids]));
  let present = 0;
  for (const w of acknowledged) {
    const ids = found.get(`${w.org.id} ${w.marker}`) ?? [];
    if (ids.length === 1 && ids[0] === w.id) present++;
    else violations.push(`${w.idem}: acknowledged as ${w.id}, in the database ${JSON.stringify(ids)}`);
  }
  const duplicated = rows.filter((r) => r.ids.length > 1);
  for (const d of duplicated) violations.push(`${d.marker}: ${d.ids.length} rows for one Idempotency-Key`);
  return { present, rows: rows.length, duplicated: duplicated.length };
}

async function main() {
  const admin = new pg.Client({ connectionString: flags['database-url'] });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB_NAME}`);
  await admin.query(`CREATE DATABASE ${DB_NAME}`);
  const dbUrl = new URL(flags['database-url']!);
  dbUrl.pathname = `/${DB_NAME}`;
  const url = dbUrl.toString();
  const db = new PgExecutor({ connectionString: url, max: 2 });
  await migrate(db);
  for (const o of ORGS) await generateOrg(db, { orgId: o.id, pulses: 20_000, teams: 5, key: o.key });
  await db.close();
  log(`database ${DB_NAME}: ${ORGS.length} organizations of 20,000 pulses`);

  const env = { DATABASE_URL: url, REDIS_URL: flags['redis-url']!, DATA_DIR: '' };
  const ports = [await freePort(), await freePort()];
  const [a, b] = await Promise.all([startServer('a', ports[0], env), startServer('b', ports[1], env)]);
  servers[0] = a;
  servers[1] = b;
  log(`servers ${a.url} (pid ${a.child.pid}) and ${b.url} (pid ${b.child.pid})`);

  const loadStart = loadavg()[0];
  const started = Date.now();
  const until = started + SECONDS * 1000;
  const rssStart = { a: a.rssMb(), b: b.rssMb() };
  const clients = Array.from({ length: Number(flags.clients) }, () => client(until));

  // Half way: restart process b (the same port, so clients find it again).
  await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 2));
  const rssBBefore = b.rssMb();
  const restartFrom = Date.now();
  log(`restarting b with ${flags['restart-signal']}`);
  // b stays in the rotation: requests sent to it meanwhile get 503 or a refused connection, and writes are retried.
  await stopServer(b, flags['restart-signal'] as NodeJS.Signals);
  const b2 = await startServer('b2', ports[1], env);
  servers[1] = b2;
  const restartTo = Date.now();
  log(`b is back after ${((restartTo - restartFrom) / 1000).toFixed(1)} s (pid ${b2.child.pid})`);

  await Promise.all(clients);
  const ended = Date.now();
  const loadEnd = loadavg()[0];
  const rssEnd = { a: a.rssMb(), b: b2.rssMb() };
  await stopServer(a, 'SIGTERM');
  await stopServer(b2, 'SIGTERM');
  const checked = await verify(url);
  if (!flags.keep) await admin.query(`DROP DATABASE IF EXISTS ${DB_NAME}`);
  await admin.end();

  // Figures
  const statusCounts = new Map<string, number>();
  for (const s of samples) statusCounts.set(String(s.status), (statusCounts.get(String(s.status)) ?? 0) + 1);
  const window = (s: Sample) => s.at >= restartFrom && s.at <= restartTo + 5_000;
  const bad5xx = samples.filter((s) => typeof s.status === 'number' && s.status >= 500 && !(s.status === 503 && window(s)));
  if (bad5xx.length) violations.push(`${bad5xx.length} answers 5xx other than 503 during the restart (see the table above)`);
  const networkOutside = samples.filter((s) => s.status === 'network' && !window(s)).length;
  const fiveXx = new Map<string, number>();
  for (const s of samples) {
    if (typeof s.status !== 'number' || s.status < 500) continue;
    const k = `| ${s.status} | ${s.message ?? ''} | ${window(s) ? 'during the restart' : `outside the restart (at +${((s.at - started) / 1000).toFixed(0)} s)`} |`;
    fiveXx.set(k, (fiveXx.get(k) ?? 0) + 1);
  }
  const fiveXxTable = fiveXx.size
    ? `5xx answers by message:\n\n| status | message | when | count |\n|---|---|---|---|\n${[...fiveXx].map(([k, n]) => `${k} ${n} |`).join('\n')}\n`
    : '';
  const ms = (k?: Kind) => samples.filter((s) => s.status !== 'network' && (!k || s.kind === k)).map((s) => s.ms);
  const row = (name: string, xs: number[]) => `| ${name} | ${xs.length} | ${pct(xs, 50).toFixed(1)} | ${pct(xs, 99).toFixed(1)} |`;
  const seconds = (ended - started) / 1000;
  const ok = violations.length === 0 && unacknowledged === 0;

  const md = `# Soak run

Run ${new Date(started).toISOString()} with \`npm run soak\` on this machine (${cpus().length} cores; 1-minute load average ${loadStart.toFixed(1)} at the start and ${loadEnd.toFixed(1)} at the end, the work of other processes included): ${seconds.toFixed(0)} s of mixed traffic from ${Number(flags.clients)} concurrent clients using ${ORGS.length} API keys (one per organization of 20,000 pulses) against 2 server processes on PostgreSQL + Redis, round robin. Process b was restarted half way (${flags['restart-signal']} at +${((restartFrom - started) / 1000).toFixed(1)} s, then started again on its port, ready at +${((restartTo - started) / 1000).toFixed(1)} s); it stayed in the rotation throughout, so requests sent to it meanwhile met a refused connection (writes were then retried with their key).

Mix: 65 % reads (pulses, stats, daily stats, comments, alerts, org, teams), 2 % GET /v1/actions, 23 % new idempotent writes (POST /v1/actions 3 of 4, POST /v1/teams 1 of 4; a write that gets no 200 is retried with its key every 250 ms, on either process), 10 % repeats of acknowledged writes with their key (must replay the same id).

**Result: ${ok ? 'PASS' : 'FAIL'}**

| figure | value |
|---|---|
| requests | ${samples.length} (${(samples.length / seconds).toFixed(0)}/s) |
| status counts | ${[...statusCounts]
    .sort()
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ')} |
| 5xx other than 503 during the restart | ${bad5xx.length} |
| network errors outside the restart window | ${networkOutside} |
| writes sent | ${writes.length}, acknowledged ${acknowledged.length}, never acknowledged ${unacknowledged}, retries of unanswered writes ${writeRetries} |
| acknowledged writes present exactly once with their id | ${checked.present} of ${acknowledged.length} |
| soak rows in the database | ${checked.rows} (duplicates: ${checked.duplicated}) |
| RSS process a (start -> end) | ${rssStart.a.toFixed(0)} MB -> ${rssEnd.a.toFixed(0)} MB |
| RSS process b (start -> before restart), b after restart (end) | ${rssStart.b.toFixed(0)} MB -> ${rssBBefore.toFixed(0)} MB; ${rssEnd.b.toFixed(0)} MB |

Latency (client side, answered requests, ms):

| requests | n | p50 | p99 |
|---|---|---|---|
${row('all', ms())}
${row('reads', ms('read'))}
${row('new writes (first attempt)', ms('write'))}
${row('retries and replays', ms('retry'))}

${fiveXxTable}
${
  violations.length
    ? `Violations (first 50):\n\n${violations
        .slice(0, 50)
        .map((v) => `- ${v}`)
        .join('\n')}\n`
    : 'No violations: every answer was 2xx or 429, or 503 / a refused connection during the restart; every acknowledged write is in the database once, with its id; every replay returned the same id.\n'
}`;
  mkdirSync(resolve(flags.out!, '..'), { recursive: true });
  writeFileSync(flags.out!, md);
  console.log(md);
  log(`report written to ${flags.out}`);
  process.exitCode = ok ? 0 : 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
