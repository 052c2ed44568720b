#!/usr/bin/env node
/**
 * The build's browser scripts: each entry below is bundled with its imports (esbuild, for the
 * browsers the pages support) into one file under dist/, which the server reads when it starts
 * and serves under a name that holds the hash of its content, cached as immutable (issue 54,
 * item 6: nothing is built at start, no esbuild service runs beside a server). `npm run build`,
 * build-if-stale.mjs (`npm start`'s prestart, the tests' globalSetup) and the Containerfile run it.
 *
 * A new browser script is one more entry. A bundle is made again when its output is missing,
 * when this file changed, or when any file it was made from (its record in dist/bundles.json,
 * esbuild's list of inputs, packages included) is newer than it.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DIST = join(ROOT, 'dist');
const RECORD = join(DIST, 'bundles.json');

/** Every browser script: its entry under src/, its output under dist/ (where the server reads it). */
export const ENTRIES = [
  // The check-in page ships every catalogue (its language rides in the link's fragment, so that no
  // request depends on it), but only the respondents' messages of each: the console's stay out.
  { entry: 'src/checkin/client/checkin.ts', out: 'checkin/assets/checkin.js', messages: ['meta.', 'checkin.', 'about.'] },
  { entry: 'src/console/client/passkeys.ts', out: 'console/assets/passkeys.js' },
];

/**
 * Packages of the server bundled for dist/: each is written as a package of its own under
 * dist/node_modules/, where Node finds it first from any module of dist/ (the nearest
 * node_modules wins), one file per entry of its exports and a few shared chunks. typebox is 683
 * small ES modules, loaded by every server start and every command of the CLI: about 0.5 s of CPU
 * each, against 0.05 s bundled (docs/decisions.md). The tests, which run src/ in process, still
 * load it from node_modules/; the code is the same version either way.
 */
export const VENDORED = [{ entry: 'typebox', out: 'node_modules/typebox/package.json', vendor: true }];

const OPTIONS = {
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'es2020',
  minify: true,
  legalComments: 'eof',
  charset: 'utf8',
  logLevel: 'silent',
};

const mtime = (path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs;

function readRecord() {
  try {
    return JSON.parse(readFileSync(RECORD, 'utf8'));
  } catch {
    return {};
  }
}

/** Why an entry's bundle must be made again, or null when it is fresh. */
function staleBecause(e, record) {
  const built = mtime(join(DIST, e.out));
  if (built === undefined) return `dist/${e.out} is missing`;
  const inputs = record[e.out]?.inputs;
  if (!Array.isArray(inputs) || record[e.out].entry !== e.entry) return `dist/${e.out} has no record of its inputs`;
  if ((mtime(fileURLToPath(import.meta.url)) ?? 0) > built) return 'scripts/bundle.mjs is newer than it';
  // npm writes a package's files with one fixed date: an upgrade shows in its version only.
  if (e.vendor && record[e.out].version !== packageOf(e.entry).version) return `${e.entry} ${packageOf(e.entry).version} is installed`;
  const newer = inputs.find((i) => (mtime(join(ROOT, i)) ?? Number.POSITIVE_INFINITY) > built);
  return newer ? `${newer} is newer than dist/${e.out}` : null;
}

const packageOf = (name) => JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8'));

/** The entries (browser scripts and vendored packages) whose bundle is missing or older than one of its inputs, with the reason. */
export function staleBundles() {
  const record = readRecord();
  return [...ENTRIES, ...VENDORED].map((e) => ({ ...e, why: staleBecause(e, record) })).filter((e) => e.why);
}

/**
 * Bundles the stale entries (all of them with `force`), synchronously (esbuild's buildSync: no
 * service process stays behind). Returns what it made, as `{ out, bytes, why }`.
 */
export function bundle({ force = false } = {}) {
  const todo = force ? [...ENTRIES, ...VENDORED].map((e) => ({ ...e, why: 'asked' })) : staleBundles();
  if (todo.length === 0) return [];
  const record = readRecord();
  const made = [];
  for (const e of todo) {
    const outfile = join(DIST, e.out);
    mkdirSync(dirname(outfile), { recursive: true });
    // esbuild's plugins (the catalogues' filter) need its asynchronous API: it runs in a child
    // process, waited for here, so that this function stays synchronous and leaves nothing behind.
    const result = JSON.parse(
      execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--one', JSON.stringify({ ...e, outfile })], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    record[e.out] = { entry: e.entry, ...(e.vendor ? { version: packageOf(e.entry).version } : {}), inputs: result.inputs };
    made.push({ out: e.out, bytes: result.bytes, why: e.why });
  }
  writeFileSync(RECORD, `${JSON.stringify(record, null, 1)}\n`);
  return made;
}

/**
 * A package of the server bundled into dist/node_modules/<name>/: an entry per subpath of its
 * exports (as `import` resolves it), chunks shared between them (one copy of each module, as in
 * the package), and a package.json that maps the same subpaths.
 */
async function vendorOne(esbuild, { entry: name, outfile }) {
  const pkg = packageOf(name);
  const dir = dirname(outfile);
  const subpaths = Object.entries(pkg.exports)
    .map(([sub, target]) => [sub, typeof target === 'string' ? target : (target.import ?? target.default)])
    .filter(([sub, target]) => typeof target === 'string' && /\.m?js$/.test(target) && !sub.includes('*'));
  const out = (sub) => (sub === '.' ? 'index' : sub.slice(2));
  rmSync(dir, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: subpaths.map(([sub, target]) => ({ in: join(ROOT, 'node_modules', name, target), out: out(sub) })),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    chunkNames: 'chunks/[name]-[hash]',
    legalComments: 'eof',
    charset: 'utf8',
    logLevel: 'silent',
    outdir: dir,
    metafile: true,
    absWorkingDir: ROOT,
  });
  // Its license goes with the copy (MIT and the like ask it).
  for (const f of ['LICENSE', 'license', 'LICENSE.md', 'license.md'])
    if (existsSync(join(ROOT, 'node_modules', name, f))) copyFileSync(join(ROOT, 'node_modules', name, f), join(dir, f));
  const exports = Object.fromEntries(subpaths.map(([sub]) => [sub, `./${out(sub)}.js`]));
  const description = `${name} ${pkg.version} (${pkg.license}), bundled by scripts/bundle.mjs for dist/: see docs/decisions.md`;
  writeFileSync(
    outfile,
    `${JSON.stringify({ name, version: pkg.version, description, license: pkg.license, private: true, type: 'module', exports }, null, 2)}\n`,
  );
  await esbuild.stop();
  const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
  return { inputs: Object.keys(result.metafile.inputs).sort(), bytes };
}

/** One entry, bundled and written; what it was made from is printed as JSON (run by `bundle` in a child process). */
async function bundleOne({ entry, outfile, messages, vendor }) {
  // Loaded here only: a build that has nothing to bundle (and the server, always) never loads it.
  const esbuild = createRequire(import.meta.url)('esbuild');
  if (vendor) return vendorOne(esbuild, { entry, outfile });
  const plugins = messages
    ? [
        {
          name: 'catalogue-messages',
          setup(build) {
            build.onLoad({ filter: /[\\/]src[\\/]i18n[\\/]locales[\\/][^\\/]+\.json$/ }, ({ path }) => {
              const all = JSON.parse(readFileSync(path, 'utf8'));
              const kept = Object.fromEntries(Object.entries(all).filter(([key]) => messages.some((prefix) => key.startsWith(prefix))));
              return { contents: JSON.stringify(kept), loader: 'json' };
            });
          },
        },
      ]
    : [];
  const result = await esbuild.build({ ...OPTIONS, entryPoints: [join(ROOT, entry)], outfile, write: false, metafile: true, absWorkingDir: ROOT, plugins });
  const [file] = result.outputFiles;
  writeFileSync(outfile, file.contents);
  await esbuild.stop();
  return { inputs: Object.keys(result.metafile.inputs).sort(), bytes: file.contents.length };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && process.argv[2] === '--one') {
  process.stdout.write(JSON.stringify(await bundleOne(JSON.parse(process.argv[3]))));
} else if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const made = bundle({ force: process.argv.includes('--force') });
  console.log(
    made.length === 0
      ? 'bundle: every browser script and vendored package in dist/ is fresh already'
      : made.map((m) => `bundle: made dist/${m.out} (${(m.bytes / 1024).toFixed(0)} KiB; ${m.why})`).join('\n'),
  );
}
