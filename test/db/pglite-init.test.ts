import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { lockDataDir } from '../../src/db/data-dir-lock.js';
import { PGLITE_SETTINGS, PgliteExecutor } from '../../src/db/pglite.js';
import { migrate, readMigrations } from '../../src/db/migrate.js';
import {
  DataDirInitError,
  initializeDataDir,
  isInitialized,
  makeTemplate,
  migratedTemplateDir,
  migrationsFingerprint,
  templateDir,
} from '../../src/db/pglite-init.js';

/** Embedded mode: a new DATA_DIR is initialized outside the serving process (issue 14). */
describe('initializing an embedded data directory', () => {
  const root = mkdtempSync(join(tmpdir(), 'cp-pglite-init-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('runs initdb in a child process when there is no template, while the caller holds the lock', async () => {
    const dir = join(root, 'child');
    const release = lockDataDir(dir, 'test');
    try {
      expect(await initializeDataDir(dir, { template: null })).toBe('initdb');
      expect(isInitialized(dir)).toBe(true);
      expect(readdirSync(dir)).toContain('climate-pulse.lock');
    } finally {
      release();
    }
    const db = await PgliteExecutor.open(dir);
    const [r] = await db.query<{ n: number }>(sql('test.one', 'SELECT 1 AS n'));
    expect(r.n).toBe(1);
    await db.close();
  });

  it('copies the template made at build time, then opens it with the small buffer pool', async () => {
    expect(await makeTemplate()).toMatch(/^(exists|made)$/);
    expect(isInitialized(templateDir())).toBe(true);
    const dir = join(root, 'template');
    expect(await initializeDataDir(dir)).toBe('template');
    expect(await initializeDataDir(dir)).toBe('existing');
    const db = await PgliteExecutor.open(dir);
    const [r] = await db.query<{ shared_buffers: string; work_mem: string }>(
      sql('test.settings', `SELECT current_setting('shared_buffers') AS shared_buffers, current_setting('work_mem') AS work_mem`),
    );
    expect(r).toEqual(PGLITE_SETTINGS);
    await db.close();
  });

  it('copies the migrated template when it was made for these migrations: nothing left to apply', async () => {
    // The build (postbuild, build-if-stale) made it for the migrations of this checkout.
    expect(isInitialized(migratedTemplateDir())).toBe(true);
    expect(migratedTemplateDir()).toBe(`${templateDir()}-migrated-${migrationsFingerprint()}`);
    const dir = join(root, 'migrated');
    expect(await initializeDataDir(dir)).toBe('template');
    const db = await PgliteExecutor.open(dir);
    try {
      const ledger = await db.query<{ name: string; checksum: string }>(sql('test.ledger', 'SELECT name, checksum FROM schema_migrations ORDER BY version'));
      expect(ledger).toEqual((await readMigrations()).map((m) => ({ name: m.name, checksum: m.checksum })));
      expect(await migrate(db)).toEqual([]);
      // Per-installation secrets are made at the first start, never copied from the template.
      const [secrets] = await db.query<{ n: number }>(sql('test.secrets', 'SELECT count(*)::int AS n FROM service_secrets'));
      expect(secrets.n).toBe(0);
    } finally {
      await db.close();
    }
  });

  it('names the migrated template after every migration, so that a changed one is not taken for it', () => {
    const a = join(root, 'migrations-a');
    mkdirSync(a);
    writeFileSync(join(a, '0001_init.sql'), 'CREATE TABLE t (a int);');
    writeFileSync(join(a, 'notes.txt'), 'not a migration');
    const before = migrationsFingerprint(a);
    expect(before).toMatch(/^[0-9a-f]{16}$/);
    writeFileSync(join(a, 'notes.txt'), 'still not a migration');
    expect(migrationsFingerprint(a)).toBe(before);
    writeFileSync(join(a, '0001_init.sql'), 'CREATE TABLE t (a bigint);');
    const changed = migrationsFingerprint(a);
    expect(changed).not.toBe(before);
    writeFileSync(join(a, '0002_more.sql'), 'CREATE TABLE u (a int);');
    expect(migrationsFingerprint(a)).not.toBe(changed);
  });

  it('refuses a directory that holds something else, and changes nothing in it', async () => {
    const dir = join(root, 'foreign');
    mkdirSync(dir);
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    await expect(initializeDataDir(dir)).rejects.toThrow(DataDirInitError);
    await expect(initializeDataDir(dir)).rejects.toThrow(
      `${dir} holds no embedded database but is not empty (notes.txt); set DATA_DIR to an empty or new directory`,
    );
    expect(readdirSync(dir)).toEqual(['notes.txt']);
  });
});
