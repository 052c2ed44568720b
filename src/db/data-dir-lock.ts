import { mkdirSync, openSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { checkDataDirRoot, checkDataDirTree, restrictToOwner } from './pglite-init.js';
import { PlainError } from '../contract/errors.js';

/** Another live process holds the embedded data directory. */
export class DataDirLockedError extends PlainError {}

/** The embedded data directory cannot be written (read-only file system, no space left, no permission). */
export class DataDirUnwritableError extends PlainError {}

const STORAGE_ERRORS: Record<string, string> = {
  EROFS: 'it is on a read-only file system',
  ENOSPC: 'no space is left on its device',
  EDQUOT: 'the disk quota is exceeded',
  EACCES: 'permission is denied',
  EPERM: 'the operation is not permitted',
};

/** Turns a file-system refusal into one sentence for the operator; anything else is rethrown as it is. */
function unwritable(dir: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const why = STORAGE_ERRORS[code];
  if (!why) return err as Error;
  return new DataDirUnwritableError(
    `cannot write the embedded database in ${dir}: ${why} (${code}). Free space or make the directory writable, then start again; nothing was changed`,
  );
}

/**
 * The process that holds an embedded data directory creates files for its owner only. PGlite's
 * own chmods are narrowed where it makes them (src/db/pglite.ts); nothing else this process
 * writes is meant for other users either.
 */
function ownerOnlyUmask() {
  try {
    process.umask(process.umask() | 0o077);
  } catch {
    /* worker threads cannot change it; the start check and the directory's 0700 still hold */
  }
}

export interface Holder {
  pid: number;
  host: string;
  command: string;
  startedAt: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The live process of this host that holds the embedded data directory, if any (a lock left by a
 * process that is gone, or one of another host, is none): what a refusal names (issue 54, item 3).
 */
export function lockHolder(dataDir: string): Holder | null {
  try {
    const holder = JSON.parse(readFileSync(join(resolve(dataDir), 'climate-pulse.lock'), 'utf8')) as Holder;
    return holder.host === hostname() && alive(holder.pid) ? holder : null;
  } catch {
    return null;
  }
}

/** How to stop the holder: its signal, which a server answers by draining and exiting 0. */
export const stopHint = (pid: number) => `kill ${pid}, or Ctrl-C in its terminal`;

/**
 * PGlite is a single-process database: two processes writing one directory would corrupt it.
 * The lock file is created atomically; a lock whose process is gone is stale and taken over.
 * Returns the release function.
 */
export function lockDataDir(dataDir: string, command = process.argv.slice(2).join(' ') || 'climate-pulse'): () => void {
  const dir = resolve(dataDir);
  ownerOnlyUmask();
  // Before anything is written: a directory of another user, or a link, is refused (src/db/pglite-init.ts).
  if (checkDataDirRoot(dir)) checkDataDirTree(dir);
  else {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw unwritable(dir, err);
    }
  }
  const file = join(dir, 'climate-pulse.lock');
  const me: Holder = { pid: process.pid, host: hostname(), command: `climate-pulse ${command}`.trim(), startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      try {
        writeSync(fd, `${JSON.stringify(me)}\n`);
      } catch (err) {
        closeSync(fd);
        try {
          unlinkSync(file); // an empty lock file would only look stale to the next start
        } catch {
          /* best effort */
        }
        throw unwritable(dir, err);
      }
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          restrictToOwner(dir); // belt and braces: nothing is left wider than 0600/0700 at rest
        } catch {
          /* best effort: the next start narrows them again */
        }
        try {
          const holder = JSON.parse(readFileSync(file, 'utf8')) as Holder;
          if (holder.pid === process.pid) unlinkSync(file);
        } catch {
          /* already gone */
        }
      };
    } catch (err) {
      if (err instanceof DataDirUnwritableError) throw err;
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw unwritable(dir, err);
    }
    let holder: Holder | null = null;
    try {
      holder = JSON.parse(readFileSync(file, 'utf8')) as Holder;
    } catch {
      holder = null; // unreadable: written by a process that died mid-write
    }
    if (holder && holder.host === me.host && holder.pid !== process.pid && alive(holder.pid)) {
      throw new DataDirLockedError(
        `the embedded database in ${dir} is in use by process ${holder.pid} (${holder.command}, since ${holder.startedAt}); ` +
          `stop it first (${stopHint(holder.pid)}), or set DATA_DIR to another directory (or DATABASE_URL for PostgreSQL)`,
      );
    }
    if (holder && holder.host !== me.host) {
      throw new DataDirLockedError(
        `the embedded database in ${dir} is locked by process ${holder.pid} on host ${holder.host}; remove ${file} if that host is gone`,
      );
    }
    try {
      unlinkSync(file); // stale: its process is gone
    } catch {
      /* someone else took it over first; try again */
    }
  }
  throw new DataDirLockedError(`could not lock ${file}`);
}
