import {
  type Dirent,
  chmodSync,
  closeSync,
  createReadStream,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { dirname, join, normalize, relative, resolve, sep } from 'node:path';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { PlainError } from '../contract/errors.js';
import { restrictToOwner } from './pglite-init.js';

/**
 * Backups of the embedded database (`climate-pulse backup FILE` / `restore FILE`, docs/scaling.md):
 * a gzipped tar of DATA_DIR's database files, taken while the server serves, as PostgreSQL's own
 * base backups are (pg_basebackup with its WAL fetched at the end). The database is held only for
 * `pg_backup_start` (a checkpoint) and `pg_backup_stop`; in between the files are streamed into the
 * archive as they are, while requests read and write. The archive then carries the `backup_label`
 * and the WAL written during the copy, so the first open of a restore replays it and the database
 * is the one of the instant `pg_backup_stop` ran, with every transaction whole or absent. PGlite
 * runs single-user: no checkpoint happens unless one is asked for, and only a backup asks, one at
 * a time, so the WAL the archive needs stays in pg_wal until it is read. Nothing is copied aside:
 * a client that stops reading or goes leaves no file behind. PGlite's own dumpDataDir cannot be
 * used on a serving directory: it holds the database for the whole archive, stops at the operator
 * socket (not a file) and would carry the lock file.
 */

/** Files of DATA_DIR that are the running process's, not the database's. */
const NOT_DATABASE = new Set(['climate-pulse.lock', 'admin.sock']);
/** PostgreSQL's own files of a running server, which a base backup leaves out. */
const NOT_BACKED_UP = new Set([...NOT_DATABASE, 'postmaster.pid', 'postmaster.opts']);
const MARKER = 'PG_VERSION';
const WAL_DIR = 'pg_wal';
const LABEL = 'backup_label';
/** A backup whose reader took nothing for this long is ended: it would keep backups after it waiting. */
export const BACKUP_STALL_MS = 60_000;

export class BackupError extends PlainError {}

/** Runs one statement on the embedded database, taking its connection for that statement only. */
export type BackupQuery = <T>(text: string) => Promise<T[]>;

/** One backup at a time per data directory: a second pg_backup_start in the one session is an error. */
const running = new Map<string, Promise<void>>();

/**
 * Writes a consistent backup of the embedded database in `dataDir` as a gzipped tar to `out`,
 * holding the database only for `pg_backup_start` and `pg_backup_stop` (see the top of this file).
 * A reader that takes nothing for `stallMs` ends it (the archive is then cut short: no end mark).
 */
export async function streamBackup(dataDir: string, query: BackupQuery, out: Writable, opts: { stallMs?: number } = {}): Promise<void> {
  const root = resolve(dataDir);
  const before = running.get(root);
  let done!: () => void;
  const mine = new Promise<void>((r) => (done = r));
  const chained = (before ?? Promise.resolve()).then(() => mine);
  running.set(root, chained);
  try {
    await before;
    await backupOnce(root, query, out, opts.stallMs ?? BACKUP_STALL_MS);
  } finally {
    done();
    if (running.get(root) === chained) running.delete(root);
  }
}

async function backupOnce(root: string, query: BackupQuery, out: Writable, stallMs: number): Promise<void> {
  const abort = new AbortController();
  let lastPull = performance.now();
  let pulling = true;
  const watchdog = setInterval(
    () => {
      if (!pulling && performance.now() - lastPull > stallMs)
        abort.abort(new BackupError(`the backup's reader took nothing for ${stallMs} ms; the backup was ended`));
    },
    Math.max(10, Math.floor(stallMs / 4)),
  );
  watchdog.unref();
  let started = false;
  async function* entries(): AsyncGenerator<Buffer> {
    await query(`SELECT pg_backup_start('climate-pulse backup', true)`);
    started = true;
    yield* databaseFiles(root);
    const [stop] = await query<{ labelfile: string; last: string; segment_bytes: string }>(
      `SELECT labelfile, pg_walfile_name(lsn) AS last, pg_size_bytes(current_setting('wal_segment_size'))::text AS segment_bytes FROM pg_backup_stop(false)`,
    );
    started = false;
    yield* entry(LABEL, Buffer.from(stop.labelfile));
    yield* walSegments(root, stop.labelfile, stop.last, Number(stop.segment_bytes));
    if (existsSync(join(root, MARKER))) yield* entry(MARKER, readFileSync(join(root, MARKER)));
    yield Buffer.alloc(1024);
  }
  const source = entries();
  const pulled = async function* () {
    for (;;) {
      pulling = true;
      const r = await source.next();
      pulling = false;
      lastPull = performance.now();
      if (r.done) return;
      yield r.value;
    }
  };
  try {
    await pipeline(Readable.from(pulled()), createGzip(), out, { signal: abort.signal });
  } catch (err) {
    throw abort.signal.aborted ? abort.signal.reason : err;
  } finally {
    clearInterval(watchdog);
    await source.return(undefined);
    // A backup cut short still ends backup mode, or the next one could not start.
    if (started) await query('SELECT pg_backup_stop(false)').catch(() => {});
  }
}

/** The entries of one file from a buffer. */
function* entry(name: string, data: Buffer): Generator<Buffer> {
  yield header(name, data.length, false);
  yield data;
  if (data.length % 512) yield Buffer.alloc(512 - (data.length % 512));
}

/**
 * The entry of one file read while the database may write it, as pg_basebackup reads it: its size
 * when opened (what it grows by after is in the WAL), zeros past a truncation, pages torn by a
 * write restored from the WAL's full-page images. Undefined when the file went meanwhile (a dropped
 * table: the WAL drops it again).
 */
async function* liveFile(path: string, name: string, required = false): AsyncGenerator<Buffer> {
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if (!required && (err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    const size = (await fh.stat()).size;
    yield header(name, size, false);
    let at = 0;
    while (at < size) {
      const buf = Buffer.alloc(Math.min(size - at, 1 << 20));
      const { bytesRead } = await fh.read(buf, 0, buf.length, at);
      if (bytesRead === 0) {
        if (required) throw new BackupError(`${name} changed size while it was archived`);
        yield Buffer.alloc(size - at);
        break;
      }
      yield bytesRead === buf.length ? buf : buf.subarray(0, bytesRead);
      at += bytesRead;
    }
    if (size % 512) yield Buffer.alloc(512 - (size % 512));
  } finally {
    await fh.close();
  }
}

/** Every directory and file of the database but the WAL's segments, the label and PG_VERSION (added last). */
async function* databaseFiles(root: string): AsyncGenerator<Buffer> {
  async function* walk(rel: string): AsyncGenerator<Buffer> {
    let list: Dirent[];
    try {
      list = (await readdir(join(root, rel), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    } catch (err) {
      if (rel && (err as NodeJS.ErrnoException).code === 'ENOENT') return; // a dropped database's directory
      throw err;
    }
    for (const e of list) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (!rel && (NOT_BACKED_UP.has(e.name) || e.name === MARKER || e.name === LABEL || e.name === `${LABEL}.old`)) continue;
      if (e.isDirectory()) {
        yield header(`${r}/`, 0, true);
        if (r !== WAL_DIR) yield* walk(r);
        else yield header(`${r}/archive_status/`, 0, true);
      } else if (e.isFile()) yield* liveFile(join(root, r), r);
    }
  }
  yield* walk('');
}

/** The WAL segments from the backup's start to its stop, which replay the writes made while it copied. */
async function* walSegments(root: string, label: string, last: string, segmentBytes: number): AsyncGenerator<Buffer> {
  const first = /^START WAL LOCATION: \S+ \(file ([0-9A-F]{24})\)$/m.exec(label)?.[1];
  if (!first || !/^[0-9A-F]{24}$/.test(last)) throw new BackupError('pg_backup_stop gave a label this backup cannot read');
  const perLog = 0x1_0000_0000 / segmentBytes;
  const number = (name: string) => parseInt(name.slice(8, 16), 16) * perLog + parseInt(name.slice(16, 24), 16);
  const timeline = first.slice(0, 8);
  for (let n = number(first); n <= number(last); n++) {
    const name = `${timeline}${Math.floor(n / perLog)
      .toString(16)
      .toUpperCase()
      .padStart(8, '0')}${(n % perLog).toString(16).toUpperCase().padStart(8, '0')}`;
    yield* liveFile(join(root, WAL_DIR, name), `${WAL_DIR}/${name}`, true);
  }
}

function header(name: string, size: number, dir: boolean): Buffer {
  const h = Buffer.alloc(512);
  let path = name;
  let prefix = '';
  if (Buffer.byteLength(path) > 100) {
    const cut = path.lastIndexOf('/', 155);
    if (cut <= 0 || Buffer.byteLength(path.slice(cut + 1)) > 100) throw new BackupError(`path too long for a backup: ${name}`);
    prefix = path.slice(0, cut);
    path = path.slice(cut + 1);
  }
  const field = (text: string, at: number, len: number) => h.write(text, at, len, 'utf8');
  const octal = (n: number, at: number, len: number) => field(`${n.toString(8).padStart(len - 1, '0')}\0`, at, len);
  field(path, 0, 100);
  octal(dir ? 0o700 : 0o600, 100, 8);
  octal(0, 108, 8);
  octal(0, 116, 8);
  octal(size, 124, 12);
  octal(Math.floor(Date.now() / 1000), 136, 12);
  field('        ', 148, 8);
  field(dir ? '5' : '0', 156, 1);
  field('ustar\0', 257, 6);
  field('00', 263, 2);
  field(prefix, 345, 155);
  let sum = 0;
  for (const b of h) sum += b;
  field(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return h;
}

/** Whether `dir` is missing or an empty directory (where a restore may go). */
export function isEmptyOrMissing(dir: string): boolean {
  if (!existsSync(dir)) return true;
  return lstatSync(dir).isDirectory() && readdirSync(dir).length === 0;
}

/**
 * Refuses a restore target that someone else could change while the backup is unpacked into it: a
 * symbolic link, another user's directory, or one others can write (who could plant a link in it
 * between two files, and have the restore write through it). Returns whether it exists.
 */
export function checkRestoreTarget(dir: string): boolean {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  const me = process.getuid?.();
  if (st.isSymbolicLink()) throw new BackupError(`${dir} is a symbolic link; restore into a plain directory (nothing was restored)`);
  if (!st.isDirectory()) throw new BackupError(`${dir} is not a directory (nothing was restored)`);
  if (me !== undefined && st.uid !== me) throw new BackupError(`${dir} belongs to another user; restore into a directory of your own (nothing was restored)`);
  if (st.mode & 0o022) {
    throw new BackupError(
      `${dir} can be written by others (mode ${(st.mode & 0o777).toString(8)}), who could plant a link in it during the restore; chmod 700 it or name a new directory (nothing was restored)`,
    );
  }
  return true;
}

/** A directory of the restore made (or found) as a real directory, never followed through a link. */
function ensureDir(root: string, path: string) {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  for (let p = path; p !== root && p.startsWith(root + sep); p = dirname(p)) {
    if (!lstatSync(p).isDirectory())
      throw new BackupError(`${relative(root, p)} in ${root} changed into something that is not a directory during the restore; nothing was restored`);
  }
}

/** Reads exact lengths from a stream of chunks (fewer bytes only at its end). */
class ChunkReader {
  private buf: Buffer = Buffer.alloc(0);
  private done = false;
  private readonly it: AsyncIterator<Buffer>;

  constructor(source: AsyncIterable<Buffer>) {
    this.it = source[Symbol.asyncIterator]();
  }

  async read(n: number): Promise<Buffer> {
    while (this.buf.length < n && !this.done) {
      const r = await this.it.next();
      if (r.done) this.done = true;
      else this.buf = this.buf.length ? Buffer.concat([this.buf, r.value]) : r.value;
    }
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }
}

/**
 * Unpacks a backup into `dataDir` (missing or empty), streaming, every directory 0700 and file
 * 0600 as they are written (CONTRACT.md section 8), PG_VERSION last. Entries that leave the
 * directory, links and devices are refused; on any failure what was written goes again. Returns
 * the number of files.
 */
export async function unpackBackup(file: string, dataDir: string): Promise<number> {
  const root = resolve(dataDir);
  checkRestoreTarget(root);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  chmodSync(root, 0o700);
  try {
    return await unpackInto(file, new ChunkReader(createReadStream(file).pipe(createGunzip()) as AsyncIterable<Buffer>), root);
  } catch (err) {
    // The directory was empty (or new): what this restore wrote goes, the lock of its caller stays.
    for (const e of readdirSync(root)) if (!NOT_DATABASE.has(e)) rmSync(join(root, e), { recursive: true, force: true });
    if (err instanceof BackupError) throw err;
    throw new BackupError(`${file} is not a backup made by climate-pulse backup (${(err as Error).message}); nothing was restored`);
  }
}

async function unpackInto(file: string, input: ChunkReader, root: string): Promise<number> {
  let files = 0;
  let marker: Buffer | null = null;
  for (;;) {
    const h = await input.read(512);
    if (h.length < 512) throw new BackupError(`${file} ends before its end-of-archive mark (cut short?); nothing was restored`);
    if (h.every((b) => b === 0)) break;
    const text = (from: number, len: number) =>
      h
        .subarray(from, from + len)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    if (text(257, 5) !== 'ustar') throw new BackupError(`${file} is not a backup made by climate-pulse backup (not a tar archive)`);
    const prefix = text(345, 155);
    const name = (prefix ? `${prefix}/` : '') + text(0, 100);
    const size = parseInt(text(124, 12).trim() || '0', 8);
    const type = text(156, 1) || '0';
    const path = normalize(join(root, name));
    if (path !== root && !path.startsWith(root + sep)) throw new BackupError(`${file} holds a path outside the data directory: ${name}`);
    if (type === '5') {
      ensureDir(root, path);
      continue;
    }
    if (type !== '0') throw new BackupError(`${file} holds an entry that is not a file or directory: ${name}`);
    const chunks: Buffer[] = [];
    let fd: number | null = null;
    if (name !== MARKER) {
      ensureDir(root, dirname(path));
      fd = openSync(path, 'wx', 0o600);
    }
    try {
      for (let left = size; left > 0; ) {
        const chunk = await input.read(Math.min(left, 1 << 20));
        if (chunk.length === 0) throw new BackupError(`${file} ends inside ${name} (cut short?); nothing was restored`);
        if (fd === null) chunks.push(Buffer.from(chunk));
        else writeSync(fd, chunk);
        left -= chunk.length;
      }
    } finally {
      if (fd !== null) closeSync(fd);
    }
    if (fd === null) marker = Buffer.concat(chunks);
    if (size % 512) await input.read(512 - (size % 512));
    files++;
  }
  if (!marker) throw new BackupError(`${file} holds no embedded database (no ${MARKER}); nothing was restored`);
  restrictToOwner(root);
  const fd = openSync(join(root, MARKER), 'wx', 0o600);
  try {
    writeSync(fd, marker);
  } finally {
    closeSync(fd);
  }
  return files;
}
