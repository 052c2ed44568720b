import autocannon from 'autocannon';
import { PgExecutor } from '../src/db/pg.js';
import { operatorActor } from '../src/domain/audit.js';
import { acceptInvitation } from '../src/domain/sessions.js';
import { inviteMember } from '../src/domain/members.js';

/**
 * The console's pages under load (issues 27 and 28): the first page after signing in (the overview,
 * its default 30 days) and the overview of a whole year, for the 1M-pulse organization, on
 * PostgreSQL with the HTTP scenarios' connections. A member of the organization is made through
 * the domain (an invitation accepted), and its session cookie is sent with every request.
 */
export interface ConsoleRow {
  page: string;
  path: string;
  reqPerSec: number;
  p50: number;
  p99: number;
  errors: number;
  targetP99Ms: number;
  met: boolean;
}

const DAY = 86_400_000;
const ymd = (t: number) => new Date(t).toISOString().slice(0, 10);

async function sessionCookie(dbUrl: string, orgId: string): Promise<string> {
  const db = new PgExecutor({ connectionString: dbUrl, max: 1 });
  try {
    // The write scenarios just added tens of thousands of actions and audit rows. A server's
    // autovacuum would analyze them soon; the test cluster runs without it, and with a year of
    // stale statistics the planner sorted every action for the overview's five open ones.
    await db.exec('ANALYZE actions; ANALYZE alerts; ANALYZE audit_events; ANALYZE console_sessions');
    const now = new Date();
    const inv = await inviteMember(db, orgId, { email: `bench-${now.getTime()}@bench.example.com`, role: 'viewer' }, operatorActor(null), now);
    const s = await acceptInvitation(db, { token: inv.token, password: 'bench password 0123456789' }, null, now);
    return `cp_session=${s.cookie}`;
  } finally {
    await db.close();
  }
}

export async function benchConsole(
  serviceUrl: string,
  dbUrl: string,
  orgId: string,
  opts: { rounds: number; seconds: number; connections: number; log: (...a: unknown[]) => void },
): Promise<ConsoleRow[]> {
  const cookie = await sessionCookie(dbUrl, orgId);
  const today = Date.now();
  const pages = [
    { page: 'GET /console/overview (first page after sign-in: 30 days)', path: '/console/overview', targetP99Ms: 50 },
    { page: 'GET /console/overview (one year)', path: `/console/overview?from=${ymd(today - 364 * DAY)}&to=${ymd(today)}`, targetP99Ms: 100 },
  ];
  const run = async (path: string, seconds: number) => {
    const r = await autocannon({ url: serviceUrl + path, connections: opts.connections, duration: seconds, headers: { cookie } } as autocannon.Options);
    return { reqPerSec: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.non2xx + r.errors + r.timeouts };
  };
  const rows: ConsoleRow[] = [];
  for (const p of pages) {
    await run(p.path, 1); // warm-up
    const ms: Awaited<ReturnType<typeof run>>[] = [];
    for (let i = 0; i < opts.rounds; i++) ms.push(await run(p.path, opts.seconds));
    const med = (f: (m: Awaited<ReturnType<typeof run>>) => number) => [...ms.map(f)].sort((a, b) => a - b)[Math.floor(ms.length / 2)];
    const row = {
      ...p,
      reqPerSec: med((m) => m.reqPerSec),
      p50: med((m) => m.p50),
      p99: med((m) => m.p99),
      errors: ms.reduce((a, m) => a + m.errors, 0),
      met: false,
    };
    row.met = row.errors === 0 && row.p99 < p.targetP99Ms;
    opts.log(`${p.page}: ${row.reqPerSec.toFixed(0)} req/s p50 ${row.p50} p99 ${row.p99} errors ${row.errors}`);
    rows.push(row);
  }
  return rows;
}

export function consoleMarkdown(rows: ConsoleRow[], floorDailyP99?: number): string[] {
  const lines = [
    '',
    '## The console under load (PostgreSQL, the same connections)',
    '',
    '| page | req/s | p50 ms | p99 ms | non-2xx | target p99 | met |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of rows)
    lines.push(`| ${r.page} | ${r.reqPerSec.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.errors} | < ${r.targetP99Ms} ms | ${r.met ? 'yes' : '**no**'} |`);
  if (floorDailyP99 !== undefined && rows.length > 0) {
    lines.push(
      '',
      `For scale, in the same run the floor answered GET /v1/stats/daily (365 days) at p99 ${floorDailyP99} ms; the one-year overview's p99 is ${(rows[rows.length - 1].p99 / Math.max(floorDailyP99, 1)).toFixed(2)}x that (it draws that answer, lists every team's figures for the range and renders the page; a year of 20 teams is past the bound under which every team's daily chart is drawn inline).`,
    );
  }
  return lines;
}
