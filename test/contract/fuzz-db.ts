import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { migrate } from '../../src/db/migrate.js';
import { PgExecutor } from '../../src/db/pg.js';
import { PgliteExecutor } from '../../src/db/pglite.js';

/**
 * The fuzzers' database, without vitest: `npm run fuzz` (scripts/fuzz.ts) runs the fuzz libraries
 * outside it, where test/helpers/db.ts (which asks vitest for its state) crashed the script at
 * start. Under vitest the suite's own test database is used (the migrated snapshot, a schema named
 * after its test file); outside, a migrated PGlite in memory, or a new schema on TEST_DATABASE_URL.
 */
export const FUZZ_DATABASE_URL = process.env.TEST_CITUS_URL || process.env.TEST_DATABASE_URL || undefined;
export const FUZZ_REDIS_URL = process.env.TEST_REDIS_URL || undefined;

export async function createFuzzDatabase(): Promise<{ db: DatabaseExecutor; close(): Promise<void> }> {
  if (process.env.VITEST) return (await import('../helpers/db.js')).createTestDatabase();
  if (!FUZZ_DATABASE_URL) {
    const db = await PgliteExecutor.open();
    await migrate(db);
    return { db, close: () => db.close() };
  }
  const schema = `fuzz_${randomBytes(6).toString('hex')}`;
  const admin = async (text: string) => {
    const c = new pg.Client({ connectionString: FUZZ_DATABASE_URL });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE SCHEMA ${schema}`);
  await admin(`COMMENT ON SCHEMA ${schema} IS 'scripts/fuzz.ts'`);
  const url = new URL(FUZZ_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const db = new PgExecutor({ connectionString: url.toString(), max: 10 });
  try {
    await migrate(db);
  } catch (err) {
    await db.close();
    await admin(`DROP SCHEMA ${schema} CASCADE`);
    throw err;
  }
  return {
    db,
    async close() {
      await db.close();
      await admin(`DROP SCHEMA ${schema} CASCADE`);
    },
  };
}
