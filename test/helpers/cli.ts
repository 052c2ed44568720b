import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { openDatabase } from '../../src/db/open.js';
import { createTestDatabase, TEST_DATABASE_URL } from './db.js';
import { CLI, ROOT } from './process.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A database for CLI tests, reachable by child processes: a fresh DATA_DIR for PGlite, or a
 * fresh schema on PostgreSQL.
 */
export async function createCliDatabase() {
  if (TEST_DATABASE_URL) {
    const t = await createTestDatabase();
    await t.db.close(); // the children and the tests open their own connections
    const env = { DATABASE_URL: t.url!, DATA_DIR: '' };
    // Its pool is closed already: only the schema goes (t.close() would end the pool twice, throw, and leave it).
    return { env, kind: 'pg' as const, close: () => t.drop!() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'cp-cli-'));
  return { env: { DATA_DIR: dir, DATABASE_URL: '' }, kind: 'pglite' as const, dir, close: async () => rmSync(dir, { recursive: true, force: true }) };
}

export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Opens the CLI test database in this process (taking the embedded lock), with the app on it. */
export async function openApp(env: Record<string, string>, extra: Record<string, string> = {}) {
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env, ...extra });
  const db: DatabaseExecutor = await openDatabase(config);
  const app = await buildApp(config, { db });
  return {
    app,
    db,
    async close() {
      await app.close();
      await db.close();
    },
  };
}
