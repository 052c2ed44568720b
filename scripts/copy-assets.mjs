#!/usr/bin/env node
/**
 * The build's second step, after tsc: every file under src/ that is not TypeScript (the console's
 * stylesheet and scripts in src/console/assets/) is copied to the same path under dist/, where the
 * compiled modules read it (`new URL('./assets/...', import.meta.url)`). `npm run build`, the
 * tests' and `npm start`'s build-if-stale.mjs and the Containerfile run it.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist');

function* assets(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* assets(path);
    else if (!e.name.endsWith('.ts')) yield path;
  }
}

const same = (a, b) => statSync(b, { throwIfNoEntry: false })?.size === statSync(a).size && readFileSync(a).equals(readFileSync(b));

/** Copies the assets whose copy under dist/ is missing or differs; returns their paths under src/. */
export function copyAssets() {
  const copied = [];
  for (const src of assets(SRC)) {
    const rel = relative(SRC, src);
    const out = join(DIST, rel);
    if (same(src, out)) continue;
    mkdirSync(dirname(out), { recursive: true });
    copyFileSync(src, out);
    copied.push(rel);
  }
  return copied;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const copied = copyAssets();
  console.log(`copy-assets: ${copied.length === 0 ? 'dist/ has every asset already' : `copied ${copied.join(', ')} to dist/`}`);
}
