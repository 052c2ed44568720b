import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../src/db/migrate.js';
import { PgliteExecutor } from '../../../src/db/pglite.js';
import { loadDataset } from '../../../src/domain/dataset.js';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../../helpers/db.js';
import { startServerProcess, type ServerProcess } from '../../helpers/process.js';
import { KEY_A, writesDataset } from './fixture.js';

const headers = (idem: string) => ({ authorization: `Bearer ${KEY_A}`, 'idempotency-key': idem, 'content-type': 'application/json' });

async function postAction(url: string, idem: string, title: string) {
  const res = await fetch(`${url}/v1/actions`, { method: 'POST', headers: headers(idem), body: JSON.stringify({ title }) });
  return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: await res.text() };
}

async function listActionIds(url: string): Promise<string[]> {
  const res = await fetch(`${url}/v1/actions`, { headers: { authorization: `Bearer ${KEY_A}` } });
  return (await res.json()).items.map((a: { $id: string }) => a.$id);
}

describe.skipIf(!TEST_DATABASE_URL)('idempotency across server processes on one PostgreSQL', () => {
  let t: TestDatabase;
  const servers: ServerProcess[] = [];
  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, writesDataset());
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await t.close();
  });

  it('two processes hit with the same key at the same moment create one action', async () => {
    const [a, b] = await Promise.all([startServerProcess({ DATABASE_URL: t.url! }), startServerProcess({ DATABASE_URL: t.url! })]);
    servers.push(a, b);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => postAction(i % 2 ? a.url : b.url, 'two-process-key', 'From two processes')));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((r) => r.body)).size).toBe(1);
    expect(answers.filter((r) => r.replayed === 'true').length).toBe(19);
    const id = JSON.parse(answers[0].body).id;
    expect((await listActionIds(a.url)).filter((x) => x === id)).toEqual([id]);
    expect((await listActionIds(a.url)).length).toBe(2); // the fixture's act_a1 and this one
  });

  it('a process killed with SIGKILL right after answering keeps the action, and the retried key replays it', async () => {
    const s = await startServerProcess({ DATABASE_URL: t.url! });
    const first = await postAction(s.url, 'crash-key-pg-01', 'Survives a crash');
    await s.stop('SIGKILL');
    expect(first.status).toBe(200);
    const again = await startServerProcess({ DATABASE_URL: t.url! });
    servers.push(again);
    const retry = await postAction(again.url, 'crash-key-pg-01', 'Survives a crash');
    expect(retry).toEqual({ status: 200, replayed: 'true', body: first.body });
    expect(await listActionIds(again.url)).toContain(JSON.parse(first.body).id);
  });
});

describe('idempotency across a crash of the embedded database', () => {
  let dir: string;
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cp-crash-'));
    const db = await PgliteExecutor.open(dir);
    await migrate(db);
    await loadDataset(db, writesDataset());
    await db.close();
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('a process killed with SIGKILL right after answering keeps the action, and the retried key replays it', async () => {
    const s = await startServerProcess({ DATA_DIR: dir, DATABASE_URL: '' });
    const first = await postAction(s.url, 'crash-key-lite1', 'Survives a crash');
    await s.stop('SIGKILL');
    expect(first.status).toBe(200);
    server = await startServerProcess({ DATA_DIR: dir, DATABASE_URL: '' });
    const retry = await postAction(server.url, 'crash-key-lite1', 'Survives a crash');
    expect(retry).toEqual({ status: 200, replayed: 'true', body: first.body });
    expect(await listActionIds(server.url)).toContain(JSON.parse(first.body).id);
  });
});
