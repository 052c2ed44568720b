import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * The console's stylesheets, scripts and icon: real files (src/console/assets/, copied beside the
 * compiled JS into dist/console/assets/ by the build), and uPlot from its own package (never a
 * CDN). Each is served under a name that holds the hash of its content, `console.<hash>.css`, and
 * cached for a year: a new content is a new name, so no browser keeps an old file after a release.
 */
export type AssetName = 'console.css' | 'console.js' | 'charts.js' | 'uplot.css' | 'uplot.js' | 'favicon.svg' | 'passkeys.js';

export interface Asset {
  /** The name a page links: `console.<hash>.css`. */
  file: string;
  type: string;
  body: Buffer;
}

/** The first 16 hex digits (64 bits) of the content's SHA-256. */
export const contentHash = (body: Buffer | string) => createHash('sha256').update(body).digest('hex').slice(0, 16);

const requireFromHere = createRequire(import.meta.url);
/**
 * A bundle made at build time (scripts/bundle.mjs) into dist/console/assets/: beside this
 * module when it runs from dist/, else (the sources, under tsx or vitest) in dist/ of the checkout.
 */
const bundled = (name: string) => {
  const beside = fileURLToPath(new URL(`./assets/${name}`, import.meta.url));
  return existsSync(beside) ? beside : fileURLToPath(new URL(`../../dist/console/assets/${name}`, import.meta.url));
};
const SOURCES: Record<AssetName, string> = {
  'console.css': fileURLToPath(new URL('./assets/console.css', import.meta.url)),
  'console.js': fileURLToPath(new URL('./assets/console.js', import.meta.url)),
  'charts.js': fileURLToPath(new URL('./assets/charts.js', import.meta.url)),
  'favicon.svg': fileURLToPath(new URL('./assets/favicon.svg', import.meta.url)),
  'uplot.css': requireFromHere.resolve('uplot/dist/uPlot.min.css'),
  'uplot.js': requireFromHere.resolve('uplot/dist/uPlot.iife.min.js'),
  'passkeys.js': bundled('passkeys.js'),
};
const TYPES: Record<string, string> = { css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8', svg: 'image/svg+xml' };

function load(name: AssetName): Asset {
  let body: Buffer;
  try {
    body = readFileSync(SOURCES[name]);
  } catch (err) {
    throw new Error(
      `The console's asset ${name} is missing (${SOURCES[name]}): run \`npm run build\`, which copies src/console/assets/ into dist/ and bundles src/console/client/.`,
      {
        cause: err,
      },
    );
  }
  const dot = name.lastIndexOf('.');
  const ext = name.slice(dot + 1);
  return { file: `${name.slice(0, dot)}.${contentHash(body)}.${ext}`, type: TYPES[ext], body };
}

/** Read once, when the console is first imported: the files do not change while the process runs. */
const BY_NAME = new Map((Object.keys(SOURCES) as AssetName[]).map((name) => [name, load(name)]));

/** The assets by the hashed name their URL ends with. */
export const ASSETS: ReadonlyMap<string, Asset> = new Map([...BY_NAME.values()].map((a) => [a.file, a]));

/** The URL a page links for an asset: `/console/assets/console.<hash>.css`. */
export const assetHref = (name: AssetName) => `/console/assets/${BY_NAME.get(name)!.file}`;
