#!/usr/bin/env node
/**
 * The console's browser bundles, made at build time (issue 55): src/console/client/passkeys.ts with
 * `@simplewebauthn/browser`, bundled by esbuild into one classic script, dist/console/assets/passkeys.js,
 * which src/console/assets.ts serves under its content's hash (immutable) like every console asset.
 * `npm run build` runs it after tsc; so does build-if-stale.mjs (npm start, the tests' setup), which
 * rewrites the file only when its content changes.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Entry under src/ -> output under dist/. */
export const CONSOLE_BUNDLES = [{ entry: 'src/console/client/passkeys.ts', out: 'dist/console/assets/passkeys.js' }];

/** Bundles each entry (synchronously: build-if-stale is); writes those whose content changed; returns their output paths. */
export function bundleConsole() {
  const esbuild = createRequire(import.meta.url)('esbuild');
  const written = [];
  for (const { entry, out } of CONSOLE_BUNDLES) {
    const built = esbuild.buildSync({
      entryPoints: [join(ROOT, entry)],
      bundle: true,
      format: 'iife',
      platform: 'browser',
      target: 'es2020',
      minify: true,
      write: false,
      legalComments: 'eof',
      logLevel: 'silent',
    });
    const text = built.outputFiles[0].text;
    const path = join(ROOT, out);
    let old = null;
    try {
      old = readFileSync(path, 'utf8');
    } catch {
      // not built yet
    }
    if (old === text) continue;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    written.push(out);
  }
  return written;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const written = bundleConsole();
  console.log(`bundle-console: ${written.length === 0 ? 'every bundle is up to date' : `wrote ${written.join(', ')}`}`);
}
