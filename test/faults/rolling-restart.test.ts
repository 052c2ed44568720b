import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { putPlan } from '../../src/db/repositories/plans.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../helpers/db.js';
import { freePort, ROOT, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { runClients, waitUntil, type Sent } from '../helpers/traffic.js';
import { KEY_A, writesDataset } from '../http/writes/fixture.js';

const READERS = 20;
const WRITERS = 10;

async function seed(db: DatabaseExecutor) {
  await putPlan(db, { name: 'unmetered', restApi: true, rateLimitPerMinute: 1_000_000 });
  const data = writesDataset();
  for (const o of data.organizations ?? []) o.plan = 'unmetered';
  await loadDataset(db, data);
}

/** The server processes that are children of the primary (tsx may have a helper child of its own). */
const workerPids = (primary: number) =>
  execFileSync('pgrep', ['-P', String(primary), '-f', ' serve$'], { encoding: 'utf8' }).trim().split('\n').map(Number).sort();

/** 20 keep-alive readers and 10 keep-alive writers, each sending its next request as soon as it has an answer. */
const mixedTraffic = (url: string, tag: string) =>
  runClients(
    READERS + WRITERS,
    (client, seq) =>
      client < READERS
        ? fetch(`${url}/v1/teams`, { headers: { authorization: `Bearer ${KEY_A}` } })
        : fetch(`${url}/v1/teams`, {
            method: 'POST',
            headers: { authorization: `Bearer ${KEY_A}`, 'idempotency-key': `${tag}-${client}-${seq}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `${tag} ${client}-${seq}` }),
          }),
    { maxMs: 100_000 },
  );

const failures = (log: Sent[]) => log.filter((e) => e.status !== 200).map((e) => ({ client: e.client, status: e.status, error: e.error, body: e.body?.slice(0, 200) }));

describe.skipIf(!TEST_DATABASE_URL)(`SIGHUP to the primary of WORKERS=2 under ${READERS} readers and ${WRITERS} writers`, () => {
  let t: TestDatabase;
  let dir: string;
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    t = await createTestDatabase();
    await seed(t.db);
    dir = mkdtempSync(join(tmpdir(), 'cp-faults-roll-'));
  });
  afterEach(async () => {
    // SIGTERM lets the workers end with the primary; SIGKILL only if that hangs.
    const s = server;
    server = undefined;
    if (s && (await Promise.race([s.stop('SIGTERM'), new Promise((r) => setTimeout(() => r('hung'), 15_000))])) === 'hung') await s.stop('SIGKILL');
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('replaces every worker one at a time with the port open: 0 failed requests, every worker pid new, the primary the same; a second SIGHUP during the roll is ignored', async () => {
    const port = await freePort();
    server = await startServerProcess({ DATABASE_URL: t.url!, WORKERS: '2', PORT: String(port) });
    const s = server;
    const primary = s.child.pid!;
    expect(await waitUntil(() => (s.output().match(/listening on/g) ?? []).length === 2)).toBe(true);
    const before = workerPids(primary);
    expect(before.length).toBe(2);

    const traffic = mixedTraffic(s.url, 'Roll');
    expect(await waitUntil(() => traffic.answered() >= 3 * (READERS + WRITERS), 20_000)).toBe(true);
    process.kill(primary, 'SIGHUP');
    await new Promise((r) => setTimeout(r, 200));
    process.kill(primary, 'SIGHUP'); // during the roll: ignored
    const done = await waitUntil(() => /rolling restart (done|stopped)/.test(s.output()), 60_000);
    const answeredAtEnd = traffic.answered();
    // Traffic goes on a little after the roll, on the new workers only.
    await waitUntil(() => traffic.answered() >= answeredAtEnd + READERS + WRITERS, 10_000);
    const log = await traffic.stop();

    expect(done, s.output()).toBe(true);
    expect(s.output()).toContain('rolling restart done: 2 workers replaced');
    expect(s.output()).toContain('SIGHUP ignored: a rolling restart is under way');
    expect(failures(log).slice(0, 5), `${failures(log).length} of ${log.length} requests failed`).toEqual([]);
    expect(s.child.exitCode).toBeNull(); // the primary, same pid, still runs
    const after = workerPids(primary);
    expect(after.length).toBe(2);
    expect(after.filter((pid) => before.includes(pid))).toEqual([]);

    // Every acknowledged write is stored once.
    const names = log.filter((e) => e.client >= READERS).map((e) => JSON.parse(e.body!).name as string);
    const rows = await t.db.query<{ name: string }>({ name: 'test.roll_teams', text: "SELECT name FROM teams WHERE org_id = 'org_a' AND name LIKE 'Roll %'" });
    expect(rows.map((r) => r.name).sort()).toEqual([...names].sort());
  }, 120_000);

  it('stops a roll whose new worker cannot start (its database unreachable): one line says why, the old workers serve on with 0 failed requests', async () => {
    // The entry script every worker runs: a deploy replaces it with one whose workers cannot reach the database.
    const entry = join(dir, 'entry.mjs');
    const cli = JSON.stringify(join(ROOT, 'src/cli/index.ts'));
    writeFileSync(entry, `await import(${cli});\n`);
    const port = await freePort();
    server = await startServerProcess({ DATABASE_URL: t.url!, WORKERS: '2', PORT: String(port) }, { entry });
    const s = server;
    const primary = s.child.pid!;
    expect(await waitUntil(() => (s.output().match(/listening on/g) ?? []).length === 2)).toBe(true);
    const before = workerPids(primary);

    writeFileSync(entry, `process.env.DATABASE_URL = 'postgres://nobody@127.0.0.1:1/unreachable';\nawait import(${cli});\n`);
    const traffic = mixedTraffic(s.url, 'Stuck');
    expect(await waitUntil(() => traffic.answered() >= 3 * (READERS + WRITERS), 20_000)).toBe(true);
    process.kill(primary, 'SIGHUP');
    const stopped = await waitUntil(() => /rolling restart (done|stopped)/.test(s.output()), 60_000);
    const answeredAtEnd = traffic.answered();
    await waitUntil(() => traffic.answered() >= answeredAtEnd + READERS + WRITERS, 10_000);
    const log = await traffic.stop();

    expect(stopped, s.output()).toBe(true);
    const line = s.output().split('\n').find((l) => l.startsWith('rolling restart stopped'));
    expect(line).toMatch(/^rolling restart stopped: new worker \d+ could not start: connect ECONNREFUSED 127\.0\.0\.1:1; 2 old workers keep serving \(0 replaced\)$/);
    expect(failures(log).slice(0, 5), `${failures(log).length} of ${log.length} requests failed`).toEqual([]);
    expect(s.child.exitCode).toBeNull();
    expect(workerPids(primary)).toEqual(before);
    // The failed worker is not restarted in a loop.
    expect(s.output()).not.toMatch(/exited \(1\); starting another/);
  }, 120_000);
});
