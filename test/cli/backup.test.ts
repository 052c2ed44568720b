import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import { createDemo } from '../../src/domain/demo.js';
import { runCliInProcess } from '../helpers/cli.js';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';

/**
 * `climate-pulse backup FILE` while `serve` holds the embedded database (through its operator
 * socket), and `restore FILE` into a new DATA_DIR (issue 29): the restored database answers what
 * the served one answered when the backup was taken, with writes racing the backup either whole
 * in it or absent, never half.
 */
const DAY = 86_400_000;
const ENV = { DATABASE_URL: '', COMMENTS_RELEASE_DELAY_HOURS: '0', LOG_LEVEL: 'warn' };
const ymd = (t: number) => new Date(t).toISOString().slice(0, 10);

/** Every dir 0700 and every file 0600 (CONTRACT.md section 8). */
function modesOf(dir: string): string[] {
  const wrong: string[] = [];
  const walk = (p: string) => {
    const st = lstatSync(p);
    const mode = st.mode & 0o777;
    if (st.isDirectory()) {
      if (mode !== 0o700) wrong.push(`${p} ${mode.toString(8)}`);
      for (const e of readdirSync(p)) walk(join(p, e));
    } else if (mode !== 0o600) wrong.push(`${p} ${mode.toString(8)}`);
  };
  walk(dir);
  return wrong;
}

describe('backup of the embedded database while it serves, restored into a new DATA_DIR', () => {
  const root = mkdtempSync(join(tmpdir(), 'cp-backup-'));
  const dataDir = join(root, 'data');
  const restored = join(root, 'restored');
  const file = join(root, 'backup.tar.gz');
  let key: string;
  let server: ServerProcess | undefined;

  const now = Date.now(); // one set of ranges for both answers
  const answers = async (url: string) => {
    const whole = `from=${ymd(now - 119 * DAY)}&to=${ymd(now)}`;
    const out: string[] = [];
    for (const path of [
      `/v1/pulses?limit=100&from=${new Date(now - 30 * DAY).toISOString()}&to=${new Date(now - DAY).toISOString()}`,
      '/v1/stats',
      `/v1/stats/daily?from=${new Date(now - 100 * DAY).toISOString()}&to=${new Date(now - DAY).toISOString()}`,
      '/v1/alerts',
      '/v1/actions',
      '/v1/teams',
      `/v1/comments?${whole}&limit=100`,
      `/v1/comments?${whole}&subteamId=team_support&limit=100`,
    ]) {
      const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      out.push(`${path} ${res.status} ${(await res.text()).replace(/"nextCursor":"[^"]+"/, '"nextCursor":"<cursor>"')}`);
    }
    return out;
  };
  const post = (url: string, title: string, idem: string) =>
    fetch(`${url}/v1/actions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idem },
      body: JSON.stringify({ title }),
    });

  beforeAll(async () => {
    const db = await openDatabase(loadConfig({ ...ENV, DATA_DIR: dataDir }));
    try {
      await migrate(db);
      ({ key } = await createDemo(db, new Date()));
    } finally {
      await db.close();
    }
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('backs up through the running server while requests write, and the restored database answers the same', async () => {
    server = await startServerProcess({ ...ENV, DATA_DIR: dataDir });
    const before = await answers(server.url);
    // Writes racing the backup: each action and its idempotency record are in one transaction.
    const racing = Array.from({ length: 12 }, (_, i) => post(server!.url, `racing ${i}`, `race-key-${i}`));
    const res = await runCliInProcess(['backup', file], { ...ENV, DATA_DIR: dataDir });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^backed up the embedded database in .* to .*backup\.tar\.gz \(\d+ bytes, through the running server\)\n$/);
    // A write that waited past the bound for the database held by the copy is 503 (retry later), and absent.
    const statuses = (await Promise.all(racing)).map((r) => r.status);
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    // db copy reads the whole database: it wants the server stopped, and says so before connecting anywhere.
    const copy = await runCliInProcess(['db', 'copy', '--to', 'postgres://nobody@127.0.0.1:1/none'], { ...ENV, DATA_DIR: dataDir });
    expect(copy.code).toBe(1);
    // Issue 54, item 3: the refusal names the server's process and how to stop it.
    expect(copy.stderr).toBe(
      `climate-pulse: a server is running on the embedded database in ${dataDir} (process ${server.child.pid}, climate-pulse serve): ` +
        `stop it first (kill ${server.child.pid}, or Ctrl-C in its terminal); db copy moves the whole database, and writes made while it copies would not move; nothing was copied\n`,
    );
    // Refuses to overwrite a file.
    expect((await runCliInProcess(['backup', file], { ...ENV, DATA_DIR: dataDir })).stderr).toBe(
      `climate-pulse: ${file} exists; name a new file for the backup\n`,
    );
    await server.stop();
    server = undefined;

    const r = await runCliInProcess(['restore', file], { ...ENV, DATA_DIR: restored });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // Issue 54, items 1 and 4: restore ends with its next step, naming the restored DATA_DIR.
    expect(r.stdout).toMatch(/^restored .* into .*restored: \d+ files, 1 organization\n/);
    expect(r.stdout.split('\n').slice(1)).toEqual([
      `Next: serve it (DATA_DIR=${restored} npx climate-pulse serve), then work on it with the same prefix, for instance: DATA_DIR=${restored} npx climate-pulse orgs list`,
      '',
    ]);
    expect(modesOf(restored)).toEqual([]);
    expect(existsSync(join(restored, 'admin.sock'))).toBe(false);

    server = await startServerProcess({ ...ENV, DATA_DIR: restored });
    // Its hints name the restored DATA_DIR, not ./data (issue 54, item 1); they follow the address.
    for (let i = 0; i < 100 && !server.output().includes('a new API key:'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(server.output()).toContain(`  a new API key:           DATA_DIR=${restored} npx climate-pulse keys create --org `);
    const after = await answers(server.url);
    const actions = (a: string[]) => JSON.parse(a[4].slice(a[4].indexOf('{'))) as { items: { title: string }[] };
    // What the racing writes added is whole: each racing action in the backup replays its POST.
    const raced = actions(after).items.filter((a) => a.title.startsWith('racing '));
    for (const a of raced) {
      const replay = await post(server.url, a.title, `race-key-${a.title.slice(7)}`);
      expect(replay.headers.get('idempotent-replayed'), a.title).toBe('true');
    }
    const without = (a: string[]) =>
      a.map((line, i) => (i === 4 ? JSON.stringify({ items: actions(a).items.filter((x) => !x.title.startsWith('racing ')) }) : line));
    expect(without(after)).toEqual(without(before));
    await server.stop();
    server = undefined;
  }, 180_000);

  it('backs up without a server too; restore refuses a DATA_DIR that is not empty, and with DATABASE_URL', async () => {
    const second = join(root, 'second.tar.gz');
    const res = await runCliInProcess(['backup', second], { ...ENV, DATA_DIR: restored });
    expect(res.stderr).toBe('');
    expect(res.stdout).toMatch(/\(\d+ bytes\)\n$/);
    const busy = join(root, 'busy');
    mkdirSync(busy);
    writeFileSync(join(busy, 'note.txt'), 'mine');
    const refused = await runCliInProcess(['restore', second], { ...ENV, DATA_DIR: busy });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`climate-pulse: ${busy} is not empty; restore into a new or empty DATA_DIR (nothing was changed)\n`);
    expect(readdirSync(busy)).toEqual(['note.txt']);
    // A file that is not a backup, or one cut short: refused, and the new DATA_DIR holds nothing of it.
    const garbage = join(root, 'garbage.tar.gz');
    writeFileSync(garbage, 'not a backup');
    const cut = join(root, 'cut.tar.gz');
    writeFileSync(cut, readFileSync(second).subarray(0, Math.floor(statSync(second).size / 2)));
    for (const bad of [garbage, cut]) {
      const dir = join(root, `from-${bad === cut ? 'cut' : 'garbage'}`);
      const r = await runCliInProcess(['restore', bad], { ...ENV, DATA_DIR: dir });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(
        new RegExp(
          `^climate-pulse: ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not a backup made by climate-pulse backup \\(.*\\); nothing was restored\n$`,
        ),
      );
      expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
    }
    const pg = await runCliInProcess(['restore', second], { ...ENV, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', DATA_DIR: join(root, 'never') });
    expect(pg.stderr).toMatch(/^climate-pulse: restore is for the embedded database \(DATA_DIR\) only/);
    expect(existsSync(join(root, 'never'))).toBe(false);
  }, 120_000);
});
