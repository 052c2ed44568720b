import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { openDatabase } from '../src/db/open.js';
import { insertMember } from '../src/db/repositories/members.js';
import { operatorActor } from '../src/domain/audit.js';
import { loadDataset } from '../src/domain/dataset.js';
import { inviteMember } from '../src/domain/members.js';
import { hashPassword } from '../src/domain/passwords.js';
import { acceptInvitation } from '../src/domain/sessions.js';

/**
 * Issue 52, M2: a member's right password while a flood of wrong sign-ins runs within every
 * per-account and per-address limit, from 300 and from 3,000 distinct addresses (IPv4, one
 * attempt per address and per round: at most 10 rounds, the per-address limit).
 *
 * The server is the real one (`serve`, in its own process, TRUST_PROXY=127.0.0.1 so that each
 * request's X-Forwarded-For is its client address), on PGlite and on PostgreSQL. Each flood round
 * sends its N posts at once. In the first, half name real accounts, N/20 of them 10 times each
 * (their limit), 10 name the member's own account (its limit: the account is then locked for any
 * browser without the member's device cookie), the rest made-up emails; later rounds name made-up
 * emails only. Meanwhile two members sign in back to back with their right passwords: one carrying
 * the device cookie its earlier sign-in set (the known lane), one from a browser that has none, for
 * an account the flood does not name. Their time is the POST alone (the form page fetched before),
 * compared with the same sign-ins before the flood, same run. BENCH_FLOOD_ENGINES and
 * BENCH_FLOOD_SIZES narrow a run; BENCH_FLOOD_DEBUG prints each refusal of a member.
 */

export interface FloodSample {
  /** Milliseconds of the sign-in POST, and whether it signed in (303 to a console page). */
  ms: number;
  ok: boolean;
  /** The answer's status, and for a 401 whether it was the sign-in page's refusal. */
  status?: number;
  /** No answer: the connection's error (the server shed it), counted as a refusal. */
  error?: string;
}

export interface FloodRow {
  engine: 'PGlite' | 'PostgreSQL';
  addresses: number;
  rounds: number;
  floodPosts: number;
  floodSeconds: number;
  floodStatuses: Record<string, number>;
  device: Summary;
  newDevice: Summary;
}

export interface Summary {
  n: number;
  refused: number;
  p50: number;
  p95: number;
  max: number;
  /** What the refused ones answered: status counts. */
  refusals: Record<string, number>;
}

export interface FloodResult {
  ranAt: string;
  load: string;
  baseline: Record<'PGlite' | 'PostgreSQL', { device: Summary; newDevice: Summary }>;
  rows: FloodRow[];
}

const ROOT = resolve(import.meta.dirname, '..');
const ORG = 'org_flood';
const PASSWORD = 'the member knows this passphrase';
const WRONG = 'a wrong guess at the password';
const MIN_SAMPLES = 20;
const MAX_ROUNDS = 10;

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
};
const refusal = (s: FloodSample) => s.error ?? String(s.status);
const summary = (samples: FloodSample[]): Summary => {
  const ms = samples.map((s) => s.ms);
  return {
    n: samples.length,
    refused: samples.filter((s) => !s.ok).length,
    p50: Math.round(quantile(ms, 0.5)),
    p95: Math.round(quantile(ms, 0.95)),
    max: Math.round(Math.max(0, ...ms)),
    refusals: Object.fromEntries(
      [...new Set(samples.filter((s) => !s.ok).map(refusal))].map((k) => [k, samples.filter((s) => !s.ok && refusal(s) === k).length]),
    ),
  };
};

async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  return port;
}

/** A fresh database: the organization, the two members (real scrypt hashes) and the flood's accounts (one shared hash). */
async function prepare(engine: 'PGlite' | 'PostgreSQL', adminUrl: string, accounts: number): Promise<Record<string, string>> {
  let env: Record<string, string>;
  if (engine === 'PostgreSQL') {
    const name = 'climate_pulse_bench_flood';
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(adminUrl);
    u.pathname = `/${name}`;
    env = { DATABASE_URL: u.toString() };
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'bench-flood-'));
    env = { DATA_DIR: dir, DATABASE_URL: '' };
  }
  const db = await openDatabase({ databaseUrl: env.DATABASE_URL || undefined, dataDir: env.DATA_DIR ?? './data', dbPoolMax: 2, dbStatementTimeoutMs: 60_000 });
  try {
    await migrate(db);
    const now = new Date();
    // The members joined 20 minutes ago: the attempt an acceptance keeps (a choice of password
    // counts as a guess) is out of the window, as for any member who did not join this quarter hour.
    const joined = new Date(now.getTime() - 20 * 60_000);
    await loadDataset(db, { organizations: [{ id: ORG, name: 'Flood', plan: 'business', createdAt: joined.toISOString() }] });
    for (const email of ['member@flood.example', 'other@flood.example']) {
      const inv = await inviteMember(db, ORG, { email, role: 'viewer' }, operatorActor(null), joined);
      await acceptInvitation(db, { token: inv.token, password: PASSWORD }, '192.0.2.1', joined);
    }
    const hash = await hashPassword('the flood accounts share this one');
    await db.transaction(async (tx) => {
      for (let i = 0; i < accounts; i++)
        await insertMember(tx, { orgId: ORG, id: `mem_flood_${i}`, email: `account${i}@flood.example`, role: 'viewer', passwordHash: hash, at: now });
    });
  } finally {
    await db.close();
  }
  return env;
}

async function startServer(label: string, env: Record<string, string>) {
  const port = await freePort();
  const logPath = join(tmpdir(), `bench-${label}.log`);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      TRUST_PROXY: '127.0.0.1',
      // The flood arrives through one proxy here; in the field it comes from N addresses.
      MAX_CONNECTIONS: '20000',
      MAX_CONNECTIONS_PER_ADDRESS: '20000',
      ALERTS_INTERVAL_MINUTES: '0',
      WEBHOOK_POLL_MS: '60000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logFile = createWriteStream(logPath);
  child.stdout!.pipe(logFile);
  child.stderr!.pipe(logFile);
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`${label} exited early; see ${logPath}`);
    if (i > 600) throw new Error(`${label} did not answer within 60 s; see ${logPath}`);
    const up = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    async stop() {
      child.kill('SIGTERM');
      await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

interface Answer {
  status: number;
  location: string | undefined;
  cookies: string[];
  body: string;
}
function http(port: number, method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, agent, headers: { ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          const set = res.headers['set-cookie'] ?? [];
          done({ status: res.statusCode ?? 0, location: res.headers.location, cookies: set, body: text });
        });
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

/** A browser of the console: its cookies, and its form token. */
class Browser {
  cookies = new Map<string, string>();
  constructor(
    readonly port: number,
    readonly address: string,
  ) {}
  private header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  private keep(a: Answer) {
    for (const c of a.cookies) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      if (/Max-Age=0\b/.test(c)) this.cookies.delete(pair.slice(0, i));
      else this.cookies.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return a;
  }
  async token(): Promise<string> {
    const page = this.keep(await http(this.port, 'GET', '/console/sign-in', { cookie: this.header(), 'x-forwarded-for': this.address }));
    return /name="_csrf" value="([^"]+)"/.exec(page.body)![1];
  }
  /** One sign-in POST (the form token fetched before it, not timed), as the browser sends it. */
  async signIn(email: string, password: string, csrf?: string): Promise<FloodSample & { answer: Answer }> {
    // A new form page for each: the session cookie of the last sign-in is dropped first (signed out).
    this.cookies.delete('cp_session');
    const token = csrf ?? (await this.token());
    const body = new URLSearchParams({ _csrf: token, email, password }).toString();
    const t = performance.now();
    const answer = this.keep(
      await http(
        this.port,
        'POST',
        '/console/sign-in',
        {
          cookie: this.header(),
          'content-type': 'application/x-www-form-urlencoded',
          'sec-fetch-site': 'same-origin',
          origin: `http://127.0.0.1:${this.port}`,
          'x-forwarded-for': this.address,
        },
        body,
      ),
    );
    const ms = performance.now() - t;
    return { ms, ok: answer.status === 303 && answer.location !== '/console/sign-in', status: answer.status, answer };
  }
}

async function signInsUntil(b: Browser, email: string, stop: () => boolean, into: FloodSample[]) {
  while (!stop()) {
    const t = performance.now();
    // A connection the server resets (its form page's or its post's) is a refusal of the member, timed.
    const s = await b
      .signIn(email, PASSWORD)
      .catch((e: Error) => ({ ms: performance.now() - t, ok: false, error: `error ${e.message}`, status: undefined, answer: null }));
    into.push({ ms: s.ms, ok: s.ok, status: s.status, ...('error' in s ? { error: s.error } : {}) });
    if (!s.answer) continue;
    if (!s.ok && process.env.BENCH_FLOOD_DEBUG) console.log(email, s.status, Math.round(s.ms), /role="alert">([^<]*)/.exec(s.answer.body)?.[1]);
  }
}

export async function benchSignInFlood(opts: {
  databaseUrl: string;
  engines: Array<'PGlite' | 'PostgreSQL'>;
  sizes: number[];
  log: (...a: unknown[]) => void;
}): Promise<FloodResult> {
  const result: FloodResult = {
    ranAt: new Date().toISOString(),
    load: loadavg()
      .map((x) => x.toFixed(2))
      .join(' '),
    baseline: {} as never,
    rows: [],
  };
  // Real accounts named by the flood: half of the first round's posts, 10 each (their limit); later
  // rounds name made-up emails only, so every account stays within its limit over the run.
  const accountsFor = (n: number) => n / 2 / 10;
  const offsets = opts.sizes.map((_, i) => opts.sizes.slice(0, i).reduce((a, n) => a + accountsFor(n), 0));
  const totalAccounts = opts.sizes.reduce((a, n) => a + accountsFor(n), 0);
  for (const engine of opts.engines) {
    opts.log(`sign-in flood: preparing ${engine} (${totalAccounts} accounts)`);
    const env = await prepare(engine, opts.databaseUrl, totalAccounts);
    const server = await startServer(`sign-in-flood-${engine}`, env);
    try {
      const member = new Browser(server.port, '198.51.100.10');
      const other = new Browser(server.port, '198.51.100.20');
      // The member's earlier sign-in on this browser: it sets the device cookie, if the service has one.
      const first = await member.signIn('member@flood.example', PASSWORD);
      if (!first.ok) throw new Error(`the member's first sign-in failed: ${first.answer.status}`);
      opts.log(`${engine}: device cookie ${member.cookies.has('cp_device') ? 'set' : 'not set'} by the first sign-in`);
      const base = { device: [] as FloodSample[], newDevice: [] as FloodSample[] };
      for (let i = 0; i < MIN_SAMPLES; i++) {
        base.device.push(await member.signIn('member@flood.example', PASSWORD));
        other.cookies.delete('cp_device');
        base.newDevice.push(await other.signIn('other@flood.example', PASSWORD));
      }
      result.baseline[engine] = { device: summary(base.device), newDevice: summary(base.newDevice) };
      opts.log(`${engine} unflooded: device ${JSON.stringify(result.baseline[engine].device)} new device ${JSON.stringify(result.baseline[engine].newDevice)}`);

      for (const [si, n] of opts.sizes.entries()) {
        const flooder = new Browser(server.port, '203.0.113.1');
        const csrf = await flooder.token();
        const cookie = [...flooder.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
        // n distinct IPv4 addresses, each its own /32 (and, in 10.x, far from the members').
        const address = (i: number) => `10.${52 + (si << 4) + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
        const flood = (round: number) =>
          Array.from({ length: n }, (_, i) => {
            let email: string;
            if (round === 0 && i < 10) email = 'member@flood.example';
            else if (round === 0 && i % 2 === 0) email = `account${offsets[si] + ((i / 2) % accountsFor(n))}@flood.example`;
            else email = `made-up-${si}-${round}-${i}@nowhere.example`;
            const body = new URLSearchParams({ _csrf: csrf, email, password: WRONG }).toString();
            return http(
              server.port,
              'POST',
              '/console/sign-in',
              {
                cookie,
                'content-type': 'application/x-www-form-urlencoded',
                'sec-fetch-site': 'same-origin',
                origin: `http://127.0.0.1:${server.port}`,
                'x-forwarded-for': address(i),
              },
              body,
            ).then(
              (a) => String(a.status),
              (e: Error) => `error ${e.message}`,
            );
          });
        const device: FloodSample[] = [];
        const newDevice: FloodSample[] = [];
        const statuses: Record<string, number> = {};
        const t0 = performance.now();
        let rounds = 0;
        while (rounds < MAX_ROUNDS && (rounds === 0 || device.length < MIN_SAMPLES)) {
          let done = false;
          const posts = Promise.all(flood(rounds)).then((all) => {
            done = true;
            for (const s of all) statuses[s] = (statuses[s] ?? 0) + 1;
          });
          other.cookies.delete('cp_device');
          await Promise.all([
            posts,
            signInsUntil(member, 'member@flood.example', () => done, device),
            signInsUntil(other, 'other@flood.example', () => done, newDevice),
          ]);
          rounds++;
        }
        const row: FloodRow = {
          engine,
          addresses: n,
          rounds,
          floodPosts: n * rounds,
          floodSeconds: Math.round((performance.now() - t0) / 100) / 10,
          floodStatuses: statuses,
          device: summary(device),
          newDevice: summary(newDevice),
        };
        opts.log(`${engine} ${n} addresses: ${JSON.stringify(row)}`);
        result.rows.push(row);
      }
    } finally {
      await server.stop();
      if (env.DATA_DIR) rmSync(env.DATA_DIR, { recursive: true, force: true });
    }
  }
  return result;
}

export function signInFloodMarkdown(r: FloodResult): string {
  const ratio = (x: number, b: number) => `${(x / Math.max(b, 1)).toFixed(1)}x`;
  const lines = [
    '## A member signs in during a flood of wrong sign-ins (issue 52, M2)',
    '',
    `Run at ${r.ranAt}, load average ${r.load} at its start. The flood: N distinct IPv4 addresses post one wrong sign-in each per round, all at once. In the first round half name real accounts, N/20 of them 10 times each (their limit), 10 name the member's own account (its limit), the rest made-up emails; later rounds name made-up emails only. Rounds repeat (at most 10, the per-address limit) until the member with its device cookie has ${MIN_SAMPLES} sign-ins timed during the flood; the other member signs in meanwhile, as many times as it can. "With its device cookie": the member signs in from the browser where it signed in before; "new browser": another member, whose account the flood does not name, from a browser without one. Times are the sign-in POST's, in ms; the ratio is the flooded p95 over the same member's unflooded p95 in the same run.`,
    '',
    '| engine | addresses | flood posts (rounds) | flood s | member with its device cookie: n, refused, p50, p95 (ratio) | new browser: n, refused, p50, p95 (ratio) | flood answers |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const [engine, b] of Object.entries(r.baseline))
    lines.push(
      `| ${engine} | none | 0 | - | ${b.device.n}, ${b.device.refused}, ${b.device.p50}, ${b.device.p95} | ${b.newDevice.n}, ${b.newDevice.refused}, ${b.newDevice.p50}, ${b.newDevice.p95} | - |`,
    );
  for (const x of r.rows) {
    const b = r.baseline[x.engine];
    lines.push(
      `| ${x.engine} | ${x.addresses} | ${x.floodPosts} (${x.rounds}) | ${x.floodSeconds} | ${x.device.n}, ${x.device.refused}, ${x.device.p50}, **${x.device.p95}** (${ratio(x.device.p95, b.device.p95)}) | ${x.newDevice.n}, ${x.newDevice.refused}, ${x.newDevice.p50}, ${x.newDevice.p95} (${ratio(x.newDevice.p95, b.newDevice.p95)}) | ${Object.entries(
        x.floodStatuses,
      )
        .map(([s, k]) => `${s}: ${k}`)
        .join(', ')} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** `--only sign-in-flood` (bench/run.ts): both engines, 300 and 3,000 addresses; writes bench/results/sign-in-flood.{json,md}. */
export async function onlySignInFlood(databaseUrl: string, log: (...a: unknown[]) => void) {
  const engines = (process.env.BENCH_FLOOD_ENGINES ?? 'PGlite,PostgreSQL').split(',') as Array<'PGlite' | 'PostgreSQL'>;
  const sizes = (process.env.BENCH_FLOOD_SIZES ?? '300,3000').split(',').map(Number);
  const r = await benchSignInFlood({ databaseUrl, engines, sizes, log });
  const dir = join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'sign-in-flood.json'), `${JSON.stringify(r, null, 2)}\n`);
  writeFileSync(join(dir, 'sign-in-flood.md'), signInFloodMarkdown(r));
  console.log(`\n${signInFloodMarkdown(r)}`);
}

// `npx tsx bench/sign-in-flood.ts`: the same as `--only sign-in-flood`; PostgreSQL from
// BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://root@127.0.0.1:5432/test (the bench
// makes a database of its own there).
if (import.meta.url === `file://${process.argv[1]}`) {
  await onlySignInFlood(process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test', console.log);
}
