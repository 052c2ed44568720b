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
import { freePort, startServerProcess } from '../helpers/process.js';
import { runClients, waitUntil, type Sent } from '../helpers/traffic.js';
import { KEY_A, writesDataset } from '../http/writes/fixture.js';

/**
 * Issue 42, items 3 and 5: with 8 keep-alive clients, SIGTERM with SHUTDOWN_DELAY_MS reset 0-5
 * connections per run, all at the instant the port closed (a client cannot tell whether a reset
 * POST was applied); and every /readyz 503 of a normal drain was a level-50 line with a stack.
 * Here each run starts a server, sends it 8 clients (half of them writing), signals it, and
 * counts the requests that got no answer for any reason other than a refused connection (the
 * port closed: the request was never sent).
 */
// Issue 42's figure is 20 runs per engine and with WORKERS=2, 0 broken requests: `npm run test:drain`
// (DRAIN_RUNS=20; with TEST_DATABASE_URL for PostgreSQL and WORKERS=2). The suite runs each variant
// 3 times on its CI budget, with the same exact bound: 0. The drain closes a connection only after
// an answer that said `Connection: close`, or once it has been idle past the keep-alive time it
// advertised (docs/deployment.md, "Keep-alive and the drain"); before, it closed connections idle
// for a second, and broke about 1 request in 5 runs on a loaded machine (the old drain of issue 42:
// 8 in 5 runs).
const RUNS = Number(process.env.DRAIN_RUNS ?? 3);
const MAX_BROKEN = Number(process.env.DRAIN_MAX_BROKEN ?? 0);
const CLIENTS = 8;

async function seed(db: DatabaseExecutor) {
  await putPlan(db, { name: 'unmetered', restApi: true, rateLimitPerMinute: 1_000_000 });
  const data = writesDataset();
  for (const o of data.organizations ?? []) o.plan = 'unmetered';
  await loadDataset(db, data);
}

const send = (url: string, tag: string) => (client: number, seq: number) =>
  client % 2 === 0
    ? fetch(`${url}/v1/teams`, { headers: { authorization: `Bearer ${KEY_A}` } })
    : fetch(`${url}/v1/teams`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY_A}`, 'idempotency-key': `${tag}-${client}-${seq}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `${tag} ${client}-${seq}` }),
      });

/**
 * A failed request whose connection was not simply refused: reset, or closed under it. A connection
 * refused or reset while it was being opened (`connect ECONNREFUSED`, `connect ECONNRESET`) carried
 * no request: the client knows nothing was sent.
 */
const broken = (log: Sent[]) =>
  log.filter((e) => e.status === undefined && !/connect ECONNREFUSED|connect ECONNRESET|^Error: ECONNREFUSED/.test(e.error ?? ''));
const notOk = (log: Sent[]) => log.filter((e) => e.status !== undefined && e.status !== 200);

describe(`SIGTERM with SHUTDOWN_DELAY_MS under ${CLIENTS} keep-alive clients, ${RUNS} runs (${DB_KIND})`, () => {
  let t: TestDatabase | undefined;
  let dir: string | undefined;
  let env: Record<string, string>;
  beforeAll(async () => {
    if (TEST_DATABASE_URL) {
      t = await createTestDatabase();
      await seed(t.db);
      env = { DATABASE_URL: t.url! };
    } else {
      dir = mkdtempSync(join(tmpdir(), 'cp-faults-drain-resets-'));
      const db = await PgliteExecutor.open(dir);
      await migrate(db);
      await seed(db);
      await db.close();
      env = { DATA_DIR: dir, DATABASE_URL: '' };
    }
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** One run: a server, the clients on it for a moment, SIGTERM, and what the clients saw until it exited. */
  const run = async (i: number, extra: Record<string, string>) => {
    const s = await startServerProcess({
      ...env,
      ...extra,
      PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      SHUTDOWN_DELAY_MS: '1000',
      ALERTS_INTERVAL_MINUTES: '0',
    });
    if (extra.WORKERS) expect(await waitUntil(() => (s.output().match(/listening on/g) ?? []).length === Number(extra.WORKERS), 30_000)).toBe(true);
    const exited = once(s.child, 'exit');
    let signalAt = 0;
    const traffic = runClients(CLIENTS, send(s.url, `Run${i}`), { maxMs: 30_000 });
    try {
      expect(await waitUntil(() => traffic.answered() >= 4 * CLIENTS, 20_000)).toBe(true);
      signalAt = performance.now();
      s.child.kill('SIGTERM');
      // /readyz during the drain: 503, logged at info.
      let readyStatus: number | undefined;
      for (let n = 0; n < 50 && readyStatus !== 503; n++) {
        readyStatus = (await fetch(`${s.url}/readyz`).catch(() => undefined))?.status;
        if (readyStatus === undefined) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const [code] = await Promise.race([exited, new Promise<[null]>((r) => setTimeout(() => r([null]), 20_000))]);
      const log = await traffic.stop();
      return { code, log, output: s.output(), readyStatus, signalAt };
    } finally {
      await traffic.stop();
      if (s.child.exitCode === null && s.child.signalCode === null) await s.stop('SIGKILL');
    }
  };

  const runAll = async (extra: Record<string, string>) => {
    const seen: { run: number; broken: Sent[]; notOk: Sent[]; errorLines: string[]; code: number | null; answered: number }[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await run(i, extra);
      const errorLines = r.output.split('\n').filter((l) => l.startsWith('{') && JSON.parse(l).level >= 50);
      const at = (e: Sent) => ({ ...e, sentAt: Math.round(e.sentAt - r.signalAt), doneAt: Math.round(e.doneAt - r.signalAt) });
      seen.push({
        run: i,
        broken: broken(r.log).map(at),
        notOk: notOk(r.log),
        errorLines,
        code: r.code,
        answered: r.log.filter((e) => e.status === 200).length,
      });
      expect(r.readyStatus, r.output.slice(-2000)).toBe(503);
    }
    const summary = seen
      .map(
        (s) =>
          `run ${s.run}: exit ${s.code}, ${s.answered} answered, ${s.broken.length} broken ${JSON.stringify(s.broken.slice(0, 2).map((e) => [e.error, e.sentAt, e.doneAt]))}, ${s.notOk.length} not 200, ${s.errorLines.length} error lines`,
      )
      .join('\n');
    expect(seen.flatMap((s) => s.broken).length, summary).toBeLessThanOrEqual(MAX_BROKEN);
    expect(seen.flatMap((s) => s.notOk).length, summary).toBe(0);
    expect(
      seen.map((s) => s.code),
      summary,
    ).toEqual(Array(RUNS).fill(0));
    expect(seen.flatMap((s) => s.errorLines).slice(0, 3), summary).toEqual([]);
  };

  it(
    'one process: no request reset or closed under it, every answer 200, exit 0, no line of level 50 or more',
    async () => {
      await runAll({});
    },
    Math.max(600_000, RUNS * 60_000),
  ); // a loaded machine: up to a minute a run

  it.skipIf(!TEST_DATABASE_URL)(
    'WORKERS=2: the same',
    async () => {
      await runAll({ WORKERS: '2' });
    },
    Math.max(600_000, RUNS * 60_000),
  ); // a loaded machine: up to a minute a run

  it.skipIf(!TEST_DATABASE_URL)(
    'a SIGHUP roll of WORKERS=2 under 8 clients with no pause (the cores busy): 0 failed requests',
    async () => {
      // LOG_LEVEL=info: the primary logs a roll's end at info (src/cluster.ts).
      const s = await startServerProcess({
        ...env,
        PORT: String(await freePort()),
        WORKERS: '2',
        ROLL_SETTLE_MS: '2000',
        ALERTS_INTERVAL_MINUTES: '0',
        LOG_LEVEL: 'info',
      });
      try {
        expect(await waitUntil(() => (s.output().match(/listening on/g) ?? []).length === 2, 30_000)).toBe(true);
        const traffic = runClients(CLIENTS, send(s.url, 'Roll'), { maxMs: 120_000 });
        expect(await waitUntil(() => traffic.answered() >= 4 * CLIENTS, 20_000)).toBe(true);
        process.kill(s.child.pid!, 'SIGHUP');
        const done = await waitUntil(() => /rolling restart (done|stopped)/.test(s.output()), 100_000);
        const at = traffic.answered();
        await waitUntil(() => traffic.answered() >= at + 4 * CLIENTS, 10_000);
        const log = await traffic.stop();
        expect(done, s.output()).toBe(true);
        expect(s.output()).toContain('rolling restart done: 2 workers replaced');
        const failed = log.filter((e) => e.status !== 200);
        expect(failed.slice(0, 3), `${failed.length} of ${log.length} requests failed`).toEqual([]);
      } finally {
        await s.stop('SIGTERM');
      }
    },
    200_000,
  );
});
