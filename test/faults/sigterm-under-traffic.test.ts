import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { migrate } from '../../src/db/migrate.js';
import { PgliteExecutor } from '../../src/db/pglite.js';
import { putPlan } from '../../src/db/repositories/plans.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createTestDatabase, DB_KIND, TEST_DATABASE_URL, type TestDatabase } from '../helpers/db.js';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';
import { IDLE_CLOSE_MS } from '../../src/http/drain.js';
import { runClients, waitUntil } from '../helpers/traffic.js';
import { KEY_A, writesDataset } from '../http/writes/fixture.js';

const CLIENTS = 30;

/** The writes fixture on a plan whose rate limit 30 busy clients do not reach. */
async function seed(db: DatabaseExecutor) {
  await putPlan(db, { name: 'unmetered', restApi: true, rateLimitPerMinute: 1_000_000 });
  const data = writesDataset();
  for (const o of data.organizations ?? []) o.plan = 'unmetered';
  await loadDataset(db, data);
}

const teamsNamed = (db: DatabaseExecutor) =>
  db.query<{ name: string; n: number }>({
    name: 'test.sigterm_teams',
    text: "SELECT name, count(*)::int AS n FROM teams WHERE org_id = 'org_a' AND name LIKE 'Drain %' GROUP BY name",
  });

describe(`SIGTERM under ${CLIENTS} keep-alive writers (${DB_KIND})`, () => {
  let t: TestDatabase | undefined;
  let dir: string | undefined;
  let env: Record<string, string>;
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    if (TEST_DATABASE_URL) {
      t = await createTestDatabase();
      await seed(t.db);
      env = { DATABASE_URL: t.url! };
    } else {
      dir = mkdtempSync(join(tmpdir(), 'cp-faults-sigterm-'));
      const db = await PgliteExecutor.open(dir);
      await migrate(db);
      await seed(db);
      await db.close();
      env = { DATA_DIR: dir, DATABASE_URL: '' };
    }
  }, 120_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // One server for both tests: starting one (the embedded database above all) is the slow part.
  const serverRunning = async () => (server ??= await startServerProcess(env));

  it('ignores SIGHUP as a single process, in one line saying rolling restarts need WORKERS, and keeps serving', async () => {
    const s = await serverRunning();
    process.kill(s.child.pid!, 'SIGHUP');
    expect(await waitUntil(() => s.output().includes('SIGHUP ignored'), 10_000)).toBe(true);
    // A log line (JSON on stdout, issue 54 item 4), at warn.
    const lines = s
      .stdout()
      .split('\n')
      .filter((l) => l.includes('SIGHUP'))
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [40, 'SIGHUP ignored: rolling restarts need WORKERS of 2 or more with DATABASE_URL; this process keeps serving'],
    ]);
    expect(s.child.exitCode).toBeNull();
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
  });

  // Each connection ends after an answer that says Connection: close, or once idle past the 5 s
  // keep-alive the server advertises (IDLE_CLOSE_MS; fetch closes its own idle ones 2 s before):
  // the process exits then, never waiting for the 10 s grace.
  it('exits 0 within IDLE_CLOSE_MS + 2 s of the last in-flight answer (not after the 10 s grace), every request sent before the signal answered 2xx, no acknowledged write lost', async () => {
    const s = await serverRunning();
    const exited = once(s.child, 'exit').then(([code, signal]) => ({ code, signal, at: performance.now() }));
    const traffic = runClients(
      CLIENTS,
      (client, seq) =>
        fetch(`${s.url}/v1/teams`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY_A}`, 'idempotency-key': `drain-${client}-${seq}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Drain ${client}-${seq}` }),
        }),
      { stopOnError: true, maxMs: 30_000 },
    );
    // Every client has its connection open and some writes acknowledged before the signal.
    expect(await waitUntil(() => traffic.answered() >= 2 * CLIENTS, 20_000)).toBe(true);
    const signalAt = performance.now();
    s.child.kill('SIGTERM');
    const exit = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 15_000))]);
    const log = await traffic.stop();
    expect(exit, `still running 15 s after SIGTERM:\n${s.output().slice(-3000)}`).not.toBeNull();
    expect(s.output()).not.toContain('shutdown took too long');
    expect(exit!.code, s.output().slice(-3000)).toBe(0);

    const before = log.filter((e) => e.sentAt < signalAt);
    expect(before.length).toBeGreaterThanOrEqual(2 * CLIENTS);
    const notOk = before.filter((e) => e.status !== 200);
    expect(notOk.slice(0, 3), `${notOk.length} requests sent before the signal were not answered 200`).toEqual([]);
    const lastInFlightAnswer = Math.max(...before.map((e) => e.doneAt));
    expect(
      exit!.at - lastInFlightAnswer,
      `signal at ${signalAt.toFixed(0)} ms, last in-flight answer at ${lastInFlightAnswer.toFixed(0)}, exit at ${exit!.at.toFixed(0)}`,
    ).toBeLessThanOrEqual(IDLE_CLOSE_MS + 2_000);

    // Every acknowledged write is in the database, once.
    const acked = log.filter((e) => e.status === 200).map((e) => JSON.parse(e.body!).name as string);
    let rows: { name: string; n: number }[];
    if (t) rows = await teamsNamed(t.db);
    else {
      const db = await PgliteExecutor.open(dir);
      try {
        rows = await teamsNamed(db);
      } finally {
        await db.close();
      }
    }
    const stored = new Map(rows.map((r) => [r.name, r.n]));
    expect(acked.filter((name) => stored.get(name) !== 1)).toEqual([]);
  }, 60_000);
});
