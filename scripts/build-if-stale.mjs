#!/usr/bin/env node
/**
 * `npm start`'s prestart, and the tests' globalSetup (test/helpers/build.ts): compiles src/ to dist/
 * only when a source is newer than its compiled file (or a compiler setting newer than dist/),
 * copies the assets that are not TypeScript (copy-assets.mjs) when missing or changed, bundles the
 * browser scripts (bundle.mjs) when missing or stale, and makes
 * the PGlite template data directories when missing (the migrated one: for these migrations). `npm install` builds once
 * (`prepare`); every later start that changed nothing starts at once instead of running two full
 * TypeScript builds (issue 29: 58-104 s before the first answer).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle } from './bundle.mjs';
import { copyAssets } from './copy-assets.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist');
/** Settings that change every compiled file. */
const SETTINGS = ['tsconfig.json', 'tsconfig.build.json'].map((f) => join(ROOT, f));

function* sources(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* sources(path);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) yield path;
  }
}

const mtime = (path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs;

/** Why dist/ is stale (the first reason found), or null when every compiled file is at least as new as its source. */
export function staleReason() {
  const settings = Math.max(...SETTINGS.map((f) => mtime(f) ?? 0));
  for (const src of sources(SRC)) {
    const rel = relative(SRC, src);
    const built = mtime(join(DIST, rel.replace(/\.ts$/, '.js')));
    if (built === undefined) return `dist/${rel.replace(/\.ts$/, '.js')} is missing`;
    if (built < mtime(src)) return `src/${rel} is newer than its compiled file`;
    if (built < settings) return 'a tsconfig file is newer than dist/';
  }
  return null;
}

/** As migrationsFingerprint() in src/db/pglite-init.ts: every migration's name and SHA-256. */
function migrationsFingerprint() {
  const dir = join(ROOT, 'migrations');
  const hash = createHash('sha256');
  for (const name of readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()) {
    hash.update(
      `${name} ${createHash('sha256')
        .update(readFileSync(join(dir, name), 'utf8'))
        .digest('hex')}\n`,
    );
  }
  return hash.digest('hex').slice(0, 16);
}

/** The plain template, or the one migrated for the package's migrations, is missing. */
function pgliteTemplateMissing() {
  const dir = join(ROOT, '.pglite-template');
  if (!existsSync(dir)) return true;
  const made = readdirSync(dir).filter((d) => existsSync(join(dir, d, 'PG_VERSION')));
  const migrated = `-migrated-${migrationsFingerprint()}`;
  return !made.some((d) => !d.includes('-migrated-')) || !made.some((d) => d.endsWith(migrated));
}

/**
 * Compiles src/ to dist/ if it is stale, and makes the PGlite template if it is missing.
 * `allowTypeErrors`: tsc still writes the JS of a program with type errors; the tests' typecheck
 * step reports those, so there only JS that is still missing or old stops the run.
 */
export function ensureBuilt({ log = (line) => console.log(line), allowTypeErrors = false } = {}) {
  const why = staleReason();
  if (why) {
    log(`build: ${why}; compiling src/ to dist/ (tsc -p tsconfig.build.json)`);
    const started = Date.now();
    try {
      execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'pipe' });
    } catch (err) {
      const out = String(err.stdout ?? '') + String(err.stderr ?? '');
      log(`build: tsc reported errors:\n${out.trim().slice(0, 4000)}`);
      const still = staleReason();
      if (!allowTypeErrors || still) throw new Error(`build: compiling src/ to dist/ failed${still ? ` (${still})` : ''}`);
    }
    log(`build: compiled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  // The files tsc does not write (the console's CSS and JS): copied when missing or changed.
  const copied = copyAssets();
  if (copied.length > 0) log(`build: copied ${copied.join(', ')} to dist/`);
  // The browser scripts (scripts/bundle.mjs): bundled when missing or older than a file they are made from.
  for (const m of bundle()) log(`build: bundled dist/${m.out} (${m.why})`);
  if (pgliteTemplateMissing()) {
    log('build: making the PGlite template data directory');
    execFileSync(process.execPath, [join(DIST, 'db/pglite-init-child.js'), 'template'], { cwd: ROOT, stdio: 'inherit' });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    ensureBuilt({ log: (line) => console.error(line) });
  } catch (err) {
    console.error(err.message);
    process.exit(1);
  }
}
