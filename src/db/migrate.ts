import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CITUS_MIGRATION_SETTINGS, citusVersion } from './citus.js';
import { sql, type DatabaseExecutor } from './executor.js';

/** Works from src/db (tsx) and from dist/db (built): both sit two levels below the package. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));
/** A migration's file name: its four-digit version, then words (`0001_init.sql`). */
export const MIGRATION_FILE = /^\d{4}_[a-z0-9_]+\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => MIGRATION_FILE.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const text = await readFile(dir + file, 'utf8');
      return {
        version: Number(file.slice(0, 4)),
        name: file,
        sql: text,
        checksum: createHash('sha256').update(text).digest('hex'),
      };
    }),
  );
}

const LOCK_ID = 4_120_771; // any constant shared by every process of this service

const createLedger = sql(
  'migrate.ledger',
  `CREATE TABLE IF NOT EXISTS schema_migrations (
     version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
     applied_at timestamptz NOT NULL DEFAULT now())`,
);
const lock = sql('migrate.lock', 'SELECT pg_advisory_xact_lock($1)');
const applied = sql('migrate.applied', 'SELECT version, name, checksum FROM schema_migrations ORDER BY version');
const record = sql('migrate.record', 'INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)');

/**
 * Applies pending forward-only migrations in one transaction, under an advisory lock so
 * that several processes starting together apply each migration once. A migration that
 * was edited after it was applied stops the start: history is never rewritten.
 */
export async function migrate(db: DatabaseExecutor, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(dir);
  return db.transaction(async (tx) => {
    await tx.query(lock, [LOCK_ID]);
    // A migration may backfill a large table; the service's statement timeout is for requests.
    await tx.exec('SET LOCAL statement_timeout = 0');
    if (await citusVersion(tx)) await tx.exec(CITUS_MIGRATION_SETTINGS);
    await tx.query(createLedger);
    const done = new Map((await tx.query<{ version: number; name: string; checksum: string }>(applied)).map((r) => [r.version, r]));
    const ran: string[] = [];
    for (const m of migrations) {
      const prior = done.get(m.version);
      if (prior) {
        if (prior.checksum !== m.checksum) {
          throw new Error(`migration ${m.name} was changed after it was applied (checksum mismatch)`);
        }
        continue;
      }
      await tx.exec(m.sql);
      await tx.query(record, [m.version, m.name, m.checksum]);
      ran.push(m.name);
    }
    return ran;
  });
}
