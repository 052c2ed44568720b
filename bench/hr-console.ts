import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { PgExecutor } from '../src/db/pg.js';
import { operatorActor } from '../src/domain/audit.js';
import { replaceRoster } from '../src/domain/checkins/roster.js';
import { exportWeekLinks } from '../src/domain/checkins/rounds.js';
import { addWeeks, roundTime, weekOf } from '../src/domain/checkins/week.js';
import { DEFAULT_CHECKIN_SETTINGS } from '../src/db/repositories/checkins.js';
import { inviteMember } from '../src/domain/members.js';
import { acceptInvitation } from '../src/domain/sessions.js';
import { generateOrg } from './dataset.js';

/**
 * The HR lead's console at scale (issue 53, item 6): the People page with a roster of 5,000 and
 * the Overview of 50 teams over 52 weeks (its heatmap of 50 x 52 cells, participation of two
 * rounds), each against the API read that gives the same figures, in the same run on the same
 * server process: the operator API's roster (GET /admin/v1/organizations/{id}/respondents, every
 * respondent) for the People page, and GET /v1/stats/daily over the same year for the Overview.
 * Targets: p99 under 100 ms each. Its own database on the bench's PostgreSQL.
 */
const ROOT = resolve(import.meta.dirname, '..');
const DB_NAME = 'bench_hr_console';
const ORG = 'org_hr_bench';
const KEY = 'cp_live_hrbench0123456789abcdefghijklmnopqrstuv';
const ADMIN_TOKEN = 'hr-bench-operator-token-0123456789abcdef';
const DAY = 86_400_000;
const ymd = (t: number) => new Date(t).toISOString().slice(0, 10);

export interface HrConsoleRow {
  page: string;
  path: string;
  api: string;
  apiPath: string;
  reqPerSec: number;
  p50: number;
  p99: number;
  apiReqPerSec: number;
  apiP50: number;
  apiP99: number;
  /** page p99 / API p99. */
  p99Ratio: number;
  bytes: number;
  apiBytes: number;
  errors: number;
  targetP99Ms: number;
  met: boolean;
}

export interface HrConsoleResult {
  ranAt: string;
  respondents: number;
  teams: number;
  pulses: number;
  connections: number;
  rows: HrConsoleRow[];
}

type Log = (...a: unknown[]) => void;

async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as AddressInfo).port;
  srv.close();
  return port;
}

async function prepare(adminUrl: string, o: { respondents: number; teams: number; pulses: number }, log: Log): Promise<string> {
  const u = new URL(adminUrl);
  u.pathname = `/${DB_NAME}`;
  const url = u.toString();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB_NAME}`);
  await admin.query(`CREATE DATABASE ${DB_NAME}`);
  await admin.end();
  const db = new PgExecutor({ connectionString: url, max: 2 });
  try {
    await migrate(db);
    const now = new Date();
    await generateOrg(db, { orgId: ORG, pulses: o.pulses, teams: o.teams, key: KEY, days: 364, now });
    const rows = ['email,team'];
    for (let i = 0; i < o.respondents; i++) rows.push(`r${String(i).padStart(5, '0')}@hr-bench.example.com,Team ${1 + (i % o.teams)}`);
    const op = operatorActor(null);
    const t0 = performance.now();
    await replaceRoster(db, ORG, rows.join('\n'), op, new Date(now.getTime() - 60 * DAY));
    log(`hr console: roster of ${o.respondents} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    // Last week's round and this week's, started by the links file (no mail): the Overview's participation.
    for (const week of [addWeeks(weekOf(now), -1), weekOf(now)]) {
      const at = new Date(Math.min(roundTime(week, DEFAULT_CHECKIN_SETTINGS).getTime(), now.getTime()));
      await exportWeekLinks(db, ORG, { linkFor: () => '', mails: false }, op, at);
    }
    await db.exec('ANALYZE');
    return url;
  } finally {
    await db.close();
  }
}

async function sessionCookie(url: string): Promise<string> {
  const db = new PgExecutor({ connectionString: url, max: 1 });
  try {
    const now = new Date();
    const inv = await inviteMember(db, ORG, { email: `hr-${now.getTime()}@hr-bench.example.com`, role: 'admin' }, operatorActor(null), now);
    const s = await acceptInvitation(db, { token: inv.token, password: 'bench password 0123456789' }, null, now);
    return `cp_session=${s.cookie}`;
  } finally {
    await db.close();
  }
}

async function startServer(url: string): Promise<{ child: ChildProcess; base: string; admin: string; stop(): Promise<void> }> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, ['dist/cli/index.js', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: url,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_PORT: String(adminPort),
      ADMIN_HOST: '127.0.0.1',
      ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      ALERTS_INTERVAL_MINUTES: '0',
      MAX_EVENT_LOOP_DELAY_MS: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logFile = createWriteStream(join(tmpdir(), 'bench-hr-console.log'));
  child.stdout!.pipe(logFile);
  child.stderr!.pipe(logFile);
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the server exited early; see ${join(tmpdir(), 'bench-hr-console.log')}`);
    if (i > 600) throw new Error('the server did not answer within 60 s');
    try {
      await (await fetch(`${base}/healthz`)).arrayBuffer();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    child,
    base,
    admin: `http://127.0.0.1:${adminPort}`,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 10_000))]);
    },
  };
}

/**
 * The load of `seconds` at `connections`. It starts after a settling second: autocannon stops at
 * its duration with requests still in the server (the operator roster's ten answers of 850 KB are
 * about half a second of work), and the next measurement must not queue behind them.
 */
async function drive(url: string, headers: Record<string, string>, seconds: number, connections: number) {
  await new Promise((r) => setTimeout(r, 1_000));
  const r = await autocannon({ url, connections, duration: seconds, headers } as autocannon.Options);
  return { reqPerSec: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.non2xx + r.errors + r.timeouts };
}

/** Runs the People page and the Overview at scale, each alternating with its API read, rounds times. */
export async function benchHrConsole(
  adminUrl: string,
  opts: { respondents?: number; teams?: number; pulses?: number; rounds?: number; seconds?: number; connections?: number; log: Log },
): Promise<HrConsoleResult> {
  const o = { respondents: opts.respondents ?? 5_000, teams: opts.teams ?? 50, pulses: opts.pulses ?? 260_000 };
  const [rounds, seconds, connections] = [opts.rounds ?? 3, opts.seconds ?? 5, opts.connections ?? 10];
  const url = await prepare(adminUrl, o, opts.log);
  const cookie = await sessionCookie(url);
  const server = await startServer(url);
  try {
    const today = Date.now();
    const from = ymd(today - 363 * DAY);
    const to = ymd(today + DAY);
    const pairs = [
      {
        page: `GET /console/people (page 1 of ${Math.ceil(o.respondents / 50)}, ${o.respondents} people in ${o.teams} teams)`,
        path: `${server.base}/console/people`,
        headers: { cookie },
        api: `GET /admin/v1/organizations/{id}/respondents (the whole roster)`,
        apiPath: `${server.admin}/admin/v1/organizations/${ORG}/respondents`,
        apiHeaders: { authorization: `Bearer ${ADMIN_TOKEN}` },
      },
      {
        page: `GET /console/overview (${o.teams} teams, 52 weeks)`,
        path: `${server.base}/console/overview?from=${from}&to=${to}`,
        headers: { cookie },
        api: 'GET /v1/stats/daily (the same year)',
        apiPath: `${server.base}/v1/stats/daily?from=${from}T00:00:00Z&to=${to}T00:00:00Z`,
        apiHeaders: { authorization: `Bearer ${KEY}` },
      },
    ];
    const rows: HrConsoleRow[] = [];
    for (const p of pairs) {
      const sizes = await Promise.all(
        [
          [p.path, p.headers],
          [p.apiPath, p.apiHeaders],
        ].map(async ([u, h]) => {
          const r = await fetch(u as string, { headers: h as Record<string, string> });
          if (r.status !== 200) throw new Error(`${u}: ${r.status} ${(await r.text()).slice(0, 300)}`);
          return (await r.arrayBuffer()).byteLength;
        }),
      );
      await drive(p.path, p.headers, 1, connections); // warm-up
      await drive(p.apiPath, p.apiHeaders, 1, connections);
      const page: Awaited<ReturnType<typeof drive>>[] = [];
      const api: Awaited<ReturnType<typeof drive>>[] = [];
      for (let i = 0; i < rounds; i++) {
        page.push(await drive(p.path, p.headers, seconds, connections));
        api.push(await drive(p.apiPath, p.apiHeaders, seconds, connections));
      }
      const med = (ms: typeof page, f: (m: (typeof page)[number]) => number) => [...ms.map(f)].sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
      const row: HrConsoleRow = {
        page: p.page,
        path: p.path.replace(server.base, ''),
        api: p.api,
        apiPath: p.apiPath.replace(server.base, '').replace(server.admin, ''),
        reqPerSec: med(page, (m) => m.reqPerSec),
        p50: med(page, (m) => m.p50),
        p99: med(page, (m) => m.p99),
        apiReqPerSec: med(api, (m) => m.reqPerSec),
        apiP50: med(api, (m) => m.p50),
        apiP99: med(api, (m) => m.p99),
        p99Ratio: 0,
        bytes: sizes[0]!,
        apiBytes: sizes[1]!,
        errors: [...page, ...api].reduce((n, m) => n + m.errors, 0),
        targetP99Ms: 100,
        met: false,
      };
      row.p99Ratio = row.p99 / Math.max(row.apiP99, 1);
      row.met = row.errors === 0 && row.p99 < row.targetP99Ms;
      opts.log(`${row.page}: p99 ${row.p99} ms (API ${row.apiP99} ms, ${row.p99Ratio.toFixed(2)}x), ${row.reqPerSec.toFixed(0)} req/s, errors ${row.errors}`);
      rows.push(row);
    }
    return { ranAt: new Date().toISOString(), ...o, connections, rows };
  } finally {
    await server.stop();
  }
}

export function hrConsoleMarkdown(r: HrConsoleResult): string {
  const lines = [
    "## The HR lead's console at scale (issue 53)",
    '',
    `${r.respondents} people on the roster in ${r.teams} teams, ${r.pulses} pulses over 52 weeks, two rounds; one server process on PostgreSQL, ${r.connections} connections; median of the rounds. Each page is measured alternately with the API read that gives its figures.`,
    '',
    '| page | p50 ms | p99 ms | req/s | bytes | API read | API p99 ms | API req/s | API bytes | p99 ratio | non-2xx | target p99 | met |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const x of r.rows)
    lines.push(
      `| ${x.page} | ${x.p50} | ${x.p99} | ${x.reqPerSec.toFixed(0)} | ${x.bytes} | ${x.api} | ${x.apiP99} | ${x.apiReqPerSec.toFixed(0)} | ${x.apiBytes} | ${x.p99Ratio.toFixed(2)}x | ${x.errors} | < ${x.targetP99Ms} ms | ${x.met ? 'yes' : '**no**'} |`,
    );
  return `${lines.join('\n')}\n`;
}
