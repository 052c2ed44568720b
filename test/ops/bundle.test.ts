import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startServerProcess, type ServerProcess } from '../helpers/process.js';
// @ts-expect-error: a plain script of the package (scripts/), without type declarations
import { ENTRIES, staleBundles } from '../../scripts/bundle.mjs';

/**
 * Nothing built at start (issue 54, item 6): the check-in page's script is bundled by the build
 * (scripts/bundle.mjs), served under its content's hash as immutable, and a server never loads
 * esbuild nor runs its service process beside it.
 */
describe('the browser scripts are bundled at build time', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-bundle-'));
  const resolved = join(dir, 'resolved.txt');
  let server: ServerProcess;

  beforeAll(async () => {
    // Every module the server resolves whose path holds esbuild (or fastify's, to show the hook works) is written down.
    const hook = `export async function resolve(s, c, next) { const r = await next(s, c); if (/esbuild|\\/fastify\\/fastify\\.js$|\\/typebox\\//.test(r.url)) (await import('node:fs')).appendFileSync(${JSON.stringify(resolved)}, r.url + '\\n'); return r; }`;
    const register = `import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));`;
    server = await startServerProcess({
      DATA_DIR: join(dir, 'data'),
      NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(register)}`,
    });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the build made every entry, and knows what each was made from', () => {
    expect(ENTRIES.map((e: { out: string }) => e.out)).toEqual(['checkin/assets/checkin.js', 'console/assets/passkeys.js']);
    expect(staleBundles()).toEqual([]); // the tests' setup (build-if-stale.mjs) bundled what was stale
    const record = JSON.parse(readFileSync(join(ROOT, 'dist/bundles.json'), 'utf8'));
    expect(record['checkin/assets/checkin.js'].inputs).toEqual(
      expect.arrayContaining([
        'src/checkin/client/checkin.ts',
        'src/i18n/index.ts',
        'src/i18n/locales/ar.json',
        'node_modules/@cloudflare/blindrsa-ts/lib/src/index.js',
      ]),
    );
  });

  it('the page links its script and stylesheet by content hash; they are cached as immutable; the old name is gone', async () => {
    const page = await (await fetch(`${server.url}/checkin/o/org_acme`)).text();
    const script = /<script src="(\/checkin\/assets\/checkin\.([0-9a-f]{16})\.js)" defer><\/script>/.exec(page);
    const css = /<link rel="stylesheet" href="(\/checkin\/assets\/checkin\.([0-9a-f]{16})\.css)">/.exec(page);
    expect(script, page).not.toBeNull();
    expect(css, page).not.toBeNull();
    const built = readFileSync(join(ROOT, 'dist/checkin/assets/checkin.js'));
    expect(script![2]).toBe(createHash('sha256').update(built).digest('hex').slice(0, 16));
    for (const [href, hash, type] of [
      [script![1], script![2], 'text/javascript; charset=utf-8'],
      [css![1], css![2], 'text/css; charset=utf-8'],
    ]) {
      const res = await fetch(`${server.url}${href}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-type')).toBe(type);
      expect(
        createHash('sha256')
          .update(Buffer.from(await res.arrayBuffer()))
          .digest('hex')
          .slice(0, 16),
      ).toBe(hash);
    }
    expect((await fetch(`${server.url}/checkin/assets/checkin.js`)).status).toBe(404);
    // The about page links the same stylesheet and script (its words and language menu).
    const about = await (await fetch(`${server.url}/checkin/about`)).text();
    expect(about).toContain(`href="${css![1]}"`);
    expect(about).toContain(`<script src="${script![1]}" defer></script>`);
  });

  it('the server loaded no esbuild module and runs no process beside it', async () => {
    const pid = server.child.pid!;
    expect(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim()).toBe('');
    const loaded = readFileSync(resolved, 'utf8').split('\n').filter(Boolean);
    expect(loaded.some((url) => url.endsWith('/node_modules/fastify/fastify.js'))).toBe(true);
    expect(loaded.filter((url) => url.includes('esbuild'))).toEqual([]);
  });

  it('typebox is bundled for dist/ (dist/node_modules/typebox): the server loads a dozen of its files, not 683', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'dist/node_modules/typebox/package.json'), 'utf8'));
    const installed = JSON.parse(readFileSync(join(ROOT, 'node_modules/typebox/package.json'), 'utf8'));
    expect(pkg).toMatchObject({ name: 'typebox', version: installed.version, license: installed.license, private: true, type: 'module' });
    // Every subpath the package exports, so that an import of another one still finds it.
    expect(Object.keys(pkg.exports).sort()).toEqual(Object.keys(installed.exports).sort());
    expect(readFileSync(join(ROOT, 'dist/node_modules/typebox/license'), 'utf8')).toBe(readFileSync(join(ROOT, 'node_modules/typebox/license'), 'utf8'));
    const loaded = new Set(
      readFileSync(resolved, 'utf8')
        .split('\n')
        .filter((url) => url.includes('/typebox/')),
    );
    const vendored = `file://${join(ROOT, 'dist/node_modules/typebox/')}`;
    expect([...loaded].filter((url) => !url.startsWith(vendored))).toEqual([]);
    expect(loaded.size).toBeGreaterThan(2);
    expect(loaded.size).toBeLessThanOrEqual(Object.keys(pkg.exports).length + 10);
    // The record names the installed version: an upgrade (npm writes every file with one date) bundles again.
    const record = JSON.parse(readFileSync(join(ROOT, 'dist/bundles.json'), 'utf8'));
    expect(record['node_modules/typebox/package.json']).toMatchObject({ entry: 'typebox', version: installed.version });
  });
});
