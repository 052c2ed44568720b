/**
 * A round of check-ins under load (issue 45, item 7), on PostgreSQL, in its own database
 * `climate_pulse_bench_checkin`, made again at every run (a week's links open, issue and answer
 * once): one organization with a roster of 10,000 (20 teams of about 500, and 3 people in a team
 * too small to answer as one).
 *
 * 1. The round, mailed by N = 2 server processes at once to an SMTP server started here: every
 *    respondent must receive exactly one mail. Each process sends from its own MAIL_FROM, so the
 *    server can tell which process sent what.
 * 2. The cost of one blind signature with a 2048-bit key: the service's (OpenSSL's raw RSA
 *    operation and the check of its result against the public key, src/crypto/blind-rsa.ts) and
 *    the check-in page's library's own `blindSign` (BigInt arithmetic), on the same key.
 * 3. Every respondent's check-in as the page makes it, one step at a time over the 10,000 links
 *    at concurrency 50, each request timed: open the link, obtain the blind signature, answer.
 *    The floor (bench/floor/server.mjs: bare node:http + pg, the plainest SQL, no validation)
 *    does the same steps, with the same keys and the same RSA operations, over 10,000 links of
 *    its own, in the same run, right after the service's step. Target: the service's p99 under
 *    100 ms per request, no error.
 *
 * The load client sends each respondent's requests from an address of its own (X-Forwarded-For,
 * the service started with TRUST_PROXY=127.0.0.1): the check-in routes' in-memory limit is per
 * address, as 10,000 people would arrive. Blinding and finalizing run in the client between two
 * steps (bench/checkin-client.ts), not inside the timed ones.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import { createWriteStream, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { RSABSSA } from '@cloudflare/blindrsa-ts';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { blindSign, generateBlindKeyPair, privateKeyOf, publicKeyOf } from '../src/crypto/blind-rsa.js';
import { sql } from '../src/db/executor.js';
import { migrate } from '../src/db/migrate.js';
import { PgExecutor } from '../src/db/pg.js';
import { serviceSecret } from '../src/db/repositories/secrets.js';
import { operatorActor } from '../src/domain/audit.js';
import { CheckinKeys } from '../src/domain/checkins/keys.js';
import { replaceRoster } from '../src/domain/checkins/roster.js';
import { updateCheckinSettings } from '../src/domain/checkins/settings.js';
import { type Blinded, blindMany, finalize, publicKeyParts, type PublicKeyParts } from './checkin-client.js';
import { generateOrg } from './dataset.js';

export const CHECKIN_BENCH_DB = 'climate_pulse_bench_checkin';
const ROOT = resolve(import.meta.dirname, '..');
const ORG = 'org_checkin';
const KEY = 'cp_bench_checkin_0123456789abcdef';
const TEAMS = 20;
const TINY = 3;
const TARGET_P99_MS = 100;

export interface Timing {
  requests: number;
  seconds: number;
  reqPerSec: number;
  p50: number;
  p99: number;
  max: number;
  /** Answers other than 200, and requests that failed. */
  errors: number;
}

export interface CheckinStep {
  step: string;
  service: Timing;
  floor: Timing;
  /** service / floor: req/s, and p99. */
  throughputRatio: number;
  p99Ratio: number;
  targetP99Ms: number;
  met: boolean;
}

export interface CheckinBenchResult {
  ranAt: string;
  respondents: number;
  teams: number;
  concurrency: number;
  rosterSeconds: number;
  mail: {
    processes: number;
    mails: number;
    recipients: number;
    /** Recipients that got more than one mail. */
    duplicates: number;
    perProcess: number[];
    /** From the first process's start to the last mail received. */
    seconds: number;
    /** Links the round made (they name no one), and mails still waiting with a link. */
    links: number;
    linksWaiting: number;
    leasesLeft: number;
    /** Mails received in the 5 s after the last one was expected (none, when each went once). */
    lateMails: number;
  };
  signing: { keyBits: number; serviceMs: number; rawMs: number; libraryMs: number; libraryRuns: number; serviceRuns: number };
  steps: CheckinStep[];
  pulses: { service: number; floor: number; withoutTeam: number };
  replays: { secondAnswer: number; secondIssue: number };
}

type Log = (...a: unknown[]) => void;

function dbUrl(admin: string, name: string) {
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return u.toString();
}

async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as AddressInfo).port;
  srv.close();
  return port;
}

interface Proc {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

async function startProcess(label: string, args: string[], env: Record<string, string>): Promise<Proc> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logFile = createWriteStream(join(tmpdir(), `bench-${label}.log`));
  child.stdout!.pipe(logFile);
  child.stderr!.pipe(logFile);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`${label} exited early; see ${join(tmpdir(), `bench-${label}.log`)}`);
    if (i > 600) {
      child.kill('SIGKILL');
      throw new Error(`${label} did not answer within 60 s`);
    }
    try {
      const r = await fetch(url + (label.startsWith('floor') ? '/nope' : '/healthz'));
      await r.arrayBuffer();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    child,
    url,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/** Until the database runs no statement but this one (at most 60 s): a step's tail must not run into the next. */
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

const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

/**
 * POSTs one JSON body per item at `concurrency` (keep-alive connections, each request timed from
 * its start to its answer's last byte), and returns every answer's status and body.
 */
async function drive(base: string, path: (i: number) => string, bodies: unknown[], concurrency: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const url = new URL(base);
  const times: number[] = new Array(bodies.length);
  const statuses: number[] = new Array(bodies.length);
  const answers: string[] = new Array(bodies.length);
  let next = 0;
  const one = (i: number) =>
    new Promise<void>((done) => {
      const payload = JSON.stringify(bodies[i]);
      const t = performance.now();
      const req = http.request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: path(i),
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'x-forwarded-for': address(i) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            times[i] = performance.now() - t;
            statuses[i] = res.statusCode ?? 0;
            answers[i] = text;
            done();
          });
        },
      );
      req.on('error', (err) => {
        times[i] = performance.now() - t;
        statuses[i] = 0;
        answers[i] = String(err);
        done();
      });
      req.end(payload);
    });
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) await one(next++);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] * 10) / 10;
  const timing: Timing = {
    requests: bodies.length,
    seconds,
    reqPerSec: bodies.length / seconds,
    p50: at(0.5),
    p99: at(0.99),
    max: Math.round(sorted[sorted.length - 1] * 10) / 10,
    errors: statuses.filter((s) => s !== 200).length,
  };
  const firstError = statuses.findIndex((s) => s !== 200);
  return { timing, statuses, answers, firstError: firstError < 0 ? undefined : `${statuses[firstError]} ${answers[firstError]?.slice(0, 300)}` };
}

/** The mails a round sends: who sent (MAIL_FROM), to whom, and the link's token. */
function startSmtp() {
  const mails: { from: string; to: string; token: string | undefined }[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        // Quoted-printable soft line breaks joined: the link is on one line again.
        const text = Buffer.concat(chunks)
          .toString('utf8')
          .replace(/=\r?\n/g, '');
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        for (const r of session.envelope.rcptTo) mails.push({ from, to: r.address, token: /\/checkin\/o\/[^#\s]+#([A-Za-z0-9_-]{32})/.exec(text)?.[1] });
        callback();
      });
    },
  });
  return { smtp, mails };
}

async function prepare(adminUrl: string, respondents: number, log: Log) {
  const url = dbUrl(adminUrl, CHECKIN_BENCH_DB);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${CHECKIN_BENCH_DB}`);
  await admin.query(`CREATE DATABASE ${CHECKIN_BENCH_DB}`);
  await admin.end();
  const db = new PgExecutor({ connectionString: url, max: 2 });
  try {
    await migrate(db);
    await generateOrg(db, { orgId: ORG, pulses: 0, teams: TEAMS, key: KEY });
    const rows = ['email,team'];
    for (let i = 0; i < respondents - TINY; i++) rows.push(`r${String(i).padStart(5, '0')}@bench.example.com,Team ${1 + (i % TEAMS)}`);
    for (let i = 0; i < TINY; i++) rows.push(`tiny${i}@bench.example.com,Tiny`);
    const op = operatorActor(null);
    const t0 = performance.now();
    const r = await replaceRoster(db, ORG, rows.join('\n'), op, new Date());
    const rosterSeconds = (performance.now() - t0) / 1000;
    log(`check-ins: roster of ${r.added} replaced from CSV in ${rosterSeconds.toFixed(1)} s`);
    // The round at Monday 00:00 UTC: due whenever this runs, its week's links open; no reminder.
    await updateCheckinSettings(db, ORG, { weekday: 1, hour: 0, timeZone: 'UTC', reminderWeekday: null }, op, new Date());
    await db.exec('ANALYZE');
    return { url, rosterSeconds };
  } finally {
    await db.close();
  }
}

/** The round mailed by `processes` server processes at once; resolves once every respondent has a mail. */
async function mailRound(url: string, respondents: number, processes: number, log: Log) {
  const { smtp, mails } = startSmtp();
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  const procs: Proc[] = [];
  const t0 = performance.now();
  try {
    for (let p = 1; p <= processes; p++) {
      procs.push(
        await startProcess(`checkin-p${p}`, ['dist/cli/index.js', 'serve'], {
          DATABASE_URL: url,
          DB_POOL_MAX: '10',
          ALERTS_INTERVAL_MINUTES: '0',
          SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
          MAIL_FROM: `Bench p${p} <p${p}@bench.example.com>`,
          TRUST_PROXY: '127.0.0.1',
        }),
      );
    }
    const recipients = () => new Set(mails.map((m) => m.to)).size;
    let last = 0;
    let lastChange = performance.now();
    while (recipients() < respondents) {
      await new Promise((r) => setTimeout(r, 200));
      if (mails.length !== last) {
        last = mails.length;
        lastChange = performance.now();
      }
      // A tick every 60 s per process: two minutes without a mail means the round stopped.
      if (performance.now() - lastChange > 150_000) throw new Error(`the round stopped at ${recipients()} of ${respondents} recipients`);
    }
    const seconds = (performance.now() - t0) / 1000;
    const counted = mails.length;
    await new Promise((r) => setTimeout(r, 5_000));
    const byTo = new Map<string, number>();
    for (const m of mails) byTo.set(m.to, (byTo.get(m.to) ?? 0) + 1);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const { rows } = await c.query(
      `SELECT (SELECT count(*) FROM checkin_round_links WHERE org_id = $1)::int AS links,
              (SELECT count(*) FROM checkin_outbox WHERE org_id = $1 AND token_sealed IS NOT NULL)::int AS waiting,
              (SELECT count(*) FROM checkin_outbox WHERE org_id = $1 AND lease_until IS NOT NULL)::int AS leased`,
      [ORG],
    );
    await c.end();
    const mail = {
      processes,
      mails: mails.length,
      recipients: byTo.size,
      duplicates: [...byTo.values()].filter((n) => n > 1).length,
      perProcess: Array.from({ length: processes }, (_, p) => mails.filter((m) => m.from === `p${p + 1}@bench.example.com`).length),
      seconds,
      links: rows[0].links as number,
      linksWaiting: rows[0].waiting as number,
      leasesLeft: rows[0].leased as number,
      lateMails: mails.length - counted,
    };
    log(
      `check-ins: ${mail.mails} mails to ${mail.recipients} recipients in ${seconds.toFixed(1)} s by ${processes} processes (${mail.perProcess.join(' + ')})`,
    );
    const tokens = new Map(mails.map((m) => [m.to, m.token]));
    return { mail, tokens, service: procs[0], others: procs.slice(1) };
  } catch (err) {
    for (const p of procs) await p.stop();
    throw err;
  } finally {
    smtp.close();
  }
}

/** One blind signature with a fresh 2048-bit key: the service's way, the raw operation alone, and the library's own. */
async function signingCost(log: Log) {
  const pair = await generateBlindKeyPair();
  const priv = privateKeyOf(pair.privatePkcs8);
  const pub = publicKeyOf(pair.publicSpki);
  const pk = publicKeyParts(pair.publicSpki);
  const serviceRuns = 2_000;
  const blinded = blindMany(pk, serviceRuns).map((b) => b.blindedMsg);
  for (const b of blinded.slice(0, 100)) blindSign(priv, pub, b); // warm-up
  let t = performance.now();
  for (const b of blinded) blindSign(priv, pub, b);
  const serviceMs = (performance.now() - t) / serviceRuns;
  const { constants, privateDecrypt } = await import('node:crypto');
  t = performance.now();
  for (const b of blinded) privateDecrypt({ key: priv, padding: constants.RSA_NO_PADDING }, b);
  const rawMs = (performance.now() - t) / serviceRuns;
  const suite = RSABSSA.SHA384.PSS.Randomized();
  const sk = await crypto.subtle.importKey('pkcs8', new Uint8Array(pair.privatePkcs8), { name: 'RSA-PSS', hash: 'SHA-384' }, true, ['sign']);
  const libraryRuns = 5;
  t = performance.now();
  for (const b of blinded.slice(0, libraryRuns)) await suite.blindSign(sk, new Uint8Array(b));
  const libraryMs = (performance.now() - t) / libraryRuns;
  log(`check-ins: one blind signature ${serviceMs.toFixed(3)} ms (raw ${rawMs.toFixed(3)} ms); the library's blindSign ${libraryMs.toFixed(0)} ms`);
  return { keyBits: 2048, serviceMs, rawMs, libraryMs, libraryRuns, serviceRuns };
}

interface Side {
  name: 'service' | 'floor';
  proc: Proc;
  tokens: string[];
  opened: { keyId: string; publicKey: string }[];
  blinded: Blinded[];
  keysById: Map<string, PublicKeyParts>;
}

export async function benchCheckin(
  adminUrl: string,
  opts: { respondents?: number; concurrency?: number; processes?: number; log?: Log } = {},
): Promise<CheckinBenchResult> {
  const respondents = opts.respondents ?? 10_000;
  const concurrency = opts.concurrency ?? 50;
  const log = opts.log ?? console.log;
  const { url, rosterSeconds } = await prepare(adminUrl, respondents, log);
  const round = await mailRound(url, respondents, opts.processes ?? 2, log);
  for (const p of round.others) await p.stop();
  const service = round.service;
  let floor: Proc | undefined;
  try {
    if (round.mail.recipients !== respondents || [...round.tokens.values()].some((t) => !t)) throw new Error('a mail without its link');
    await settle(url);
    const signing = await signingCost(log);
    const emails = [...round.tokens.keys()].sort();
    const sides: Side[] = [];
    const svc: Side = { name: 'service', proc: service, tokens: emails.map((e) => round.tokens.get(e)!), opened: [], blinded: [], keysById: new Map() };
    sides.push(svc);
    const steps: CheckinStep[] = [];
    const timed: Record<string, Partial<Record<Side['name'], Timing>>> = { open: {}, issue: {}, answer: {} };
    const check = (step: string, side: Side, r: Awaited<ReturnType<typeof drive>>) => {
      timed[step][side.name] = r.timing;
      log(
        `check-ins ${step} (${side.name}): ${r.timing.reqPerSec.toFixed(0)} req/s p50 ${r.timing.p50} p99 ${r.timing.p99} max ${r.timing.max} ms, errors ${r.timing.errors}${r.firstError ? ` (first: ${r.firstError})` : ''}`,
      );
    };

    // Step 1: open every link. The service makes each (team, week) key at its first opening.
    const open = async (side: Side) => {
      const r = await drive(
        side.proc.url,
        () => `/checkin/o/${ORG}/open`,
        side.tokens.map((token) => ({ token })),
        concurrency,
      );
      check('open', side, r);
      if (r.firstError) throw new Error(`${side.name}: an opening failed: ${r.firstError}`);
      side.opened = r.answers.map((a) => JSON.parse(a) as { keyId: string; publicKey: string });
      await settle(url);
    };
    await open(svc);

    // The floor: the same keys (unsealed here, handed over in a file), links of its own in its own tables.
    const keyFile = join(tmpdir(), `bench-checkin-keys-${process.pid}.json`);
    const db = new PgExecutor({ connectionString: url, max: 2 });
    try {
      const sealer = new CheckinKeys(await serviceSecret(db, 'checkin_key_seal'));
      const keys = await db.query<{ id: string; team_slot: string; public_spki: Buffer; private_sealed: Buffer }>(
        sql('bc.keys', `SELECT id, team_slot, public_spki, private_sealed FROM checkin_keys WHERE org_id = $1`),
        [ORG],
      );
      writeFileSync(
        keyFile,
        JSON.stringify(
          keys.map((k) => ({
            id: k.id,
            teamSlot: k.team_slot,
            publicSpki: k.public_spki.toString('base64url'),
            privatePkcs8: sealer.unseal(ORG, k.id, k.private_sealed).toString('base64url'),
          })),
        ),
        { mode: 0o600 },
      );
      await db.exec(`DROP TABLE IF EXISTS bench_floor_links, bench_floor_spent, bench_floor_pulses;
        CREATE TABLE bench_floor_links (org_id text NOT NULL, token_hash bytea NOT NULL, key_id text NOT NULL,
          opened boolean NOT NULL DEFAULT false, issued boolean NOT NULL DEFAULT false, PRIMARY KEY (org_id, token_hash));
        CREATE TABLE bench_floor_spent (org_id text NOT NULL, key_id text NOT NULL, token_hash bytea NOT NULL, PRIMARY KEY (org_id, token_hash));
        CREATE TABLE bench_floor_pulses (LIKE pulses INCLUDING ALL);`);
      const floorTokens = emails.map(() => randomBytes(24).toString('base64url'));
      await db.query(
        sql('bc.floor_links', `INSERT INTO bench_floor_links (org_id, token_hash, key_id) SELECT $1, h, k FROM unnest($2::bytea[], $3::text[]) AS t(h, k)`),
        [ORG, floorTokens.map((t) => createHash('sha256').update(t).digest()), svc.opened.map((o) => o.keyId)],
      );
      await db.exec('ANALYZE bench_floor_links');
      floor = await startProcess('floor-checkin', ['bench/floor/server.mjs'], {
        DATABASE_URL: url,
        DB_POOL_MAX: '10',
        FLOOR_ORG: ORG,
        FLOOR_CHECKIN_KEYS: keyFile,
      });
      sides.push({ name: 'floor', proc: floor, tokens: floorTokens, opened: [], blinded: [], keysById: new Map() });
    } finally {
      await db.close();
    }
    const flr = sides[1];
    await open(flr);

    // Between the steps, untimed: each link's message blinded under the key its opening named.
    for (const side of sides) {
      const byKey = new Map<string, number[]>();
      side.opened.forEach((o, i) => {
        if (!side.keysById.has(o.keyId)) side.keysById.set(o.keyId, publicKeyParts(Buffer.from(o.publicKey, 'base64url')));
        const list = byKey.get(o.keyId) ?? [];
        list.push(i);
        byKey.set(o.keyId, list);
      });
      side.blinded = new Array(side.opened.length);
      for (const [keyId, idx] of byKey) {
        const bs = blindMany(side.keysById.get(keyId)!, idx.length);
        for (const [j, i] of idx.entries()) side.blinded[i] = bs[j];
      }
    }

    // Step 2: the blind signatures.
    const signatures: Record<string, Buffer[]> = {};
    for (const side of sides) {
      const r = await drive(
        side.proc.url,
        () => `/checkin/o/${ORG}/issue`,
        side.tokens.map((token, i) => ({ token, blindedMessage: side.blinded[i].blindedMsg.toString('base64url') })),
        concurrency,
      );
      check('issue', side, r);
      if (r.firstError) throw new Error(`${side.name}: an issuance failed: ${r.firstError}`);
      signatures[side.name] = r.answers.map((a) => Buffer.from((JSON.parse(a) as { blindSignature: string }).blindSignature, 'base64url'));
      await settle(url);
    }

    // Step 3: the answers, with the finalized tokens; a comment on every third.
    const answers: Record<string, Record<string, unknown>[]> = {};
    for (const side of sides) {
      answers[side.name] = side.opened.map((o, i) => ({
        orgId: ORG,
        keyId: o.keyId,
        message: side.blinded[i].prepared.toString('base64url'),
        signature: finalize(side.keysById.get(o.keyId)!, side.blinded[i], signatures[side.name][i]).toString('base64url'),
        level: 1 + (i % 5),
        reason: null,
        comment: i % 3 === 0 ? `Bench comment ${i}` : null,
      }));
      const r = await drive(side.proc.url, () => '/checkin/answer', answers[side.name], concurrency);
      check('answer', side, r);
      await settle(url);
    }

    for (const step of ['open', 'issue', 'answer']) {
      const s = timed[step].service!;
      const f = timed[step].floor!;
      steps.push({
        step,
        service: s,
        floor: f,
        throughputRatio: s.reqPerSec / f.reqPerSec,
        p99Ratio: s.p99 / Math.max(f.p99, 0.1),
        targetP99Ms: TARGET_P99_MS,
        met: s.errors === 0 && s.p99 < TARGET_P99_MS,
      });
    }

    // A spent token again, a second issuance for an issued link: both refused.
    const again = await drive(service.url, () => '/checkin/answer', [answers.service[0]], 1);
    const reissue = await drive(
      service.url,
      () => `/checkin/o/${ORG}/issue`,
      [{ token: svc.tokens[0], blindedMessage: svc.blinded[0].blindedMsg.toString('base64url') }],
      1,
    );
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const { rows } = await c.query(
      `SELECT (SELECT count(*)::int FROM pulses WHERE org_id = $1) AS service, (SELECT count(*)::int FROM bench_floor_pulses) AS floor,
              (SELECT count(*)::int FROM pulses WHERE org_id = $1 AND subteam_id IS NULL) AS without_team`,
      [ORG],
    );
    await c.end();
    return {
      ranAt: new Date().toISOString(),
      respondents,
      teams: TEAMS,
      concurrency,
      rosterSeconds,
      mail: round.mail,
      signing,
      steps,
      pulses: { service: rows[0].service, floor: rows[0].floor, withoutTeam: rows[0].without_team },
      replays: { secondAnswer: again.statuses[0], secondIssue: reissue.statuses[0] },
    };
  } finally {
    await service.stop();
    await floor?.stop();
  }
}

export function checkinMarkdown(r: CheckinBenchResult): string {
  const f = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));
  const lines = [
    `## A round of check-ins (issue 45; PostgreSQL, section run ${r.ranAt})`,
    '',
    `One organization, ${r.respondents.toLocaleString('en')} respondents (${r.teams} teams of about ${Math.round((r.respondents - TINY) / r.teams)}, and ${TINY} in a team too small to answer as one), database \`${CHECKIN_BENCH_DB}\`; the roster replaced from one CSV file in ${r.rosterSeconds.toFixed(1)} s.`,
    '',
    `**Mail.** ${r.mail.processes} server processes sent the round at once to an SMTP server started by the bench: ${r.mail.mails.toLocaleString('en')} mails to ${r.mail.recipients.toLocaleString('en')} recipients, ${r.mail.duplicates} recipient${r.mail.duplicates === 1 ? '' : 's'} with more than one, ${r.mail.lateMails} late (split ${r.mail.perProcess.join(' + ')}), in ${r.mail.seconds.toFixed(1)} s from the first process's start (the process that started the round sends its links: the others cannot open its outbox's seal); ${r.mail.links.toLocaleString('en')} links made, ${r.mail.linksWaiting} still waiting, ${r.mail.leasesLeft} leases left.`,
    '',
    `**Signing** (one blind signature, ${r.signing.keyBits}-bit key, this machine): the service's (OpenSSL's raw RSA operation, then its result checked against the public key) ${r.signing.serviceMs.toFixed(3)} ms, mean of ${r.signing.serviceRuns.toLocaleString('en')}; the raw operation alone ${r.signing.rawMs.toFixed(3)} ms; the check-in page library's own \`blindSign\` (BigInt arithmetic) ${r.signing.libraryMs.toFixed(0)} ms, mean of ${r.signing.libraryRuns}: **${(r.signing.libraryMs / r.signing.serviceMs).toFixed(0)}x** the service's.`,
    '',
    `**Each step over every link at concurrency ${r.concurrency}** (requests timed one by one by the bench's client; the floor does the same step with the same keys and RSA operations over links of its own, right after the service):`,
    '',
    '| step | service req/s | p50 ms | p99 ms | max ms | non-200 | floor req/s | p50 ms | p99 ms | service/floor | target | met |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const names: Record<string, string> = {
    open: 'open the link (POST /checkin/o/{org}/open)',
    issue: 'blind signature (POST /checkin/o/{org}/issue)',
    answer: 'answer (POST /checkin/answer)',
  };
  for (const s of r.steps)
    lines.push(
      `| ${names[s.step] ?? s.step} | ${s.service.reqPerSec.toFixed(0)} | ${f(s.service.p50)} | ${f(s.service.p99)} | ${f(s.service.max)} | ${s.service.errors} | ${s.floor.reqPerSec.toFixed(0)} | ${f(s.floor.p50)} | ${f(s.floor.p99)} | ${s.throughputRatio.toFixed(2)}x (p99 ${s.p99Ratio.toFixed(2)}x) | p99 < ${s.targetP99Ms} ms | ${s.met ? 'yes' : '**no**'} |`,
    );
  lines.push(
    '',
    `Pulses written: ${r.pulses.service.toLocaleString('en')} by the service (${r.pulses.withoutTeam} without a team), ${r.pulses.floor.toLocaleString('en')} by the floor. A second answer with a spent token: ${r.replays.secondAnswer}; a second issuance for an issued link: ${r.replays.secondIssue}.`,
    '',
  );
  return lines.join('\n');
}
