import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliCommand, maskedUrl, shellWord } from '../../src/cli/hints.js';
import { createCliDatabase, runCli } from '../helpers/cli.js';
import { createTestDatabase, DB_KIND, TEST_DATABASE_URL } from '../helpers/db.js';
import { ROOT, startServerProcess, type ServerProcess } from '../helpers/process.js';

/**
 * Issue 54, item 1: after `db copy` the PostgreSQL server printed `npx climate-pulse keys create
 * --org …`; run as printed, that opened ./data, made a key there, and the live server refused it.
 * Every hint now names the database it was printed for, and runs as printed.
 */
describe('the command a hint names', () => {
  it('is `npx climate-pulse` for ./data, with DATA_DIR for another directory and DATABASE_URL (password hidden) for PostgreSQL', () => {
    expect(cliCommand({ dataDir: './data' }, '/srv/cp')).toBe('npx climate-pulse');
    expect(cliCommand({ dataDir: '/srv/cp/data' }, '/srv/cp')).toBe('npx climate-pulse');
    expect(cliCommand({ dataDir: './restored' }, '/srv/cp')).toBe('DATA_DIR=/srv/cp/restored npx climate-pulse');
    expect(cliCommand({ dataDir: '/var/lib/my data' }, '/srv/cp')).toBe("DATA_DIR='/var/lib/my data' npx climate-pulse");
    expect(cliCommand({ dataDir: './data', databaseUrl: 'postgres://cp@db.internal:5432/pulse' }, '/srv/cp')).toBe(
      'DATABASE_URL=postgres://cp@db.internal:5432/pulse npx climate-pulse',
    );
    expect(cliCommand({ dataDir: './data', databaseUrl: 'postgres://cp:s3cret@db.internal/pulse?sslmode=require&x=1' }, '/srv/cp')).toBe(
      "DATABASE_URL='postgres://cp:***@db.internal/pulse?sslmode=require&x=1' npx climate-pulse",
    );
    expect(maskedUrl('postgres://cp:s3cret@h/db')).toBe('postgres://cp:***@h/db');
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
  });
});

/** The environment of a new shell in the clone: neither DATA_DIR nor DATABASE_URL, so only the hint's own prefix chooses the database. */
function bareShellEnv(): Record<string, string> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k, v]) => v !== undefined && !/^npm_/i.test(k) && k !== 'INIT_CWD' && k !== 'DATA_DIR' && k !== 'DATABASE_URL'),
  ) as Record<string, string>;
  return { ...env, LOG_LEVEL: 'warn', npm_config_update_notifier: 'false' };
}

/** Runs a printed line as a person pasting it would, in the clone. */
function runAsPrinted(line: string) {
  const ran = spawnSync('sh', ['-c', line], { cwd: ROOT, env: bareShellEnv(), encoding: 'utf8', timeout: 120_000 });
  return { code: ran.status, stdout: ran.stdout, stderr: ran.stderr };
}

describe(`a hint a server prints, run as printed, reaches that server's database (${DB_KIND})`, () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>> | undefined;
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.stop();
    await cdb?.close();
  }, 60_000);

  it('`a new API key:` makes a key the running server accepts', async () => {
    cdb = await createCliDatabase();
    const made = await runCli(['orgs', 'create', '--id', 'org_hint', '--name', 'Hint Inc', '--plan', 'business'], cdb.env);
    expect(made.code, made.stderr).toBe(0);
    server = await startServerProcess(cdb.env);
    // The way in follows the address.
    for (let i = 0; i < 100 && !/a new API key:/.test(server.output()); i++) await new Promise((r) => setTimeout(r, 100));
    const line = /^ {2}a new API key: +(.+)$/m.exec(server.output())?.[1];
    expect(line, server.output()).toBeDefined();
    expect(line).toBe(
      cdb.kind === 'pg'
        ? `DATABASE_URL=${shellWord(cdb.env.DATABASE_URL)} npx climate-pulse keys create --org org_hint`
        : `DATA_DIR=${cdb.dir} npx climate-pulse keys create --org org_hint`,
    );
    const ran = runAsPrinted(line!);
    expect(ran.code, ran.stderr).toBe(0);
    const key = ran.stdout.trim();
    expect(key).toMatch(/^cp_live_[0-9A-Za-z]{40}$/);
    const res = await fetch(`${server.url}/v1/org`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { id: string }).id).toBe('org_hint');
  }, 180_000);
});

describe.skipIf(!TEST_DATABASE_URL)('after `db copy` to PostgreSQL, the printed next commands act on the copy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-hint-copy-'));
  let server: ServerProcess | undefined;
  let drop: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await server?.stop();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('the printed `keys create` makes a key the server on the copy accepts, and ./data is never opened', async () => {
    const target = await createTestDatabase();
    await target.db.close();
    drop = target.drop;
    const source = { DATA_DIR: dir, DATABASE_URL: '' };
    expect((await runCli(['orgs', 'create', '--id', 'org_moved', '--name', 'Moved Inc', '--plan', 'business'], source)).code).toBe(0);
    const copied = await runCli(['db', 'copy', '--to', target.url!], source);
    expect(copied.code, copied.stderr).toBe(0);
    const next = copied.stdout.split('Next: ')[1]?.split('\n');
    const cli = `DATABASE_URL=${shellWord(target.url!)} npx climate-pulse`;
    expect(next).toEqual([
      'serve the copy (its keys, members and organizations came with it), and name it in every command:',
      `  ${cli} serve`,
      `  ${cli} orgs list`,
      `  ${cli} keys create --org org_moved`,
      `  the embedded database in ${dir} is left as it was: keep it as a backup, or remove it once the copy serves.`,
      '',
    ]);
    server = await startServerProcess({ DATABASE_URL: target.url!, DATA_DIR: '' });
    const ran = runAsPrinted(next![3].trim());
    expect(ran.code, ran.stderr).toBe(0);
    const res = await fetch(`${server.url}/v1/org`, { headers: { authorization: `Bearer ${ran.stdout.trim()}` } });
    expect(res.status).toBe(200);
  }, 240_000);
});
