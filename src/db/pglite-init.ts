import { spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  type Stats,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PlainError } from '../contract/errors.js';
import { MIGRATION_FILE, MIGRATIONS_DIR } from './migrate.js';

/**
 * A new embedded data directory is never initialized by the serving process. PGlite's first
 * open of an empty directory runs initdb in two extra WASM instances, which takes the process
 * to about 750-800 MB, and a WASM heap never gives memory back. Instead:
 *
 * 1. `npm run build` (so `npm ci`, and `npm start` through `prestart`) makes a template data
 *    directory once per PGlite version, in `.pglite-template/` of the package, in its own process.
 * 2. Opening an empty DATA_DIR copies the template (plain file copies, no database work). The
 *    build makes a second template from the first with every migration applied, named after the
 *    migrations' contents; a new DATA_DIR is copied from it when it matches the package's
 *    migrations, so that a first start applies none (each one made there cost over a second).
 * 3. Without a template (a read-only package, a build that was skipped), initdb runs in a
 *    short-lived child process while the parent holds the data-directory lock.
 */

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MARKER = 'PG_VERSION';
const LOCK_FILE = 'climate-pulse.lock';

export function pgliteVersion(): string {
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  let dir = dirname(entry);
  for (let i = 0; i < 4; i++, dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@electric-sql/pglite' && pkg.version) return pkg.version;
    }
  }
  throw new Error('cannot find the version of @electric-sql/pglite');
}

export function templateDir(): string {
  return join(PACKAGE_ROOT, '.pglite-template', `pglite-${pgliteVersion()}`);
}

/**
 * What identifies the package's migrations: a digest of every migration's name and SHA-256 (the
 * checksums the ledger records), the first 16 hex digits. scripts/build-if-stale.mjs computes the
 * same to tell whether the migrated template is missing.
 */
export function migrationsFingerprint(dir = MIGRATIONS_DIR): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(dir)
    .filter((f) => MIGRATION_FILE.test(f))
    .sort()) {
    hash.update(
      `${name} ${createHash('sha256')
        .update(readFileSync(join(dir, name), 'utf8'))
        .digest('hex')}\n`,
    );
  }
  return hash.digest('hex').slice(0, 16);
}

/** The template with every migration of this package applied (made by the build after the plain one). */
export function migratedTemplateDir(): string {
  return `${templateDir()}-migrated-${migrationsFingerprint()}`;
}

/** DATA_DIR cannot become an embedded database (not empty, or initialization failed). */
export class DataDirInitError extends PlainError {}

export const isInitialized = (dir: string) => existsSync(join(dir, MARKER));

/**
 * DATA_DIR or something in it is not this user's alone: others can read or write it, it belongs to
 * another user, or it is (or holds) a symbolic link. The service refuses to open it.
 */
export class DataDirPermissionsError extends DataDirInitError {}

const OWNER_DIR = 0o700;
const OWNER_FILE = 0o600;

const uid = () => process.getuid?.();

/** Another user owns `path`: they could swap what is in it (the operator socket, a link) under this process. */
function checkOwner(root: string, path: string, st: Stats) {
  const me = uid();
  if (me === undefined || st.uid === me) return;
  const what = path === root ? `the embedded database in ${root}` : `${relative(root, path)} in the embedded database in ${root}`;
  throw new DataDirPermissionsError(
    `${what} belongs to uid ${st.uid}, not to uid ${me} that runs climate-pulse; run climate-pulse as uid ${st.uid}, or set DATA_DIR to a directory of uid ${me}`,
  );
}

/**
 * DATA_DIR itself must be a real directory (never a symbolic link: the database follows none) of
 * the user running this process. Returns false when it does not exist yet.
 */
export function checkDataDirRoot(dir: string): boolean {
  const where = resolve(dir);
  let st: Stats;
  try {
    st = lstatSync(where);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  if (st.isSymbolicLink()) {
    let real: string | undefined;
    try {
      real = realpathSync(where);
    } catch {
      /* dangling */
    }
    throw new DataDirPermissionsError(
      real
        ? `DATA_DIR ${where} is a symbolic link to ${real}; the embedded database never follows links: set DATA_DIR=${real}`
        : `DATA_DIR ${where} is a symbolic link to ${readlinkSync(where)}, which does not exist; the embedded database never follows links: set DATA_DIR to a real directory`,
    );
  }
  if (!st.isDirectory())
    throw new DataDirPermissionsError(`DATA_DIR ${where} is not a directory; set DATA_DIR to a directory (a new one is made when missing)`);
  checkOwner(where, where, st);
  return true;
}

/**
 * Every directory and file under `dir`, `dir` first. A symbolic link, an entry of another user or
 * anything but a file, a directory or a socket (the operator socket) is refused, never followed:
 * a dangling PG_VERSION link would otherwise have this process write a file wherever it points.
 */
function* tree(dir: string, root = resolve(dir), top = lstatSync(dir)): Generator<{ path: string; mode: number; isDir: boolean }> {
  yield { path: dir, mode: top.mode & 0o777, isDir: top.isDirectory() };
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && resolve(dir) !== root) return; // removed meanwhile (a temporary directory)
    throw err;
  }
  for (const name of names) {
    const path = join(dir, name);
    let st: Stats;
    try {
      st = lstatSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // removed meanwhile
      throw err;
    }
    const rel = relative(root, resolve(path));
    if (st.isSymbolicLink()) {
      throw new DataDirPermissionsError(
        `the embedded database in ${root} holds a symbolic link, ${rel} -> ${readlinkSync(path)}; it never follows links in its directory: remove the link (restore the file from a backup if one is missing) and start again`,
      );
    }
    checkOwner(root, resolve(path), st);
    if (st.isDirectory()) yield* tree(path, root, st);
    else if (st.isFile() || st.isSocket()) yield { path, mode: st.mode & 0o777, isDir: false };
    else throw new DataDirPermissionsError(`the embedded database in ${root} holds ${rel}, which is not a file or a directory; remove it and start again`);
  }
}

/** Refuses DATA_DIR when it, or anything in it, is a link or another user's (see `tree`); reads only. */
export function checkDataDirTree(dir: string) {
  for (const _ of tree(dir)) void _;
}

/**
 * Makes `dir` and everything in it the owner's only (0700 directories, 0600 files), whatever the
 * umask and whatever modes a template or initdb left (the template's files were 0666).
 */
export function restrictToOwner(dir: string) {
  for (const { path, mode, isDir } of tree(dir)) {
    const wanted = isDir ? OWNER_DIR : OWNER_FILE;
    if (mode !== wanted) chmodSync(path, wanted);
  }
}

/**
 * Checked at every start: a data directory that others can read or write would hand them every
 * organization's comments and the service's secrets, so the service refuses it, saying how to fix
 * it. What is inside an owner-only directory is out of others' reach; it is made 0600/0700 anyway
 * (earlier versions left pg_internal.init 0644; a directory copied by hand may keep wider modes).
 */
export function checkOwnerOnly(dir: string) {
  checkNotShared(dir);
  restrictToOwner(dir);
}

/** Refuses DATA_DIR when others may read, write or enter it (the start check, and the CLI's before it trusts the socket in it). */
export function checkNotShared(dir: string) {
  const mode = lstatSync(dir).mode & 0o777;
  if (mode & 0o077) {
    const where = resolve(dir);
    throw new DataDirPermissionsError(
      `the embedded database in ${where} can be read or written by other users (it is ${mode.toString(8).padStart(4, '0')}); run: chmod -R go-rwx ${where}`,
    );
  }
}

/** A directory being made into a database is the owner's only before anything is written into it. */
function ownDir(dir: string) {
  chmodSync(dir, OWNER_DIR);
}

/** Entries PGlite or an interrupted copy of ours could have left; anything else is not ours to overwrite. */
function checkEmpty(dir: string, template?: string) {
  const ours = new Set([LOCK_FILE, ...(template ? readdirSync(template) : [])]);
  const foreign = readdirSync(dir).filter((e) => !ours.has(e));
  if (foreign.length) {
    throw new DataDirInitError(
      `${resolve(dir)} holds no embedded database but is not empty (${foreign.slice(0, 3).join(', ')}); set DATA_DIR to an empty or new directory`,
    );
  }
}

/** Copies the template into `dir`, PG_VERSION last: a copy cut short is not taken for a database. */
function copyTemplate(template: string, dir: string) {
  checkEmpty(dir, template);
  ownDir(dir);
  cpSync(template, dir, { recursive: true, force: true, filter: (src) => resolve(src) !== resolve(template, MARKER) });
  restrictToOwner(dir); // cpSync keeps the template's modes
  copyFileSync(join(template, MARKER), join(dir, MARKER));
  chmodSync(join(dir, MARKER), OWNER_FILE);
}

/** Runs initdb for `dir` in a child process and waits for it (the caller holds the lock). */
async function initInChild(dir: string): Promise<void> {
  checkEmpty(dir);
  ownDir(dir);
  const fromSource = import.meta.url.endsWith('.ts');
  const script = fileURLToPath(new URL(`./pglite-init-child${fromSource ? '.ts' : '.js'}`, import.meta.url));
  // From source (tests, bench) the child needs tsx's loader, as this process has.
  const loader = fromSource && !process.execArgv.some((a) => a.includes('tsx')) ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...process.execArgv, ...loader, script, 'init', resolve(dir)], {
    cwd: PACKAGE_ROOT,
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((res, rej) => child.once('error', rej).once('exit', (c) => res(c)));
  if (code !== 0 || !isInitialized(dir))
    throw new DataDirInitError(`initializing the embedded database in ${resolve(dir)} failed (exit ${code}): ${stderr.trim().slice(-2000)}`);
  restrictToOwner(dir); // initdb leaves 0666 files and 0755 directories
}

/** The migrated template when the build made it for these migrations, else the plain one. */
function defaultTemplate(): string {
  const migrated = migratedTemplateDir();
  return isInitialized(migrated) ? migrated : templateDir();
}

/** Makes `dir` an initialized PGlite data directory without running initdb in this process. */
export async function initializeDataDir(dir: string, opts: { template?: string | null } = {}): Promise<'existing' | 'template' | 'initdb'> {
  if (!checkDataDirRoot(dir)) mkdirSync(dir, { recursive: true, mode: OWNER_DIR });
  // An existing database is walked by checkOwnerOnly (links and owners refused, before PGlite opens it).
  else if (!isInitialized(dir)) checkDataDirTree(dir);
  if (isInitialized(dir)) {
    checkOwnerOnly(dir);
    return 'existing';
  }
  const template = opts.template === undefined ? defaultTemplate() : opts.template;
  if (template && isInitialized(template)) {
    copyTemplate(template, dir);
    return 'template';
  }
  await initInChild(dir);
  return 'initdb';
}

/**
 * Makes the template (build time). initdb runs in a child process into a temporary directory,
 * renamed into place when complete, so concurrent builds and interrupted ones are harmless.
 */
export async function makeTemplate(): Promise<'exists' | 'made'> {
  const target = templateDir();
  if (isInitialized(target)) return 'exists';
  const tmp = `${target}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true, mode: OWNER_DIR });
  try {
    await initInChild(tmp);
    try {
      renameSync(tmp, target);
    } catch (err) {
      if (!isInitialized(target)) throw err; // another build made it first
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return 'made';
}
