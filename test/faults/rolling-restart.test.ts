import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { putPlan } from '../../src/db/repositories/plans.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../helpers/db.js';
import { CLI, freePort, primaryLog, startServerProcess, type ServerProcess } from '../helpers/process.js';
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

/** The server processes that are children of the primary. */
const workerPids = (primary: number) =>
  execFileSync('pgrep', ['-P', String(primary), '-f', ' serve$'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map(Number)
    .sort();

/**
 * 20 keep-alive readers and 10 keep-alive writers, each sending its next request 10 ms after its
 * answer: a think time that leaves the two cores room to start the new workers (tight loops made a
 * roll take half a minute), and that leaves connections idle at any instant, as real clients do.
 */
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
    { maxMs: 150_000, pauseMs: 10 },
  );

const failures = (log: Sent[]) =>
  log.filter((e) => e.status !== 200).map((e) => ({ client: e.client, status: e.status, error: e.error, body: e.body?.slice(0, 200) }));

describe.skipIf(!TEST_DATABASE_URL)(`SIGHUP to the primary of WORKERS=2 under ${READERS} readers and ${WRITERS} writers`, () => {
  let t: TestDatabase;
  let dir: string;
  let entry: string;
  let cli: string;
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    t = await createTestDatabase();
    await seed(t.db);
    dir = mkdtempSync(join(tmpdir(), 'cp-faults-roll-'));
    // The script every worker runs (the primary re-runs it for each new one): a deploy replaces it.
    entry = join(dir, 'entry.mjs');
    cli = JSON.stringify(CLI);
    writeFileSync(entry, `await import(${cli});\n`);
  });
  afterAll(async () => {
    // SIGTERM lets the workers end with the primary; SIGKILL only if that hangs.
    const s = server;
    if (s && (await Promise.race([s.stop('SIGTERM'), new Promise((r) => setTimeout(() => r('hung'), 15_000))])) === 'hung') await s.stop('SIGKILL');
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** One server for both tests (starting three processes is the slow part); the second goes on from the first. */
  const serverRunning = async () => {
    if (!server) {
      // LOG_LEVEL=info: the primary's rolls are logged at info (src/cluster.ts).
      const s = await startServerProcess(
        { DATABASE_URL: t.url!, WORKERS: '2', PORT: String(await freePort()), ROLL_SETTLE_MS: '3000', LOG_LEVEL: 'info' },
        { entry },
      );
      server = s;
      expect(await waitUntil(() => (s.output().match(/listening on/g) ?? []).length === 2, 30_000)).toBe(true);
    }
    return server;
  };
  const rollOutcome = (s: ServerProcess, nth: number) => waitUntil(() => (s.output().match(/rolling restart (done|stopped)/g) ?? []).length >= nth, 120_000);

  it('replaces every worker one at a time with the port open: 0 failed requests, every worker pid new, the primary the same; a second SIGHUP during the roll is ignored', async () => {
    const s = await serverRunning();
    const primary = s.child.pid!;
    const before = workerPids(primary);
    expect(before.length).toBe(2);

    const traffic = mixedTraffic(s.url, 'Roll');
    expect(await waitUntil(() => traffic.answered() >= 3 * (READERS + WRITERS), 20_000)).toBe(true);
    process.kill(primary, 'SIGHUP');
    await new Promise((r) => setTimeout(r, 200));
    process.kill(primary, 'SIGHUP'); // during the roll: ignored
    const done = await rollOutcome(s, 1);
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
  }, 200_000);

  it('stops a roll whose new worker cannot start (its database unreachable): one line says why, the old worker not yet replaced serves on with 0 failed requests, never more than WORKERS', async () => {
    const s = await serverRunning();
    const primary = s.child.pid!;
    const before = workerPids(primary);
    expect(before.length).toBe(2);
    const rollsBefore = (s.output().match(/rolling restart (done|stopped)/g) ?? []).length;

    // A deploy whose workers cannot reach the database; the running ones keep theirs.
    writeFileSync(entry, `process.env.DATABASE_URL = 'postgres://nobody@127.0.0.1:1/unreachable';\nawait import(${cli});\n`);
    const traffic = mixedTraffic(s.url, 'Stuck');
    expect(await waitUntil(() => traffic.answered() >= 3 * (READERS + WRITERS), 20_000)).toBe(true);
    process.kill(primary, 'SIGHUP');
    const stopped = await rollOutcome(s, rollsBefore + 1);
    const answeredAtEnd = traffic.answered();
    await waitUntil(() => traffic.answered() >= answeredAtEnd + READERS + WRITERS, 10_000);
    const log = await traffic.stop();

    expect(stopped, s.output()).toBe(true);
    const lines = primaryLog(s).filter((l) => l.startsWith('rolling restart stopped'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^rolling restart stopped: new worker \d+ could not start: connect ECONNREFUSED 127\.0\.0\.1:1; 1 old worker keeps serving \(0 replaced\), the failed place stays empty until the next SIGHUP$/,
    );
    expect(failures(log).slice(0, 5), `${failures(log).length} of ${log.length} requests failed`).toEqual([]);
    expect(s.child.exitCode).toBeNull();
    // The first old worker was stopped before its replacement started (never more than WORKERS); the other serves on.
    const after = workerPids(primary);
    expect(after).toHaveLength(1);
    expect(before).toContain(after[0]);
    // The failed worker is not restarted in a loop.
    expect(s.output()).not.toMatch(/exited \(1\); starting another/);
  }, 200_000);
});
