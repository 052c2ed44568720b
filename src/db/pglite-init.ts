import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
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
  cpSync(template, dir, { recursive: true, force: true, filter: (src) => resolve(src) !== resolve(template, MARKER) });
  copyFileSync(join(template, MARKER), join(dir, MARKER));
}

/** Runs initdb for `dir` in a child process and waits for it (the caller holds the lock). */
async function initInChild(dir: string): Promise<void> {
  checkEmpty(dir);
  const fromSource = import.meta.url.endsWith('.ts');
  const script = fileURLToPath(new URL(`./pglite-init-child${fromSource ? '.ts' : '.js'}`, import.meta.url));
  // From source (tests, bench) the child needs tsx's loader, as this process has.
  const loader = fromSource && !process.execArgv.some((a) => a.includes('tsx')) ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...process.execArgv, ...loader, script, 'init', resolve(dir)], { cwd: PACKAGE_ROOT, stdio: ['ignore', 'inherit', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((res, rej) => child.once('error', rej).once('exit', (c) => res(c)));
  if (code !== 0 || !isInitialized(dir)) throw new DataDirInitError(`initializing the embedded database in ${resolve(dir)} failed (exit ${code}): ${stderr.trim().slice(-2000)}`);
}

/** Makes `dir` an initialized PGlite data directory without running initdb in this process. */
export async function initializeDataDir(dir: string, opts: { template?: string | null } = {}): Promise<'existing' | 'template' | 'initdb'> {
  mkdirSync(dir, { recursive: true });
  if (isInitialized(dir)) return 'existing';
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
  mkdirSync(tmp, { recursive: true });
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
