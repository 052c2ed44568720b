import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { expect, inject } from 'vitest';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { distributeOnCitus } from '../../src/db/citus.js';
import { migrate } from '../../src/db/migrate.js';
import { PgExecutor } from '../../src/db/pg.js';
import { PgliteExecutor } from '../../src/db/pglite.js';

/**
 * A Citus coordinator (docs/scaling.md): every test database is made on it and distributed through
 * the same code as `climate-pulse citus distribute`, so the whole suite runs on the cluster. It is
 * the PostgreSQL URL of the pass as well. CI has no Citus: unset, tests that need it are skipped.
 */
export const TEST_CITUS_URL = process.env.TEST_CITUS_URL || undefined;
/** Shards per distributed table in a test database: a few, on every worker, keep a file's set-up short. */
const TEST_CITUS_SHARDS = Number(process.env.TEST_CITUS_SHARDS || 4);
/** Set by .ci/run for the second pass (or by TEST_CITUS_URL); unset means the embedded PGlite. */
export const TEST_DATABASE_URL = TEST_CITUS_URL || process.env.TEST_DATABASE_URL || undefined;
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || undefined;
export const DB_KIND = TEST_DATABASE_URL ? 'postgres' : 'pglite';
/**
 * Set by .ci/run for its PostgreSQL pass, which follows the PGlite pass: tests that open an embedded
 * database of their own whatever the pass (its data directory's modes, its backup and restore) are
 * marked `skipIf(EMBEDDED_RAN)`, since they ran in the PGlite pass already and would run on PGlite
 * again. Unset (a developer's run on PostgreSQL alone), they run.
 */
export const EMBEDDED_RAN = Boolean(process.env.TEST_EMBEDDED_RAN);

/**
 * Set by .ci/run for its PGlite pass, which its PostgreSQL pass follows (TEST_POSTGRES_FOLLOWS): a
 * part of a test whose outcome does not depend on the engine, but which costs many times more on the
 * embedded database, runs in the PostgreSQL pass only (the CLI's every command both ways: each of
 * its 150 runs opens the data directory anew). Unset (a developer's `npm test`), everything runs.
 */
export const POSTGRES_FOLLOWS = Boolean(process.env.TEST_POSTGRES_FOLLOWS) && !TEST_DATABASE_URL;

export interface TestDatabase {
  db: DatabaseExecutor;
  /** A DATABASE_URL that reaches this very database (PostgreSQL only), for child processes. */
  url?: string;
  close(): Promise<void>;
  /** PostgreSQL only: drops the schema, for a caller that closed `db` itself (closing it twice throws). */
  drop?(): Promise<void>;
}

let snapshot: Blob | undefined;
/**
 * The migrated database every PGlite test database starts from (made once per run by
 * test/helpers/build.ts): a new one in memory would run initdb, about 3 s of CPU, in each file.
 *
 * PGlite reads the tarball with `arrayBuffer()` on each open, and a Node Blob of its 42 MB gave
 * it in small chunks concatenated, about a quarter of a second of CPU each time (a third of an
 * open). This one hands out a copy of the bytes read once, which PGlite then owns.
 */
function migratedSnapshot(): Blob | undefined {
  const file = inject('pgliteSnapshot');
  if (file && !snapshot) {
    const bytes = readFileSync(file);
    snapshot = {
      type: 'application/x-tar',
      size: bytes.length,
      arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
    } as Blob;
  }
  return snapshot;
}

/**
 * A fresh, migrated database for one test file: PGlite in memory, or on PostgreSQL a new
 * schema reached through `search_path`, dropped afterwards; on Citus that schema distributed.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) {
    const db = await PgliteExecutor.open(undefined, { loadDataDir: migratedSnapshot() });
    await migrate(db); // nothing to apply on the snapshot; checks that it has every migration, unchanged
    return { db, close: () => db.close() };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  // The test file that made it: a schema left behind (a close that never ran) names its leaker.
  await admin.query(`COMMENT ON SCHEMA ${schema} IS ${pg.escapeLiteral(expect.getState().testPath ?? 'unknown')}`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  // On Citus, tests inject faults with triggers on distributed tables (docs/scaling.md: enable_unsafe_triggers).
  url.searchParams.set('options', `-c search_path=${schema}${TEST_CITUS_URL ? ' -c citus.enable_unsafe_triggers=on' : ''}`);
  const db = new PgExecutor({ connectionString: url.toString(), max: 10 });
  const drop = async () => {
    const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await c.connect();
    await c.query(`DROP SCHEMA ${schema} CASCADE`);
    await c.end();
  };
  await migrate(db);
  if (TEST_CITUS_URL) await distributeOnCitus(db, { shardCount: TEST_CITUS_SHARDS });
  return {
    db,
    url: url.toString(),
    async close() {
      await db.close();
      await drop();
    },
    drop,
  };
}
