/**
 * Child process of src/db/pglite-init.ts: `init DIR` runs PGlite's initdb for DIR and exits,
 * taking its memory with it; `template` makes the template data directory (run by `npm run build`).
 */
import { openPglite } from './pglite.js';
import { makeTemplate, templateDir } from './pglite-init.js';

const [command, dir] = process.argv.slice(2);
if (command === 'init' && dir) {
  const db = openPglite(dir);
  await db.waitReady;
  await db.close();
} else if (command === 'template') {
  const t0 = Date.now();
  if ((await makeTemplate()) === 'made') console.log(`made the embedded database template in ${templateDir()} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
} else {
  console.error('usage: pglite-init-child (init DIR | template)');
  process.exit(2);
}
