import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDataset } from '../../src/domain/dataset.js';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../helpers/db.js';
import { freePort, startServerProcess } from '../helpers/process.js';

const KEY = 'cp_test_cluster_0123456789abcdef';

/** The primary's log lines (JSON on stdout, role "primary"): their messages. */
const primaryLines = (s: { stdout: () => string }) =>
  s
    .stdout()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { role?: string; msg: string; level: number })
    .filter((l) => l.role === 'primary');

const waitFor = async (check: () => boolean, ms = 15_000) => {
  for (let t = 0; t < ms && !check(); t += 100) await new Promise((r) => setTimeout(r, 100));
  return check();
};

describe.skipIf(!TEST_DATABASE_URL)('WORKERS and METRICS_PORT', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, {
      organizations: [{ id: 'org_c', name: 'C', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z', apiKeys: [{ key: KEY }] }],
    });
  });
  afterAll(() => t.close());

  it('runs N workers on one port, replaces a dead one, serves metrics on their own port, and stops on SIGTERM', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const s = await startServerProcess({ DATABASE_URL: t.url!, WORKERS: '2', PORT: String(port), METRICS_PORT: String(metricsPort), LOG_LEVEL: 'info' });
    expect(await waitFor(() => (s.output().match(/listening on/g) ?? []).length === 2)).toBe(true);
    expect(primaryLines(s)[0]).toMatchObject({
      level: 30,
      msg: `climate-pulse primary ${s.child.pid} started 2 workers (SIGHUP: rolling restart)`,
      workers: 2,
    });
    const res = await fetch(`http://127.0.0.1:${port}/v1/org`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(200);

    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(text).toMatch(/db_pool_connections\{state="total"\} \d+/);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404); // not on the API port

    const { execSync } = await import('node:child_process');
    const workers = execSync(`pgrep -P ${s.child.pid}`).toString().trim().split('\n').map(Number);
    expect(workers.length).toBe(2);
    process.kill(workers[0], 'SIGKILL');
    expect(await waitFor(() => /worker \d+ exited \(SIGKILL\); starting another/.test(s.output()))).toBe(true);
    expect(await waitFor(() => (s.output().match(/listening on/g) ?? []).length === 3, 45_000), s.output().slice(-2000)).toBe(true);
    expect(await s.stop('SIGTERM')).toBe(0);
    // Issue 54, item 4: the primary logs its start, each worker's restart and its exit, last, as JSON lines on stdout.
    expect(s.stdout().trim().split('\n').at(-1)).toBe(JSON.stringify(primaryLines(s).at(-1)));
    expect(primaryLines(s).map((l) => [l.level, l.msg.replace(/\d{3,}/g, 'N')])).toEqual([
      [30, 'climate-pulse primary N started 2 workers (SIGHUP: rolling restart)'],
      [40, 'worker N exited (SIGKILL); starting another in 0.5 s (1 exit within 60 s; at 5 the primary stops)'],
      [30, 'climate-pulse primary N exiting 0 after SIGTERM: every worker has stopped'],
    ]);
    // stdout holds JSON lines only; the workers' addresses are on stderr.
    for (const line of s.stdout().split('\n').filter(Boolean)) expect(() => JSON.parse(line), line).not.toThrow();
    expect(s.stderr().match(/climate-pulse listening on/g)).toHaveLength(3);
  });
});

describe('WORKERS in embedded mode', () => {
  it('stays one process and says so', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'cp-workers-'));
    try {
      const s = await startServerProcess({ DATA_DIR: dir, DATABASE_URL: '', WORKERS: '3' });
      expect(s.output()).toContain('WORKERS=3 ignored: the embedded database serves one process; set DATABASE_URL to run several');
      expect(await s.stop('SIGTERM')).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
