import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { PgliteExecutor } from '../../src/db/pglite.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { runCli } from '../helpers/cli.js';
import { TEST_DATABASE_URL } from '../helpers/db.js';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';
import { KEY_A, writesDataset } from '../http/writes/fixture.js';

/**
 * The embedded database on a small tmpfs of its own (filled up), and on a read-only bind
 * mount of the same directory. Mounting needs root (or CAP_SYS_ADMIN); where it is not
 * permitted the suite is skipped, and its title says why.
 */
function mountProblem(): string | null {
  const probe = mkdtempSync(join(tmpdir(), 'cp-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return (
      String((err as { stderr?: Buffer }).stderr ?? err)
        .trim()
        .split('\n')[0] || 'mount failed'
    );
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}
// Embedded mode only: on the PostgreSQL pass DATA_DIR is not used, so the suite runs on the PGlite pass.
const MOUNT_PROBLEM = TEST_DATABASE_URL ? null : mountProblem();
const TITLE = TEST_DATABASE_URL
  ? 'embedded DATA_DIR full or read-only (embedded mode: runs on the PGlite pass)'
  : MOUNT_PROBLEM
    ? `embedded DATA_DIR full or read-only (SKIPPED: mounting a tmpfs is not permitted here: ${MOUNT_PROBLEM})`
    : 'embedded DATA_DIR full or read-only';

const headers = (idem: string) => ({ authorization: `Bearer ${KEY_A}`, 'idempotency-key': idem, 'content-type': 'application/json' });

async function postAction(url: string, idem: string, title: string) {
  const res = await fetch(`${url}/v1/actions`, { method: 'POST', headers: headers(idem), body: JSON.stringify({ title, description: 'x'.repeat(400) }) });
  return { status: res.status, replayed: res.headers.get('idempotent-replayed'), retryAfter: res.headers.get('retry-after'), body: await res.json() };
}

/** Writes zeros into `file` until the file system refuses: afterwards not one block is free. */
function fill(file: string) {
  const fd = openSync(file, 'w');
  try {
    for (const size of [1 << 20, 1 << 12, 1]) {
      const chunk = Buffer.alloc(size);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

async function actionTitles(dir: string): Promise<Map<string, number>> {
  const db = await PgliteExecutor.open(dir);
  try {
    const rows = await db.query<{ title: string; n: number }>({
      name: 'test.titles',
      text: "SELECT title, count(*)::int AS n FROM actions WHERE org_id = 'org_a' GROUP BY title",
    });
    return new Map(rows.map((r) => [r.title, r.n]));
  } finally {
    await db.close();
  }
}

describe.skipIf(MOUNT_PROBLEM !== null || TEST_DATABASE_URL !== undefined)(TITLE, () => {
  let base: string;
  let dir: string;
  let server: ServerProcess | undefined;
  const acknowledged: string[] = []; // titles of actions answered 200
  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'cp-faults-storage-'));
    dir = join(base, 'data');
    mkdirSync(dir);
    // The store takes about 40 MB (most of it pre-allocated WAL); 56 MB leaves room for a few writes.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=56m', 'tmpfs', dir]);
    const db = await PgliteExecutor.open(dir);
    await migrate(db);
    await loadDataset(db, writesDataset());
    await db.close();
  }, 120_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    for (let i = 0; i < 2; i++) {
      try {
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' }); // a bind mount left by a failed test, then the tmpfs
      } catch {
        /* nothing mounted there any more */
      }
    }
    rmSync(base, { recursive: true, force: true });
  });

  it('a DATA_DIR that fills up while serving: writes answer 503 service_unavailable, reads go on, a retried key succeeds once space is back', async () => {
    server = await startServerProcess({ DATA_DIR: dir, DATABASE_URL: '' });
    for (let i = 1; i <= 3; i++) {
      const res = await postAction(server.url, `before-full-${i}`, `Before full ${i}`);
      expect(res.status).toBe(200);
      acknowledged.push(`Before full ${i}`);
    }

    fill(join(dir, 'filler'));
    const statuses: number[] = [];
    let refusedKey: string | undefined;
    let refused: Awaited<ReturnType<typeof postAction>> | undefined;
    for (let i = 1; i <= 150 && !refused; i++) {
      const res = await postAction(server.url, `while-full-${i}`, `While full ${i}`);
      statuses.push(res.status);
      if (res.status === 200) acknowledged.push(`While full ${i}`);
      else {
        refused = res;
        refusedKey = `while-full-${i}`;
      }
    }
    expect(new Set(statuses)).toEqual(new Set(statuses.length > 1 ? [200, 503] : [503])); // nothing but 200 until the first 503
    expect(refused).toEqual({
      status: 503,
      replayed: null,
      retryAfter: '30',
      body: { error: { code: 'service_unavailable', message: 'The database cannot store data right now (its storage is full or read-only); retry later.' } },
    });
    // The operator sees one clear line, not a stack trace (the log line may arrive just after the answer).
    for (let i = 0; i < 40 && !server.output().includes('database storage refuses writes'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(server.output()).toContain('database storage refuses writes (full or read-only)');
    expect(server.output()).toMatch(/No space left on device/);
    expect(server.output()).not.toContain('"stack"');

    const list = await fetch(`${server.url}/v1/actions`, { headers: { authorization: `Bearer ${KEY_A}` } });
    expect(list.status).toBe(200);
    const titles = (await list.json()).items.map((a: { title: string }) => a.title);
    expect(titles.filter((t: string) => t.startsWith('While full')).sort()).toEqual(acknowledged.filter((t) => t.startsWith('While full')).sort());

    unlinkSync(join(dir, 'filler'));
    const n = refusedKey!.slice('while-full-'.length);
    const retry = await postAction(server.url, refusedKey!, `While full ${n}`);
    expect(retry.status).toBe(200);
    expect(retry.replayed).toBeNull(); // the refused attempt left no record behind: this one is the first
    acknowledged.push(`While full ${n}`);
    const replay = await postAction(server.url, refusedKey!, `While full ${n}`);
    expect(replay).toEqual({ ...retry, replayed: 'true' });
    expect(await server.stop('SIGTERM')).toBe(0);
  }, 180_000);

  it('a full DATA_DIR at start: one clear line, exit 1, and the store opens again with every acknowledged write once', async () => {
    await server?.stop('SIGKILL'); // only if the test before failed half-way
    fill(join(dir, 'filler'));
    const res = await runCli(['serve'], { DATA_DIR: dir, DATABASE_URL: '', PORT: '0', HOST: '127.0.0.1' });
    expect(res.code).toBe(1);
    expect(res.stderr.trim().split('\n').at(-1)).toBe(
      `climate-pulse: cannot write the embedded database in ${dir}: no space is left on its device (ENOSPC). ` +
        'Free space or make the directory writable, then start again; nothing was changed',
    );
    unlinkSync(join(dir, 'filler'));
    const titles = await actionTitles(dir);
    for (const t of acknowledged) expect(titles.get(t), t).toBe(1);
    expect([...titles.keys()].filter((t) => t !== 'Retro on workload').sort()).toEqual([...acknowledged].sort());
  }, 120_000);

  it('a read-only DATA_DIR: one clear line, exit 1, and the store opens again with nothing lost', async () => {
    await server?.stop('SIGKILL');
    const before = await actionTitles(dir);
    execFileSync('mount', ['--bind', dir, dir]);
    try {
      execFileSync('mount', ['-o', 'remount,bind,ro', dir, dir]);
      const res = await runCli(['serve'], { DATA_DIR: dir, DATABASE_URL: '', PORT: '0', HOST: '127.0.0.1' });
      expect(res.code).toBe(1);
      expect(res.stderr.trim().split('\n').at(-1)).toBe(
        `climate-pulse: cannot write the embedded database in ${dir}: it is on a read-only file system (EROFS). ` +
          'Free space or make the directory writable, then start again; nothing was changed',
      );
    } finally {
      execFileSync('umount', [dir]); // the bind mount; the tmpfs below stays
    }
    expect(await actionTitles(dir)).toEqual(before);
    const s = await startServerProcess({ DATA_DIR: dir, DATABASE_URL: '' });
    server = s;
    const res = await postAction(s.url, 'after-read-only', 'After read-only');
    expect(res.status).toBe(200);
    expect(await s.stop('SIGTERM')).toBe(0);
  }, 120_000);
});
