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
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error: a plain script of the package (scripts/), without type declarations
import { ensureBuilt as buildIfStale } from '../../scripts/build-if-stale.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** dist/ compiled when stale and the PGlite template made when missing: npm start's prestart does the same. */
export function ensureBuilt(log: (line: string) => void = (l) => console.log(l)): void {
  buildIfStale({ log: (line: string) => log(`test setup: ${line}`), allowTypeErrors: true });
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
