import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { PgExecutor } from '../../src/db/pg.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { readDataset } from '../fixtures/dataset.js';
import { createTestDatabase, TEST_CITUS_URL, TEST_DATABASE_URL, type TestDatabase } from '../helpers/db.js';

const HAS_TOOLS = ['pg_dump', 'pg_restore'].every((tool) => spawnSync(tool, ['--version']).status === 0);

/**
 * docs/deployment.md, "Backups": the PostgreSQL dump and restore as written there (custom format,
 * no owner; restored in one transaction into a new database), on the PostgreSQL pass. The test's
 * database is a schema of a shared one, so the dump names it (--schema); the restored copy holds
 * the same rows, table by table, and `migrate` finds nothing to apply.
 */
describe.skipIf(!TEST_DATABASE_URL || TEST_CITUS_URL || (!HAS_TOOLS && !process.env.CI))(
  'a PostgreSQL backup with pg_dump and pg_restore (docs/deployment.md)',
  () => {
    let t: TestDatabase;
    let dir: string;
    const restored = `cp_restore_${randomBytes(5).toString('hex')}`;
    let schema: string;

    beforeAll(async () => {
      t = await createTestDatabase();
      await loadDataset(t.db, readDataset());
      schema = /search_path=(\w+)/.exec(decodeURIComponent(t.url!))![1];
      dir = mkdtempSync(join(tmpdir(), 'cp-pg-backup-'));
    }, 120_000);
    afterAll(async () => {
      await t?.close();
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${restored}`);
      await c.end();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }, 60_000);

    /** Rows of every table of `schema`, and an md5 of each table's rows in a fixed order. */
    async function contents(url: string) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const { rows: tables } = await c.query<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 ORDER BY 1`, [schema]);
        const out: Record<string, string> = {};
        for (const { name } of tables) {
          const { rows } = await c.query<{ n: string; sum: string | null }>(
            `SELECT count(*)::text AS n, md5(string_agg(t::text, E'\\n' ORDER BY t::text)) AS sum FROM ${schema}.${name} t`,
          );
          out[name] = `${rows[0].n} ${rows[0].sum}`;
        }
        return out;
      } finally {
        await c.end();
      }
    }

    it('dumps while the database serves, restores into a new database in one transaction, with every row; migrate applies nothing', async () => {
      expect(HAS_TOOLS, 'pg_dump and pg_restore (apt-get install postgresql-client)').toBe(true);
      const file = join(dir, 'climate-pulse.dump');
      const base = new URL(TEST_DATABASE_URL!);
      execFileSync('pg_dump', ['--format=custom', '--no-owner', `--schema=${schema}`, `--file=${file}`, base.toString()], { stdio: 'pipe' });
      expect(existsSync(file)).toBe(true);
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${restored}`);
      await admin.end();
      const target = new URL(base);
      target.pathname = `/${restored}`;
      execFileSync('pg_restore', ['--no-owner', '--exit-on-error', '--single-transaction', `--dbname=${target}`, file], { stdio: 'pipe' });

      const source = await contents(base.toString());
      expect(Object.keys(source).length).toBeGreaterThan(20);
      expect(Object.values(source).some((v) => !v.startsWith('0 '))).toBe(true);
      expect(await contents(target.toString())).toEqual(source);
      target.searchParams.set('options', `-c search_path=${schema}`);
      const db = new PgExecutor({ connectionString: target.toString(), max: 1 });
      try {
        expect(await migrate(db)).toEqual([]);
      } finally {
        await db.close();
      }
    }, 180_000);
  },
);
