import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';

/** Every entry under `dir` that is not 0700 (directories) or 0600 (anything else), with its mode. */
function looseOnes(dir: string): string[] {
  const out: string[] = [];
  const walk = (path: string) => {
    const st = lstatSync(path);
    const mode = st.mode & 0o777;
    if (mode !== (st.isDirectory() ? 0o700 : 0o600)) out.push(`${path.slice(dir.length)} ${mode.toString(8)}`);
    if (st.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return out;
}

/**
 * Issue 26, item 14: PGlite wrote pg_internal.init 0644 while the server ran (Emscripten chmods a
 * file it creates to the mode asked for, and a chmod ignores the umask), so the data directory
 * was owner-only at rest but not at run time. Embedded mode only: it runs on both passes.
 */
describe('the embedded data directory while serving, under umask 022', { timeout: 180_000 }, () => {
  const base = mkdtempSync(join(tmpdir(), 'cp-modes-serving-'));
  const dir = join(base, 'data');
  let server: ServerProcess;
  let previous: number;
  beforeAll(async () => {
    previous = process.umask(0o022); // the child inherits it
    server = await startServerProcess({ DATA_DIR: dir, DATABASE_URL: '' }, { startTimeoutMs: 150_000 });
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    process.umask(previous);
    rmSync(base, { recursive: true, force: true });
  });

  it('every file is 0600 and every directory 0700 after start and queries, and after a stop', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      expect((await fetch(`${server.url}/v1/org`, { headers: { authorization: `Bearer cp_test_unknown_${i}_0123456789abcdef` } })).status).toBe(401);
    }
    expect(readdirSync(join(dir, 'global'))).toContain('pg_internal.init'); // written at run time
    expect(looseOnes(dir)).toEqual([]);
    expect(await server.stop()).toBe(0);
    expect(looseOnes(dir)).toEqual([]);
  });
});
