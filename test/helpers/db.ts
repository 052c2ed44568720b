import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { migrate } from '../../src/db/migrate.js';
import { PgExecutor } from '../../src/db/pg.js';
import { PgliteExecutor } from '../../src/db/pglite.js';

/** Set by .ci/run for the second pass; unset means the embedded PGlite. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || undefined;
export const DB_KIND = TEST_DATABASE_URL ? 'postgres' : 'pglite';

export interface TestDatabase {
  db: DatabaseExecutor;
  /** A DATABASE_URL that reaches this very database (PostgreSQL only), for child processes. */
  url?: string;
  close(): Promise<void>;
}

/**
 * A fresh, migrated database for one test file: PGlite in memory, or on PostgreSQL a new
 * schema reached through `search_path`, dropped afterwards.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) {
    const db = await PgliteExecutor.open();
    await migrate(db);
    return { db, close: () => db.close() };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const db = new PgExecutor({ connectionString: url.toString(), max: 10 });
  await migrate(db);
  return {
    db,
    url: url.toString(),
    async close() {
      await db.close();
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}
