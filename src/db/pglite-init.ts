import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A new embedded data directory is never initialized by the serving process. PGlite's first
 * open of an empty directory runs initdb in two extra WASM instances, which takes the process
 * to about 750-800 MB, and a WASM heap never gives memory back. Instead:
 *
 * 1. `npm run build` (so `npm ci`, and `npm start` through `prestart`) makes a template data
 *    directory once per PGlite version, in `.pglite-template/` of the package, in its own process.
 * 2. Opening an empty DATA_DIR copies the template (plain file copies, no database work).
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

/** DATA_DIR cannot become an embedded database (not empty, or initialization failed). */
export class DataDirInitError extends Error {}

export const isInitialized = (dir: string) => existsSync(join(dir, MARKER));

/** DATA_DIR or something in it can be read or written by other users: the service refuses to open it. */
export class DataDirPermissionsError extends DataDirInitError {}

const OWNER_DIR = 0o700;
const OWNER_FILE = 0o600;

/** Every directory and file under `dir` (symbolic links are not followed), `dir` first. */
function* tree(dir: string): Generator<{ path: string; mode: number; isDir: boolean }> {
  const root = lstatSync(dir);
  yield { path: dir, mode: root.mode & 0o777, isDir: root.isDirectory() };
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) yield* tree(path);
    else yield { path, mode: lstatSync(path).mode & 0o777, isDir: false };
  }
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
 * (PGlite writes some files, such as pg_internal.init, with 0644).
 */
export function checkOwnerOnly(dir: string) {
  const mode = lstatSync(dir).mode & 0o777;
  if (mode & 0o077) {
    const where = resolve(dir);
    throw new DataDirPermissionsError(
      `the embedded database in ${where} can be read or written by other users (it is ${mode.toString(8).padStart(4, '0')}); run: chmod -R go-rwx ${where}`,
    );
  }
  restrictToOwner(dir);
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
    throw new DataDirInitError(`${resolve(dir)} holds no embedded database but is not empty (${foreign.slice(0, 3).join(', ')}); set DATA_DIR to an empty or new directory`);
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
  const child = spawn(process.execPath, [...process.execArgv, ...loader, script, 'init', resolve(dir)], { cwd: PACKAGE_ROOT, stdio: ['ignore', 'inherit', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((res, rej) => child.once('error', rej).once('exit', (c) => res(c)));
  if (code !== 0 || !isInitialized(dir)) throw new DataDirInitError(`initializing the embedded database in ${resolve(dir)} failed (exit ${code}): ${stderr.trim().slice(-2000)}`);
  restrictToOwner(dir); // initdb leaves 0666 files and 0755 directories
}

/** Makes `dir` an initialized PGlite data directory without running initdb in this process. */
export async function initializeDataDir(dir: string, opts: { template?: string | null } = {}): Promise<'existing' | 'template' | 'initdb'> {
  mkdirSync(dir, { recursive: true, mode: OWNER_DIR });
  if (isInitialized(dir)) {
    checkOwnerOnly(dir);
    return 'existing';
  }
  const template = opts.template === undefined ? templateDir() : opts.template;
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
