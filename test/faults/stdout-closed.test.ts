import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DB_KIND, TEST_DATABASE_URL, type TestDatabase } from '../helpers/db.js';
import { CLI, ROOT } from '../helpers/process.js';

/**
 * Issue 43, a low one: a server whose stdout reader had gone (`npm start | head -3`) never
 * exited after SIGTERM, past SHUTDOWN_GRACE_MS. Here the reader closes the pipe after the start's
 * log lines, requests are then logged into the closed pipe (EPIPE), and SIGTERM must end the process
 * with 0 within the grace.
 */
describe(`a server whose stdout reader has gone (${DB_KIND})`, () => {
  let t: TestDatabase | undefined;
  let dir: string;
  beforeAll(async () => {
    if (TEST_DATABASE_URL) t = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'cp-faults-stdout-'));
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exits 0 within SHUTDOWN_GRACE_MS of SIGTERM after its stdout pipe closed (| head -3), with lines logged into the closed pipe meanwhile', async () => {
    const child = spawn(process.execPath, [CLI, 'serve', '--demo-if-empty'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        MAX_EVENT_LOOP_DELAY_MS: '0',
        ALERTS_INTERVAL_MINUTES: '0',
        SHUTDOWN_GRACE_MS: '3000',
        DATA_DIR: join(dir, 'data'),
        DATABASE_URL: t?.url ?? '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit');
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    try {
      // What `head -3` does: read three lines, then close the pipe.
      const url = await new Promise<string>((resolve, reject) => {
        let seen = '';
        let found: string | undefined;
        const timer = setTimeout(() => reject(new Error(`no address within 55 s: ${seen}${stderr}`)), 55_000);
        child.stdout!.on('data', (d) => {
          seen += d;
          found ??= /listening (?:at|on) (http:\/\/127\.0\.0\.1:\d+)/.exec(seen)?.[1];
          // stdout holds the log only (issue 54, item 4): closed once the start's own line has come.
          if (found && seen.includes('"startSeconds"')) {
            clearTimeout(timer);
            child.stdout!.destroy();
            resolve(found);
          }
        });
      });
      // Lines logged into the closed pipe: EPIPE.
      for (let i = 0; i < 20; i++) expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const signalAt = performance.now();
      child.kill('SIGTERM');
      const [code] = (await Promise.race([exited, new Promise((r) => setTimeout(() => r([null]), 8_000))])) as [number | null];
      expect(code, `exit after SIGTERM; stderr: ${stderr}`).toBe(0);
      expect(performance.now() - signalAt).toBeLessThan(3_000 + 2_000);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 90_000);
});
