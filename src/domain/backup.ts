import type { Writable } from 'node:stream';
import { invalid } from '../contract/errors.js';
import { serviceSecret } from '../db/repositories/secrets.js';
import { CommentReleases, releaseEverythingDue } from './comments.js';
import type { DatabaseExecutor } from './database.js';

/** How the service releases comments (its configuration), for a backup to release what is due. */
export interface BackupReleases {
  /** COMMENT_CURSOR_SECRET when set; else the secret the database keeps. */
  secret?: string;
  releaseDelayHours: number;
  now: Date;
}

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
 * miss (every path to a backup, operator API and CLI, comes through backupDatabase). Every week
 * already due is released, in every organization (CONTRACT.md section 5): a copy restored and
 * served beside its original then starts from the same freezes, and the two cannot be compared to
 * isolate a late comment of a week one of them froze before the backup (docs/privacy.md).
 */
async function beforeCopy(db: DatabaseExecutor, r: BackupReleases): Promise<void> {
  const secret = r.secret ?? (await serviceSecret(db, 'comment_cursor_key'));
  await releaseEverythingDue(db, new CommentReleases(secret, r.releaseDelayHours * 3_600_000), r.now);
}

/**
 * A consistent snapshot of the embedded database, as a gzipped tar, written to `out` while the
 * server serves: requests wait only for the checkpoints that start and end it (src/db/backup.ts).
 */
export async function backupDatabase(db: DatabaseExecutor, out: Writable, releases: BackupReleases): Promise<void> {
  requireBackupable(db);
  await beforeCopy(db, releases);
  await db.backup(out);
}
