import { closeSync, cpSync, createReadStream, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, relative, resolve, sep } from 'node:path';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { PlainError } from '../contract/errors.js';
import { restrictToOwner } from './pglite-init.js';

/**
 * Backups of the embedded database (`climate-pulse backup FILE` / `restore FILE`, docs/scaling.md):
 * a gzipped tar of DATA_DIR's database files, taken while no statement runs (PgliteExecutor holds
 * its one connection, runs a CHECKPOINT and copies the files aside), so the copy is a database at
 * one instant, between two transactions. PGlite's own dumpDataDir cannot be used on a serving
 * directory: it stops at the operator socket in it (not a file), and would carry the lock file.
 */

/** Files of DATA_DIR that are the running process's, not the database's. */
const NOT_DATABASE = new Set(['climate-pulse.lock', 'admin.sock']);
const MARKER = 'PG_VERSION';

export class BackupError extends PlainError {}

/** Copies the database files of `dataDir` into a new temporary directory (0700); the caller holds the database still. */
export function copyDatabaseFiles(dataDir: string): string {
  // Named after this process: a start after a kill mid-backup removes it (removeStaleImportFiles).
  const out = mkdtempSync(join(tmpdir(), `climate-pulse-backup-${process.pid}-`));
  const root = resolve(dataDir);
  cpSync(root, out, {
    recursive: true,
    filter: (src) => {
      const rel = relative(root, src);
      if (rel === '') return true;
      if (NOT_DATABASE.has(rel)) return false;
      const st = lstatSync(src);
      return st.isDirectory() || st.isFile();
    },
  });
  return out;
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
  const octal = (n: number, at: number, len: number) => field(n.toString(8).padStart(len - 1, '0') + '\0', at, len);
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
  field(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8);
  return h;
}

/** The tar entries of `dir` (directories first, PG_VERSION last: a restore cut short is not taken for a database). */
async function* tarOf(dir: string): AsyncGenerator<Buffer> {
  const files: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        files.push(`${r}/`);
        walk(r);
      } else if (e.isFile() && r !== MARKER) files.push(r);
    }
  };
  walk('');
  if (existsSync(join(dir, MARKER))) files.push(MARKER);
  for (const name of files) {
    if (name.endsWith('/')) {
      yield header(name, 0, true);
      continue;
    }
    // The copy is this process's own (nothing writes it any more): its size is final.
    const size = statSync(join(dir, name)).size;
    yield header(name, size, false);
    let sent = 0;
    for await (const chunk of createReadStream(join(dir, name)) as AsyncIterable<Buffer>) {
      sent += chunk.length;
      yield chunk;
    }
    if (sent !== size) throw new BackupError(`${name} changed size while it was archived`);
    if (size % 512) yield Buffer.alloc(512 - (size % 512));
  }
  yield Buffer.alloc(1024);
}

/** Writes `dir` as a gzipped tar to `out`. */
export async function writeTarGz(dir: string, out: Writable): Promise<void> {
  await pipeline(Readable.from(tarOf(dir)), createGzip(), out);
}

/** Whether `dir` is missing or an empty directory (where a restore may go). */
export function isEmptyOrMissing(dir: string): boolean {
  if (!existsSync(dir)) return true;
  return lstatSync(dir).isDirectory() && readdirSync(dir).length === 0;
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
  mkdirSync(root, { recursive: true, mode: 0o700 });
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
    const text = (from: number, len: number) => h.subarray(from, from + len).toString('utf8').replace(/\0.*$/s, '');
    if (text(257, 5) !== 'ustar') throw new BackupError(`${file} is not a backup made by climate-pulse backup (not a tar archive)`);
    const prefix = text(345, 155);
    const name = (prefix ? `${prefix}/` : '') + text(0, 100);
    const size = parseInt(text(124, 12).trim() || '0', 8);
    const type = text(156, 1) || '0';
    const path = normalize(join(root, name));
    if (path !== root && !path.startsWith(root + sep)) throw new BackupError(`${file} holds a path outside the data directory: ${name}`);
    if (type === '5') {
      mkdirSync(path, { recursive: true, mode: 0o700 });
      continue;
    }
    if (type !== '0') throw new BackupError(`${file} holds an entry that is not a file or directory: ${name}`);
    const chunks: Buffer[] = [];
    let fd: number | null = null;
    if (name !== MARKER) {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
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
