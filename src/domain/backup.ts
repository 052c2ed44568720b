import type { Writable } from 'node:stream';
import { invalid } from '../contract/errors.js';
import type { DatabaseExecutor } from './database.js';

/**
 * Refuses a backup the operator API cannot take: only the embedded database on disk is backed up
 * this way (`climate-pulse backup FILE`); PostgreSQL has its own tools (pg_dump, base backups).
 */
export function requireBackupable(db: DatabaseExecutor): asserts db is DatabaseExecutor & { backup(out: Writable): Promise<void> } {
  if (db.kind !== 'pglite' || !db.backup) {
    throw invalid('Backups through the operator API are of the embedded database (DATA_DIR); back up PostgreSQL with pg_dump.');
  }
}

/**
 * What the database must hold before its copy starts: the one place for work a backup must not
 * miss (every path to a backup, operator API and CLI, comes through backupDatabase).
 */
async function beforeCopy(_db: DatabaseExecutor): Promise<void> {}

/**
 * A consistent snapshot of the embedded database, as a gzipped tar, written to `out` while the
 * server serves: requests wait only for the checkpoints that start and end it (src/db/backup.ts).
 */
export async function backupDatabase(db: DatabaseExecutor, out: Writable): Promise<void> {
  requireBackupable(db);
  await beforeCopy(db);
  await db.backup(out);
}
