import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCliDatabase } from '../helpers/cli.js';
import { DB_KIND } from '../helpers/db.js';
import { CLI, startServerProcess, type ServerProcess } from '../helpers/process.js';

interface LogLine {
  level: number;
  time: number;
  pid: number;
  hostname: string;
  msg: string;
  [field: string]: unknown;
}

/**
 * One log stream (issue 54, item 4): stdout holds JSON lines only, the start's included; what a
 * person reads while the server starts (progress, address, the demo key shown once, the console's
 * link) is on stderr, so that no secret reaches a log collector that reads stdout.
 */
describe(`one log stream (${DB_KIND})`, () => {
  let db: Awaited<ReturnType<typeof createCliDatabase>>;
  let dir: string;
  let s: ServerProcess;
  let code: number | null;

  beforeAll(async () => {
    db = await createCliDatabase();
    dir = mkdtempSync(join(tmpdir(), 'cp-log-stream-'));
    // `serve --demo-if-empty`, as `npm start` runs it.
    const entry = join(dir, 'entry.mjs');
    writeFileSync(entry, `process.argv.push('--demo-if-empty');\nawait import(${JSON.stringify(CLI)});\n`);
    s = await startServerProcess({ ...db.env, LOG_LEVEL: 'info', ALERTS_INTERVAL_MINUTES: '0' }, { entry, startTimeoutMs: 100_000 });
    // The demo's way in is the start's last word, after the address.
    for (let i = 0; i < 200 && !/checkins links --org/.test(s.stderr()); i++) await new Promise((r) => setTimeout(r, 100));
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    process.kill(s.child.pid!, 'SIGHUP'); // a single process ignores it, in a log line
    for (let i = 0; i < 50 && !s.stdout().includes('SIGHUP'); i++) await new Promise((r) => setTimeout(r, 100));
    code = await s.stop('SIGTERM');
  }, 120_000);
  afterAll(async () => {
    await s?.stop('SIGKILL');
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const stdoutLines = () => s.stdout().split('\n').filter(Boolean);

  it('stdout: JSON lines only, in the request log shape, with the start, the ignored SIGHUP and the shutdown', () => {
    expect(code).toBe(0);
    const lines = stdoutLines().map((l) => JSON.parse(l) as LogLine);
    expect(lines.length).toBeGreaterThanOrEqual(4);
    for (const l of lines) expect(Object.keys(l)).toEqual(expect.arrayContaining(['level', 'time', 'pid', 'hostname', 'msg']));
    const start = lines.find((l) => l.startSeconds !== undefined);
    expect(start).toMatchObject({ level: 30, pid: s.child.pid, address: s.url, database: DB_KIND === 'postgres' ? 'postgresql' : 'embedded' });
    expect(start!.msg).toMatch(/^climate-pulse serving http:\/\/127\.0\.0\.1:\d+ \(started in \d+\.\d s\)$/);
    expect(start!.startSeconds).toBeGreaterThan(0);
    expect(lines.filter((l) => l.msg.startsWith('SIGHUP')).map((l) => [l.level, l.msg])).toEqual([
      [40, 'SIGHUP ignored: rolling restarts need WORKERS of 2 or more with DATABASE_URL; this process keeps serving'],
    ]);
    expect(lines.some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM')).toBe(true);
    // The request log is there too.
    expect(lines.some((l) => l.route === '/healthz' && l.status === 200)).toBe(true);
  });

  it('stderr: the sentences for people, with the secrets shown once; none of them on stdout', () => {
    const err = s.stderr();
    expect(err).toMatch(/^climate-pulse: (creating|opening) the embedded database|^climate-pulse: connecting to PostgreSQL/m);
    expect(err).toContain(`climate-pulse listening on ${s.url}`);
    expect(err).toMatch(/^climate-pulse: started in \d+\.\d s \(process \d+; SIGTERM or Ctrl-C stops it\)$/m);
    const key = /API key \(shown once\): (cp_live_\w+)/.exec(err)?.[1];
    const invitation = /\/console\/invitations\/(\w+)/.exec(err)?.[1];
    expect(key).toBeDefined();
    expect(invitation).toBeDefined();
    expect(s.stdout()).not.toContain(key!);
    expect(s.stdout()).not.toContain(invitation!);
    expect(s.stdout()).not.toContain('cp_live_');
    // No JSON line among the sentences.
    expect(err.split('\n').filter((l) => l.startsWith('{'))).toEqual([]);
  });
});

describe('WORKERS where it cannot apply', () => {
  it('WORKERS on the embedded database: a warning line, then one process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cp-log-stream-workers-'));
    try {
      const s = await startServerProcess({ DATA_DIR: dir, DATABASE_URL: '', WORKERS: '3' });
      const stopped = once(s.child, 'exit');
      const warn = s
        .stdout()
        .split('\n')
        .filter((l) => l.includes('WORKERS=3'))
        .map((l) => JSON.parse(l) as LogLine);
      expect(warn.map((l) => [l.level, l.msg, l.role])).toEqual([
        [40, 'WORKERS=3 ignored: the embedded database serves one process; set DATABASE_URL to run several', undefined],
      ]);
      expect(await s.stop('SIGTERM')).toBe(0);
      await stopped;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
