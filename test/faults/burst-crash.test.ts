import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { migrate } from '../../src/db/migrate.js';
import { PgliteExecutor } from '../../src/db/pglite.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createTestDatabase, DB_KIND, TEST_DATABASE_URL, type TestDatabase } from '../helpers/db.js';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';
import { KEY_A, writesDataset } from '../http/writes/fixture.js';

const N = 200;
const KILL_AFTER = 40; // acknowledged answers before the SIGKILL

interface Answer {
  status: number;
  replayed: string | null;
  body: string;
}

async function postAction(url: string, i: number): Promise<Answer> {
  const res = await fetch(`${url}/v1/actions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY_A}`, 'idempotency-key': `burst-key-${String(i).padStart(3, '0')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: `Burst ${i}` }),
  });
  return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: await res.text() };
}

const countBurst = (db: DatabaseExecutor) =>
  db.query<{ title: string; n: number }>({
    name: 'test.burst_count',
    text: "SELECT title, count(*)::int AS n FROM actions WHERE org_id = 'org_a' AND title LIKE 'Burst %' GROUP BY title",
  });

describe(`a server SIGKILLed during a burst of ${N} idempotent POSTs (${DB_KIND})`, () => {
  let t: TestDatabase | undefined;
  let dir: string | undefined;
  let env: Record<string, string>;
  const servers: ServerProcess[] = [];
  beforeAll(async () => {
    if (TEST_DATABASE_URL) {
      t = await createTestDatabase();
      await loadDataset(t.db, writesDataset());
      env = { DATABASE_URL: t.url! };
    } else {
      dir = mkdtempSync(join(tmpdir(), 'cp-faults-burst-'));
      const db = await PgliteExecutor.open(dir);
      await migrate(db);
      await loadDataset(db, writesDataset());
      await db.close();
      env = { DATA_DIR: dir, DATABASE_URL: '' };
    }
  }, 120_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('then every POST retried with its key: each action exists exactly once, and every acknowledged POST replays its id', async () => {
    // 200 connections at once from one address: past MAX_CONNECTIONS_PER_ADDRESS (128), which such a client raises.
    const first = await startServerProcess({ ...env, MAX_CONNECTIONS_PER_ADDRESS: String(N) });
    servers.push(first);
    let acknowledged = 0;
    const answers = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        postAction(first.url, i).then(
          (a) => {
            if (a.status === 200 && ++acknowledged === KILL_AFTER) first.child.kill('SIGKILL');
            return a;
          },
          () => null, // the connection died with the process: not acknowledged
        ),
      ),
    );
    await first.stop('SIGKILL');
    expect(first.child.signalCode).toBe('SIGKILL');
    const acked = new Map<number, Answer>();
    for (const [i, a] of answers.entries()) if (a) acked.set(i, a);
    // Whatever was answered before the kill was a success; and the kill did land mid-burst.
    for (const a of acked.values()) expect(a.status).toBe(200);
    expect(acked.size).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(acked.size).toBeLessThan(N);

    const second = await startServerProcess({ ...env, MAX_CONNECTIONS_PER_ADDRESS: String(N) });
    servers.push(second);
    const retries = await Promise.all(Array.from({ length: N }, (_, i) => postAction(second.url, i)));
    expect(retries.map((r) => r.status)).toEqual(Array(N).fill(200));
    for (const [i, a] of acked) expect(retries[i], `Burst ${i}`).toEqual({ status: 200, replayed: 'true', body: a.body });
    const ids = retries.map((r) => JSON.parse(r.body).id as string);
    expect(new Set(ids).size).toBe(N);

    const list = await fetch(`${second.url}/v1/actions`, { headers: { authorization: `Bearer ${KEY_A}` } });
    expect(list.status).toBe(200);
    const listed = (await list.json()).items.filter((a: { title: string }) => a.title.startsWith('Burst '));
    expect(listed.map((a: { $id: string }) => a.$id).sort()).toEqual([...ids].sort());
    const titleOf = new Map<string, string>(listed.map((a: { $id: string; title: string }) => [a.$id, a.title]));
    for (const [i, id] of ids.entries()) expect(titleOf.get(id)).toBe(`Burst ${i}`); // each key created its own request's action

    // And in the database itself, after the process has stopped.
    expect(await second.stop('SIGTERM')).toBe(0);
    let rows: { title: string; n: number }[];
    if (t) rows = await countBurst(t.db);
    else {
      const db = await PgliteExecutor.open(dir);
      try {
        rows = await countBurst(db);
      } finally {
        await db.close();
      }
    }
    expect(rows.length).toBe(N);
    expect(rows.every((r) => r.n === 1)).toBe(true);
  }, 240_000);
});
