import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliCommand } from '../../src/cli/hints.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { createCliDatabase, openApp, runCli, runCliInProcess as cli } from '../helpers/cli.js';
import { CLI, ROOT, startServerProcess } from '../helpers/process.js';

const tmp = (name: string) => join(tmpdir(), `cp-${process.pid}-${name}`);

/**
 * These tests start servers and import thousands of rows: on a loaded machine (load 15) one took
 * more than 60 s. Nothing here is about speed, so each waits for what it needs to see, however
 * long it takes, and the bound is only the one that catches a hang.
 */
const SLOW = 600_000;

/** Resolves when the output read so far matches `re`; rejects, with the output, if the process exits first. */
function untilOutput(child: ChildProcess, out: () => string, re: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (re.test(out())) {
        child.stdout?.off('data', check);
        child.stderr?.off('data', check);
        child.off('exit', exited);
        resolve();
      }
    };
    const exited = () => {
      check();
      reject(new Error(`the process exited before printing ${re}:\n${out()}`));
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.once('exit', exited);
    setImmediate(check);
  });
}
const dataset = {
  organizations: [
    {
      id: 'org_i',
      name: 'I',
      plan: 'business',
      createdAt: '2026-01-01T00:00:00.000Z',
      apiKeys: [{ key: 'cp_test_import_0123456789abcdef' }],
      teams: [
        { id: 't1', name: 'One', createdAt: '2026-01-01T00:00:00.000Z' },
        { id: 't2', name: 'Two', createdAt: '2026-01-01T00:00:00.000Z' },
      ],
    },
  ],
};
const BASE = Date.parse('2026-10-01T00:00:00.000Z');
const rows = Array.from({ length: 3000 }, (_, i) => ({
  id: `imp_${i}`,
  level: 1 + (i % 5),
  reason: i % 2 ? 'workload' : null,
  comment: i % 4 === 0 ? `Note, "quoted" ${i}` : null,
  moderationStatus: i % 9 === 0 ? 'FLAGGED' : 'CLEAN',
  subteamId: i % 3 === 0 ? null : i % 3 === 1 ? 't1' : 't2',
  createdAt: new Date(BASE + i * 600_000).toISOString(),
}));

// The CLI runs in this process here (runCliInProcess); the lock, below, is between processes.
describe('climate-pulse import-pulses', () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  beforeAll(async () => {
    cdb = await createCliDatabase();
    writeFileSync(tmp('ds.json'), JSON.stringify(dataset));
    expect((await cli(['load', tmp('ds.json')], cdb.env)).code).toBe(0);
  }, SLOW);
  afterAll(() => cdb.close());

  it(
    'aborts the whole file on a bad row, reporting every bad line, writing nothing',
    async () => {
      const lines = rows.slice(0, 100).map((r) => JSON.stringify(r));
      lines.splice(10, 0, JSON.stringify({ ...rows[0], id: 'bad_level', level: 7 }));
      lines.splice(20, 0, '{not json');
      lines.splice(30, 0, JSON.stringify({ ...rows[0], id: 'bad_team', subteamId: 't9' }));
      writeFileSync(tmp('bad.ndjson'), `${lines.join('\n')}\n`);
      const r = await cli(['import-pulses', '--org', 'org_i', tmp('bad.ndjson')], cdb.env);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('line 11: level: must be <= 5\nline 21: not valid JSON\nline 31: subteamId: unknown team "t9"\n');
      expect(r.stderr.trim().split('\n').pop()).toBe('climate-pulse: import aborted: 3 bad row(s); nothing was written');
      expect(JSON.parse(r.stdout)).toMatchObject({ imported: 0, rows: 103, aborted: true });
      const s = await openApp(cdb.env);
      const [n] = await s.db.query<{ n: number }>(sql('t.count', `SELECT count(*)::int AS n FROM pulses WHERE org_id = 'org_i'`));
      await s.close();
      expect(n.n).toBe(0);
    },
    SLOW,
  );

  it(
    'imports NDJSON and CSV exactly, keeps ids, times and teams, and keeps statistics exact',
    async () => {
      writeFileSync(
        tmp('a.ndjson'),
        `${rows
          .slice(0, 2000)
          .map((r) => JSON.stringify(r))
          .join('\n')}\n`,
      );
      const q = (v: string | null) => (v === null ? '' : `"${v.replace(/"/g, '""')}"`);
      const csv = [
        'id,level,reason,comment,moderationStatus,subteamId,createdAt',
        ...rows.slice(2000).map((r) => [r.id, r.level, q(r.reason), q(r.comment), r.moderationStatus, r.subteamId ?? '', r.createdAt].join(',')),
      ];
      writeFileSync(tmp('b.csv'), `${csv.join('\n')}\n`);
      const a = await cli(['import-pulses', '--org', 'org_i', tmp('a.ndjson')], cdb.env);
      expect(a.code).toBe(0);
      expect(JSON.parse(a.stdout)).toMatchObject({ imported: 2000, skipped: 0, rows: 2000, aborted: false });
      expect(a.stderr).not.toContain('['); // not a TTY: no progress bar
      const b = await cli(['import-pulses', '--org', 'org_i', tmp('b.csv')], cdb.env);
      expect(b.code).toBe(0);
      expect(JSON.parse(b.stdout)).toMatchObject({ imported: 1000, skipped: 0, rows: 1000 });

      const s = await openApp(cdb.env);
      try {
        const headers = { authorization: 'Bearer cp_test_import_0123456789abcdef' };
        const from = new Date(BASE).toISOString();
        const to = new Date(BASE + 3000 * 600_000).toISOString();
        const page = (await s.app.inject({ url: `/v1/pulses?from=${from}&to=${to}&limit=200`, headers })).json();
        expect(page.items[0]).toEqual({
          id: 'imp_2999',
          level: 5,
          moderationStatus: 'CLEAN',
          reason: 'workload',
          subteamId: 't2',
          subteamName: 'Two',
          createdAt: rows[2999].createdAt,
        });
        const stats = (await s.app.inject({ url: '/v1/stats', headers })).json();
        const sum = rows.reduce((acc, r) => acc + r.level, 0);
        expect(stats.pulseCount).toBe(3000);
        expect(stats.avgLevel).toBe(Math.round((sum * 100) / 3000) / 100);
        const daily = (await s.app.inject({ url: `/v1/stats/daily?from=${from}&to=${to}`, headers })).json();
        expect(daily.days.reduce((acc: number, d: { count: number }) => acc + d.count, 0)).toBe(3000);
        const [c] = await s.db.query<{ comment: string }>(sql('t.c', `SELECT comment FROM pulses WHERE org_id = 'org_i' AND id = 'imp_2004'`));
        expect(c.comment).toBe('Note, "quoted" 2004');
      } finally {
        await s.close();
      }
    },
    SLOW,
  );

  it(
    'in skip mode writes the good rows and reports bad rows and existing ids',
    async () => {
      const lines = [
        JSON.stringify(rows[0]),
        JSON.stringify({ ...rows[0], id: 'new_1' }),
        JSON.stringify({ ...rows[0], id: 'new_2', moderationStatus: 'HIDDEN' }),
      ];
      writeFileSync(tmp('skip.ndjson'), `${lines.join('\n')}\n`);
      const r = await cli(['import-pulses', '--org', 'org_i', '--on-error', 'skip', tmp('skip.ndjson')], cdb.env);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ imported: 1, skipped: 2, rows: 3, aborted: false });
      expect(r.stderr).toContain('line 3: moderationStatus:');
      expect(r.stderr).toContain('1 row(s) skipped: their id already exists');
    },
    SLOW,
  );
});

describe('climate-pulse demo and npm start', () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  beforeAll(async () => {
    cdb = await createCliDatabase();
  }, SLOW);
  afterAll(() => cdb.close());

  it(
    'serve --demo-if-empty creates the demo once and prints a curl line that works, and a console invitation; a restart names the organizations and the commands',
    async () => {
      const child = spawn(process.execPath, [CLI, 'serve', '--demo-if-empty'], {
        cwd: ROOT,
        env: { ...process.env, ...cdb.env, PORT: '0', LOG_LEVEL: 'warn' },
      });
      try {
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (out += d));
        await untilOutput(child, () => out, /curl -s -H "Authorization: Bearer (cp_live_\w+)" (http:\S+)/);
        const m = /curl -s -H "Authorization: Bearer (cp_live_\w+)" (http:\S+)/.exec(out);
        expect(m, out).not.toBeNull();
        expect(out).toMatch(/Demo organization org_demo_\w{6} created with \d+ pulses and \d+ alerts? from the alert engine\./);
        // The console's first owner: a single-use invitation link, printed once.
        await untilOutput(child, () => out, /Console: open (http:\S+)/);
        const invitation =
          /Console: open (http:\S+\/console\/invitations\/[A-Za-z0-9_-]{32}) to become the owner \(owner@example\.com\) of org_demo_\w{6}; the link works once, for 72 hours\./.exec(
            out,
          );
        expect(invitation, out).not.toBeNull();
        // Issue 45: then the way to this week's check-in, the People page and the links without SMTP_URL.
        await untilOutput(child, () => out, /checkins links --org/);
        expect(out).toMatch(
          /\nCheck-ins: add yourself to the roster on the console's People page, http:\S+\/console\/people, and answer this week's check-in:\n {2}without SMTP_URL no mail goes; download the week's links on the Check-ins page, http:\S+\/console\/checkins \(CSV\), or print them: (DATA_DIR=\S+ |DATABASE_URL=\S+ )?npx climate-pulse checkins links --org org_demo_\w{6}\n/,
        );
        // Issue 54, item 1: the hint names this very database (a DATA_DIR of its own, or DATABASE_URL).
        expect(out).toContain(
          `or print them: ${cliCommand(cdb.kind === 'pg' ? { databaseUrl: cdb.env.DATABASE_URL, dataDir: '' } : { dataDir: cdb.dir! })} checkins links`,
        );
        const page = await fetch(invitation![1]);
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('Accept invitation');
        const res = await fetch(m![2], { headers: { authorization: `Bearer ${m![1]}` } });
        expect(res.status).toBe(200);
        const stats = await res.json();
        expect(stats.pulseCount).toBeGreaterThan(2000);
        expect(stats.minimumSample).toBe(5);
        const teams = await (await fetch(m![2].replace('/v1/stats', '/v1/teams'), { headers: { authorization: `Bearer ${m![1]}` } })).json();
        expect(teams.items.map((t: { name: string }) => t.name)).toEqual(['Customer Support', 'Design', 'Engineering', 'People & Ops', 'Sales']);
        const alerts = await (await fetch(m![2].replace('/v1/stats', '/v1/alerts'), { headers: { authorization: `Bearer ${m![1]}` } })).json();
        // The engine flags the dip: a MOOD_DROP of Customer Support in a closed week, unread, nothing from other teams.
        const dips = alerts.items.filter((a: { type: string; subteamName: string }) => a.type === 'MOOD_DROP' && a.subteamName === 'Customer Support');
        expect(dips.length).toBeGreaterThanOrEqual(1);
        for (const a of dips) {
          expect(a.id).toMatch(/^al_\w{16}$/);
          expect(a.weekISO).toMatch(/^\d{4}-W\d{2}$/);
          expect(a.readAt).toBeNull();
          expect(a.message).toMatch(/^Mood in Customer Support averaged \d\.\d\d in \d{4}-W\d{2}, \d\.\d\d below its /);
        }
        expect(alerts.items.every((a: { subteamName: string | null }) => a.subteamName === 'Customer Support')).toBe(true);
      } finally {
        if (child.exitCode === null) {
          child.kill('SIGTERM');
          await new Promise((r) => child.once('exit', r));
        }
      }

      // A second start finds an organization and creates no other demo; `npm start` (--demo-if-empty)
      // then names the organizations and the commands that make a key or an invitation.
      const again = await startServerProcess({ ...cdb.env }, { startTimeoutMs: SLOW });
      expect(again.output()).not.toContain('Demo organization');
      await again.stop();
      const restart = spawn(process.execPath, [CLI, 'serve', '--demo-if-empty'], {
        cwd: ROOT,
        env: { ...process.env, ...cdb.env, PORT: '0', LOG_LEVEL: 'warn' },
      });
      let restarted = '';
      restart.stdout.on('data', (d) => (restarted += d));
      restart.stderr.on('data', (d) => (restarted += d)); // the way in is said on stderr
      await untilOutput(restart, () => restarted, /check-in links:/);
      restart.kill('SIGTERM');
      await new Promise((r) => restart.once('exit', r));
      expect(restarted).not.toContain('Demo organization');
      expect(restarted).toMatch(/Organizations: org_demo_\w{6} \(Demo Company\)\./);
      const cli = cliCommand(cdb.kind === 'pg' ? { databaseUrl: cdb.env.DATABASE_URL, dataDir: '' } : { dataDir: cdb.dir! });
      expect(restarted).toContain(`a new API key:           ${cli} keys create --org org_demo_`);
      expect(restarted).toContain(`a console invitation:    ${cli} members invite --org org_demo_`);
      expect(restarted).toMatch(/a console invitation: +\S.* members invite --org org_demo_\w{6} --email you@example\.com --role owner\n/);
      expect(restarted).toMatch(/the check-in roster: +http:\S+\/console\/people\n/);
      expect(restarted).toContain(`check-in links:          ${cli} checkins links --org org_demo_`);

      // The dip: Customer Support's last 14 days average well below its earlier days.
      const s = await openApp(cdb.env);
      const [dip] = await s.db.query<{ recent: number; before: number; flagged: number }>(
        sql(
          't.dip',
          `SELECT (SELECT sum(level_sum)::float8 / sum(pulse_count) FROM pulse_team_day_stats WHERE subteam_id = 'team_support' AND day > now()::date - 14) AS recent,
                (SELECT sum(level_sum)::float8 / sum(pulse_count) FROM pulse_team_day_stats WHERE subteam_id = 'team_support' AND day <= now()::date - 14) AS before,
                (SELECT count(*)::int FROM pulses WHERE moderation_status = 'FLAGGED') AS flagged`,
        ),
      );
      await s.close();
      expect(dip.before - dip.recent).toBeGreaterThan(0.8);
      expect(dip.flagged).toBeGreaterThan(0);
    },
    SLOW,
  );
});

describe('the embedded-mode guard', () => {
  it(
    'stops a second process on the same DATA_DIR at once, naming the holder; takes over a stale lock',
    async () => {
      const cdb = await createCliDatabase();
      if (cdb.kind === 'pg') {
        await cdb.close();
        return; // PostgreSQL mode takes no lock: several processes share the server
      }
      try {
        const server = await startServerProcess(cdb.env, { startTimeoutMs: SLOW });
        // An operator command goes through the running server's socket (CONTRACT section 8) ...
        const viaSocket = await runCli(['keys', 'list', '--org', 'x'], cdb.env);
        expect(viaSocket.code).toBe(1);
        expect(viaSocket.stderr).toMatch(/^climate-pulse: no organization "x"/);
        // ... while a second server stops at once, naming the holder.
        const second = await runCli(['serve'], cdb.env);
        expect(second.code).toBe(1);
        // Its progress lines go to stderr before it (issue 54: stdout holds JSON lines only); the refusal is the last line.
        expect(second.stderr.trim().split('\n').at(-1)).toBe(
          `climate-pulse: the embedded database in ${cdb.dir} is in use by process ${server.child.pid} (climate-pulse serve, since ${
            JSON.parse(readFileSync(join(cdb.dir!, 'climate-pulse.lock'), 'utf8')).startedAt
          }); stop it first (kill ${server.child.pid}, or Ctrl-C in its terminal), or set DATA_DIR to another directory (or DATABASE_URL for PostgreSQL)`,
        );
        const third = await runCli(['load', '/nonexistent.json'], cdb.env);
        expect(third.code).toBe(1);
        await server.stop();
        expect(existsSync(join(cdb.dir!, 'climate-pulse.lock'))).toBe(false);

        writeFileSync(
          join(cdb.dir!, 'climate-pulse.lock'),
          JSON.stringify({
            pid: 2 ** 22 + 12345,
            host: (await import('node:os')).hostname(),
            command: 'climate-pulse serve',
            startedAt: '2026-01-01T00:00:00.000Z',
          }),
        );
        const taken = await runCli(['migrate'], cdb.env);
        expect(taken.code).toBe(0);
        expect(taken.stdout.trim()).toBe('database is up to date');
        expect(existsSync(join(cdb.dir!, 'climate-pulse.lock'))).toBe(false);
      } finally {
        await cdb.close();
      }
    },
    SLOW,
  );
});
