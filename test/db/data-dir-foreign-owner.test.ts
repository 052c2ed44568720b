import { chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/open.js';
import { DataDirPermissionsError, initializeDataDir } from '../../src/db/pglite-init.js';
import { runCliInProcess } from '../helpers/cli.js';
import { startServerProcess } from '../helpers/process.js';

/**
 * Issue 26, item 9. Run as root on a DATA_DIR owned by another user, the server accepted it; that
 * user swapped admin.sock for a listener of their own and root's `keys create` printed their key.
 * A dangling PG_VERSION link made root write a file wherever it pointed, and a DATA_DIR that is a
 * link got advice (chmod) that cannot fix it. Now a data directory, or an operator socket, of
 * another user is refused by the server and the CLI alike, and no link in or as DATA_DIR is
 * followed. The other user is `nobody` (uid 65534): only root can make that, so without root the
 * suite is skipped. Embedded mode only; it runs on both passes.
 */
const NOBODY = 65534;
const ROOT_ONLY = process.getuid?.() !== 0;
const ATTACKER_KEY = 'cp_live_ATTACKERSKEYATTACKERSKEY0000';
const env = (dir: string) => ({ DATA_DIR: dir, DATABASE_URL: '' });
function chownTree(path: string, uid: number) {
  chownSync(path, uid, uid);
  for (const e of readdirSync(path, { withFileTypes: true })) {
    if (e.isDirectory()) chownTree(join(path, e.name), uid);
    else chownSync(join(path, e.name), uid, uid);
  }
}

/** An HTTP listener on `path` that answers every request as a successful key creation, counting them. */
async function impostor(path: string): Promise<{ server: Server; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    req.resume();
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'key_evil',
        key: ATTACKER_KEY,
        prefix: ATTACKER_KEY.slice(0, 14),
        name: null,
        scope: 'write',
        createdAt: new Date().toISOString(),
        expiresAt: null,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { server, hits: () => hits };
}

describe.skipIf(ROOT_ONLY)('a data directory or operator socket of another user, and links', { timeout: 240_000 }, () => {
  const base = mkdtempSync(join(tmpdir(), 'cp-foreign-'));
  let ready: string; // an initialized data directory of root, copied for each case
  beforeAll(async () => {
    ready = join(base, 'ready');
    await initializeDataDir(ready);
  }, 120_000);
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  const copy = (name: string) => {
    const dir = join(base, name);
    cpSync(ready, dir, { recursive: true });
    return dir;
  };

  it('refuses a DATA_DIR of another user in serve and migrate, with one line, writing nothing', async () => {
    const dir = copy('nobodys');
    chownTree(dir, NOBODY);
    const before = readdirSync(dir).sort();
    const line = `climate-pulse: the embedded database in ${dir} belongs to uid ${NOBODY}, not to uid 0 that runs climate-pulse; run climate-pulse as uid ${NOBODY}, or set DATA_DIR to a directory of uid 0\n`;
    const migrate = await runCliInProcess(['migrate'], env(dir));
    expect([migrate.code, migrate.stderr]).toEqual([1, line]);
    const served = await startServerProcess(env(dir)).then(
      async (s) => {
        await s.stop();
        return 'it served';
      },
      (err: Error) => err.message,
    );
    expect(served).toContain(line.trim());
    await expect(openDatabase(loadConfig({ ...env(dir), LOG_LEVEL: 'silent' }))).rejects.toThrow(DataDirPermissionsError);
    expect(readdirSync(dir).sort()).toEqual(before); // no lock file, no socket
  });

  it("the CLI refuses an operator socket in another user's DATA_DIR, or of another user, and never sends it anything", async () => {
    // The other user's directory, with their listener where the server's socket would be.
    const theirs = join(base, 'their-dir');
    mkdirSync(theirs, { mode: 0o700 });
    const fake = await impostor(join(theirs, 'admin.sock'));
    chownTree(theirs, NOBODY);
    // Root's own directory, where the other user's socket has been put.
    const mine = copy('their-socket');
    const fake2 = await impostor(join(mine, 'admin.sock'));
    chownSync(join(mine, 'admin.sock'), NOBODY, NOBODY);
    try {
      const a = await runCliInProcess(['keys', 'create', '--org', 'org_any'], env(theirs));
      expect([a.code, a.stdout]).toEqual([1, '']);
      expect(a.stderr).toBe(
        `climate-pulse: the embedded database in ${theirs} belongs to uid ${NOBODY}, not to uid 0 that runs climate-pulse; run climate-pulse as uid ${NOBODY}, or set DATA_DIR to a directory of uid 0\n`,
      );
      const b = await runCliInProcess(['keys', 'create', '--org', 'org_any'], env(mine));
      expect([b.code, b.stdout]).toEqual([1, '']);
      expect(b.stderr).toBe(
        `climate-pulse: the operator socket ${join(mine, 'admin.sock')} belongs to uid ${NOBODY}, not to uid 0 that runs climate-pulse; run the command as the user that runs the server\n`,
      );
      expect([fake.hits(), fake2.hits()]).toEqual([0, 0]);
    } finally {
      fake.server.close();
      fake2.server.close();
    }
  });

  it('a dangling PG_VERSION link is refused, and nothing is written where it points', async () => {
    const dir = join(base, 'dangling');
    mkdirSync(dir, { mode: 0o700 });
    const elsewhere = join(base, 'elsewhere');
    mkdirSync(elsewhere);
    const target = join(elsewhere, 'written-by-root');
    symlinkSync(target, join(dir, 'PG_VERSION'));
    const r = await runCliInProcess(['migrate'], env(dir));
    expect([r.code, r.stderr]).toEqual([
      1,
      `climate-pulse: the embedded database in ${dir} holds a symbolic link, PG_VERSION -> ${target}; it never follows links in its directory: remove the link (restore the file from a backup if one is missing) and start again\n`,
    ]);
    expect(existsSync(target)).toBe(false);
    expect(readdirSync(dir)).toEqual(['PG_VERSION']);
  });

  it('a DATA_DIR that is a link is refused with what to set instead, not with chmod advice', async () => {
    const real = copy('real');
    const link = join(base, 'link');
    symlinkSync(real, link);
    const r = await runCliInProcess(['migrate'], env(link));
    expect([r.code, r.stderr]).toEqual([
      1,
      `climate-pulse: DATA_DIR ${link} is a symbolic link to ${real}; the embedded database never follows links: set DATA_DIR=${real}\n`,
    ]);
    expect((await runCliInProcess(['migrate'], env(real))).code).toBe(0); // what the line says works
  });

  it("a link or another user's file inside the data directory is refused", async () => {
    const dir = copy('inside');
    const outside = join(base, 'outside.conf');
    writeFileSync(outside, readFileSync(join(dir, 'postgresql.conf')));
    unlinkSync(join(dir, 'postgresql.conf'));
    symlinkSync(outside, join(dir, 'postgresql.conf'));
    const linked = await runCliInProcess(['migrate'], env(dir));
    expect([linked.code, linked.stderr]).toEqual([
      1,
      `climate-pulse: the embedded database in ${dir} holds a symbolic link, postgresql.conf -> ${outside}; it never follows links in its directory: remove the link (restore the file from a backup if one is missing) and start again\n`,
    ]);
    unlinkSync(join(dir, 'postgresql.conf'));
    writeFileSync(join(dir, 'postgresql.conf'), readFileSync(outside), { mode: 0o600 });
    chownSync(join(dir, 'postgresql.conf'), NOBODY, NOBODY);
    const foreign = await runCliInProcess(['migrate'], env(dir));
    expect([foreign.code, foreign.stderr]).toEqual([
      1,
      `climate-pulse: postgresql.conf in the embedded database in ${dir} belongs to uid ${NOBODY}, not to uid 0 that runs climate-pulse; run climate-pulse as uid ${NOBODY}, or set DATA_DIR to a directory of uid 0\n`,
    ]);
  });
});
