/**
 * Child process of src/db/pglite-init.ts: `init DIR` runs PGlite's initdb for DIR and exits,
 * taking its memory with it; `template` makes the template data directories (run by `npm run
 * build`): the plain one, then the one with every migration applied.
 */
import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { migrate } from './migrate.js';
import { openPglite, PgliteExecutor } from './pglite.js';
import { isInitialized, makeTemplate, migratedTemplateDir, templateDir } from './pglite-init.js';

/**
 * The plain template copied into a temporary directory, every migration applied, closed (PGlite
 * checkpoints), then renamed into place; the migrated templates of other migrations are removed.
 */
async function makeMigratedTemplate(): Promise<'exists' | 'made'> {
  const target = migratedTemplateDir();
  if (isInitialized(target)) return 'exists';
  const tmp = `${target}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  try {
    const db = await PgliteExecutor.open(tmp);
    try {
      await migrate(db);
      // Every row the migrations wrote (catalogs included) marked committed and frozen here, once,
      // rather than by the first queries of every database copied from it.
      await db.exec('VACUUM FREEZE');
    } finally {
      await db.close();
    }
    try {
      renameSync(tmp, target);
    } catch (err) {
      if (!isInitialized(target)) throw err; // another build made it first
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const prefix = `${basename(templateDir())}-migrated-`;
  for (const old of readdirSync(dirname(target))) {
    if (old.startsWith(prefix) && old !== basename(target) && !old.includes('.tmp-')) rmSync(join(dirname(target), old), { recursive: true, force: true });
  }
  return 'made';
}

const [command, dir] = process.argv.slice(2);
if (command === 'init' && dir) {
  const db = openPglite(dir);
  await db.waitReady;
  await db.close();
} else if (command === 'template') {
  const t0 = Date.now();
  if ((await makeTemplate()) === 'made') console.log(`made the embedded database template in ${templateDir()} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  const t1 = Date.now();
  if ((await makeMigratedTemplate()) === 'made')
    console.log(`made the migrated embedded database template in ${migratedTemplateDir()} (${((Date.now() - t1) / 1000).toFixed(1)} s)`);
} else {
  console.error('usage: pglite-init-child (init DIR | template)');
  process.exit(2);
}
