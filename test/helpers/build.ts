/**
 * vitest's globalSetup (vitest.config.ts), run once before any test file.
 *
 * 1. Tests run the CLI and the server as child processes from the compiled JS in dist/
 *    (test/helpers/process.ts), as `npm start` and `npx climate-pulse` do, not from the sources
 *    through tsx, which compiled all of src/ again in every child (about 2 s of CPU each). So that
 *    no test ever runs stale JS, dist/ is rebuilt here, once per run, when any source is newer than
 *    its compiled file (or a compiler setting newer than dist/): a run after `npm install` or
 *    `npm run build` finds it fresh and builds nothing. The PGlite template data directory
 *    (`postbuild`) is made too when it is missing.
 * 2. A PGlite database made in memory runs initdb (about 3 s of CPU) and then the migrations: a
 *    tarball of one that did (PGlite's dumpDataDir) is kept, named after the PGlite version and
 *    the migrations, and each test database in memory starts from it (test/helpers/db.ts).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist');
/** Settings that change every compiled file. */
const SETTINGS = ['tsconfig.json', 'tsconfig.build.json'].map((f) => join(ROOT, f));

function* sources(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* sources(path);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) yield path;
  }
}

const mtime = (path: string) => statSync(path, { throwIfNoEntry: false })?.mtimeMs;

/** Why dist/ is stale (the first reason found), or null when every compiled file is at least as new as its source. */
export function staleReason(): string | null {
  const settings = Math.max(...SETTINGS.map((f) => mtime(f) ?? 0));
  for (const src of sources(SRC)) {
    const rel = relative(SRC, src);
    const built = mtime(join(DIST, rel.replace(/\.ts$/, '.js')));
    if (built === undefined) return `dist/${rel.replace(/\.ts$/, '.js')} is missing`;
    if (built < mtime(src)!) return `src/${rel} is newer than its compiled file`;
    if (built < settings) return 'a tsconfig file is newer than dist/';
  }
  return null;
}

function pgliteTemplateMissing(): boolean {
  const dir = join(ROOT, '.pglite-template');
  return !existsSync(dir) || !readdirSync(dir).some((d) => existsSync(join(dir, d, 'PG_VERSION')));
}

/** Compiles src/ to dist/ if it is stale, and makes the PGlite template if it is missing. */
export function ensureBuilt(log: (line: string) => void = (l) => console.log(l)): void {
  const why = staleReason();
  if (why) {
    log(`test setup: ${why}; compiling src/ to dist/ (tsc -p tsconfig.build.json)`);
    const started = Date.now();
    try {
      execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'pipe' });
    } catch (err) {
      // tsc still writes the JS of a program with type errors (the typecheck step reports those);
      // only JS that is still missing or old stops the run.
      const out = String((err as { stdout?: Buffer }).stdout ?? '') + String((err as { stderr?: Buffer }).stderr ?? '');
      log(`test setup: tsc reported errors:\n${out.trim().slice(0, 4000)}`);
      const still = staleReason();
      if (still) throw new Error(`test setup: compiling src/ to dist/ failed (${still})`);
    }
    log(`test setup: compiled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  if (pgliteTemplateMissing()) {
    log('test setup: making the PGlite template data directory (npm run postbuild)');
    execFileSync(process.execPath, [join(DIST, 'db/pglite-init-child.js'), 'template'], { cwd: ROOT, stdio: 'inherit' });
  }
}

const SNAPSHOTS = join(ROOT, '.pglite-template');

/**
 * The tarball of a new in-memory PGlite database with every migration applied, made (in a child
 * process, from dist/) unless one for this PGlite version, these migrations and this migration
 * runner exists. Returns its path.
 */
export function migratedSnapshot(log: (line: string) => void = (l) => console.log(l)): string {
  const hash = createHash('sha256');
  const pglite = JSON.parse(readFileSync(join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')) as { version: string };
  hash.update(`pglite ${pglite.version}\n`);
  const migrations = join(ROOT, 'migrations');
  for (const f of readdirSync(migrations).sort()) hash.update(`${f}\n`).update(readFileSync(join(migrations, f)));
  for (const f of ['dist/db/migrate.js', 'dist/db/pglite.js']) hash.update(`${f}\n`).update(readFileSync(join(ROOT, f)));
  const name = `migrated-${pglite.version}-${hash.digest('hex').slice(0, 16)}.tar`;
  const file = join(SNAPSHOTS, name);
  if (existsSync(file)) return file;
  log(`test setup: making ${relative(ROOT, file)} (a migrated PGlite database for the tests)`);
  mkdirSync(SNAPSHOTS, { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  const script = `
    import { writeFileSync } from 'node:fs';
    import { PgliteExecutor } from './dist/db/pglite.js';
    import { migrate } from './dist/db/migrate.js';
    const db = await PgliteExecutor.open();
    await migrate(db);
    const dump = await db.db.dumpDataDir('none');
    await db.close();
    writeFileSync(${JSON.stringify(tmp)}, Buffer.from(await dump.arrayBuffer()));`;
  execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, stdio: 'inherit' });
  renameSync(tmp, file);
  for (const old of readdirSync(SNAPSHOTS)) if (/^migrated-.*\.tar$/.test(old) && old !== name) rmSync(join(SNAPSHOTS, old), { force: true });
  return file;
}

interface Project {
  provide(key: 'pgliteSnapshot', value: string): void;
  onTestsRerun?(cb: () => void | Promise<void>): void;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated PGlite tarball test databases in memory start from (see migratedSnapshot). */
    pgliteSnapshot: string;
  }
}

export default function setup(project: Project) {
  const prepare = () => {
    ensureBuilt();
    project.provide('pgliteSnapshot', migratedSnapshot());
  };
  prepare();
  // Watch mode: a rerun after an edit of src/ or migrations/ gets fresh JS and a fresh snapshot too.
  project.onTestsRerun?.(prepare);
}
