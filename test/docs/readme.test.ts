import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, freePort, ROOT } from '../helpers/process.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const ADMIN_SECTION = 'Running the product around the API';
const CONSOLE_SECTION = 'The console';
/** Unset: the embedded PGlite, as `npm start` runs by default. Set (.ci/run's second pass): a fresh schema of that PostgreSQL. */
const DATABASE = process.env.TEST_DATABASE_URL || undefined;
const REDIS = process.env.TEST_REDIS_URL || undefined;
/**
 * The Node.js that runs the server, the CLI and every `node` of the README's lines: this one, or
 * README_NODE (.ci/run's third run of this file: Node 24 LTS from the registry's `node` package).
 */
const NODE = process.env.README_NODE || process.execPath;
const TSX = join(ROOT, 'node_modules/tsx/dist/cli.mjs');

export interface ReadmeCommand {
  /** The command as run (continuation lines joined, the README's placeholders and `npx climate-pulse` resolved). */
  text: string;
  /** The line as printed (continuation lines joined). */
  printed: string;
  /** The README section (## heading) it is under. */
  section: string;
  /** Statuses the README says the command answers with (`# -> 409`), else 2xx only. */
  expected: number[];
  /** Why the test does not run the line itself (the ones that install, start or test the project, and so on); undefined: it runs. */
  skip?: string;
}

/** A line that only names a value the server printed (`ORG=org_demo_…`): the test gives it as $ORG and $KEY. */
const PLACEHOLDER = /^[A-Z_][A-Z0-9_]*=\S*…\S*(\s+#.*)?$/;

/**
 * Every command line of the README's `sh` blocks, top to bottom, each marked whether this test
 * runs it, and why not when it does not: `npm install`, `npm start` and `npm test` (the test starts
 * the server itself as `npm start` does, with ADMIN_PORT and ADMIN_TOKEN as the README sets them),
 * the line that makes ADMIN_TOKEN (run before that start, its value given to the server), and the
 * lines that only name a printed value. Every other line runs: `curl`, the CLI (`npx climate-pulse`
 * and `node bin/climate-pulse.js` are the compiled CLI here), assignments, the shell function, the
 * example's `npx tsx`, with `cp_live_…` and `org_demo_…` being the printed key and organization.
 */
export function readmeCommands(markdown: string): ReadmeCommand[] {
  const out: ReadmeCommand[] = [];
  let section = '';
  let inSh = false;
  let pending = '';
  for (const line of markdown.split('\n')) {
    if (!inSh && /^#{2,3} /.test(line)) section = line.replace(/^#+ /, '').trim();
    if (line.startsWith('```')) {
      inSh = !inSh && line.trim() === '```sh';
      pending = '';
      continue;
    }
    if (!inSh) continue;
    if (line.endsWith('\\')) {
      pending += line.slice(0, -1).trimEnd() + ' ';
      continue;
    }
    // A single-quoted argument may span lines (a JSON body): join until its quote closes.
    if (((pending + line).match(/'/g) ?? []).length % 2 === 1) {
      pending += line.trim() + '\n';
      continue;
    }
    const printed = (pending + line.trim()).trim();
    pending = '';
    if (!printed || printed.startsWith('#')) continue;
    const expected = [...printed.matchAll(/#\s*->\s*(\d{3})/g)].map((m) => Number(m[1]));
    const skip = /(^|[\s;&|(])npm (install|start|test|ci|run)\b/.test(printed)
      ? 'installs, starts or tests the project: the test starts the server as `npm start` does'
      : /^export ADMIN_TOKEN=/.test(printed)
        ? 'makes ADMIN_TOKEN: run before the server starts, which gets its value'
        : PLACEHOLDER.test(printed)
          ? 'names a printed value: given as $ORG and $KEY'
          : undefined;
    const text = printed
      .replace(/(^|\$\()npx climate-pulse\s/g, '$1climate-pulse ')
      .replace(/(^|\$\()node bin\/climate-pulse\.js\s/g, '$1climate-pulse ')
      .replaceAll('cp_live_…', '$KEY')
      .replaceAll('org_demo_…', '$ORG');
    out.push({ text, printed, section, expected, skip });
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A browser of the console over fetch: keeps cookies, posts its forms with their token, as the page's own form would. */
class ConsoleBrowser {
  cookies = new Map<string, string>();
  constructor(readonly origin: string) {}
  async request(path: string, form?: Record<string, string>) {
    const res = await fetch(new URL(path, this.origin), {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded', origin: this.origin, 'sec-fetch-site': 'same-origin' } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      if (/Max-Age=0/i.test(c)) this.cookies.delete(pair.slice(0, i));
      else this.cookies.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return { status: res.status, location: res.headers.get('location'), body: await res.text() };
  }
  /** Opens the page, then submits its form (the one posting to `action`, default the page itself) with its token. */
  async submit(page: string, fields: Record<string, string>, action = page) {
    const { status, body } = await this.request(page);
    expect(status, `${page}: ${body.slice(0, 300)}`).toBe(200);
    expect(body).toContain(`action="${action}"`);
    const token = /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
    expect(token, `a form token on ${page}`).toBeDefined();
    return this.request(action, { _csrf: token!, ...fields });
  }
}

/**
 * The README as a new user follows it: `npm start`'s equivalent (the embedded database in an empty
 * DATA_DIR, or with TEST_DATABASE_URL an empty PostgreSQL schema; the operator API on as the README's
 * operator section starts it): the server creates the demo organization and prints its key and a
 * console invitation. Then every line of every `sh` block in order, in one shell (variables carry
 * over), with $KEY and $ORG the printed key and organization and the ports of this run; a non-2xx
 * answer fails unless the README says it is expected (`# -> 409`). Then the console section: the
 * printed link is followed, the invitation accepted with a password through the console's forms, and
 * the owner signs out and in again; the invitation the README's `members invite` printed is accepted too.
 */
describe(`README.md (${DATABASE ? 'PostgreSQL' : 'embedded PGlite'}, Node ${spawnSync(NODE, ['-v'], { encoding: 'utf8' }).stdout?.trim() || NODE})`, () => {
  const commands = readmeCommands(README);
  let dataDir: string;
  let work: string;
  let server: ChildProcess;
  let out = '';
  let port: number;
  let adminPort: number;
  let adminToken: string;
  let databaseUrl = '';
  let schema: string | undefined;
  let serverEnv: Record<string, string>;
  /** PATH with NODE's directory first: `node` in the README's lines is NODE. */
  const PATH = `${dirname(NODE)}${delimiter}${process.env.PATH ?? ''}`;

  beforeAll(async () => {
    expect(spawnSync(NODE, ['-v']).status, `README_NODE ${NODE} does not run`).toBe(0);
    dataDir = mkdtempSync(join(tmpdir(), 'cp-readme-data-'));
    work = mkdtempSync(join(tmpdir(), 'cp-readme-work-'));
    port = await freePort();
    adminPort = await freePort();
    if (DATABASE) {
      // A fresh schema, as test/helpers/db.ts makes them, left empty: the server migrates it on start.
      schema = `readme_${randomBytes(6).toString('hex')}`;
      const c = new pg.Client({ connectionString: DATABASE });
      await c.connect();
      await c.query(`CREATE SCHEMA ${schema}`);
      await c.end();
      const url = new URL(DATABASE);
      url.searchParams.set('options', `-c search_path=${schema}`);
      databaseUrl = url.toString();
    }
    // The README's own line makes the operator token.
    const tokenLine = commands.find((c) => /^export ADMIN_TOKEN=/.test(c.printed));
    expect(tokenLine, 'the README makes ADMIN_TOKEN').toBeDefined();
    const made = spawnSync('bash', ['-c', `${tokenLine!.text}\nprintf %s "$ADMIN_TOKEN"`], { env: { ...process.env, PATH }, encoding: 'utf8' });
    adminToken = made.stdout;
    expect(adminToken, made.stderr).toMatch(/^[0-9a-f]{48}$/);
    serverEnv = {
      DATA_DIR: dataDir, DATABASE_URL: databaseUrl, REDIS_URL: DATABASE && REDIS ? REDIS : '', PORT: String(port), HOST: '127.0.0.1',
      LOG_LEVEL: 'warn', ADMIN_PORT: String(adminPort), ADMIN_TOKEN: adminToken, ALERTS_INTERVAL_MINUTES: '0', PATH,
    };
    server = spawn(NODE, [CLI, 'serve', '--demo-if-empty'], { cwd: ROOT, env: { ...process.env, ...serverEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout!.on('data', (d) => (out += d));
    server.stderr!.on('data', (d) => (out += d));
    // Migrating an empty database and making the demo's 120 days: seconds, more on a loaded machine.
    const started = Date.now();
    while (!/Console: open \S+/.test(out)) {
      if (server.exitCode !== null) throw new Error(`server exited:\n${out}`);
      if (Date.now() > started + 240_000) throw new Error(`no console invitation printed in 240 s:\n${out}`);
      await sleep(100);
    }
    console.log(`README: the server printed its demo and invitation ${((Date.now() - started) / 1000).toFixed(1)} s after it was started`);
  }, 300_000);
  afterAll(async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
      const exited = once(server, 'exit');
      server.kill('SIGTERM');
      // A server that does not stop in time (one stuck starting, say) must not outlive the test.
      const timer = setTimeout(() => server.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    if (schema) {
      const c = new pg.Client({ connectionString: DATABASE });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (work) rmSync(work, { recursive: true, force: true });
  }, 60_000);

  it('finds its commands: curl lines of every section, the CLI, and runs all but the lines that install, start or name a printed value', () => {
    const run = commands.filter((c) => !c.skip);
    expect(run.filter((c) => c.text.startsWith('curl')).length).toBeGreaterThanOrEqual(15);
    expect(run.some((c) => c.text.startsWith('climate-pulse import-pulses'))).toBe(true);
    expect(run.some((c) => c.expected.includes(304))).toBe(true);
    expect(run.filter((c) => c.section === ADMIN_SECTION && c.text.startsWith('climate-pulse ')).length).toBeGreaterThanOrEqual(10);
    expect(run.filter((c) => c.section === CONSOLE_SECTION).map((c) => c.text.split(' ').slice(0, 3).join(' '))).toEqual([
      'climate-pulse keys create', 'climate-pulse members invite',
    ]);
    expect(run.some((c) => c.text.includes('npx tsx examples/weekly-report.ts'))).toBe(true);
    // What is not run, and why: nothing else.
    const skipped = commands.filter((c) => c.skip).map((c) => c.printed.replace(/\s+#.*$/, ''));
    expect(skipped).toEqual([
      'npm install && npm start', 'npm install && npm test', 'TEST_DATABASE_URL=postgres://root@127.0.0.1:5432/test TEST_REDIS_URL=redis://127.0.0.1:6379 npm test',
      'npm install && npm start', 'npm install && npm start',
      'export ADMIN_TOKEN=$(node -e "console.log(require(\'crypto\').randomBytes(24).toString(\'hex\'))")',
      'ADMIN_PORT=3001 npm start', 'ORG=org_demo_…', 'KEY=cp_live_…',
    ]);
  });

  it('prints the demo organization, its key, a curl line that works and the console invitation, as the README shows', () => {
    expect(out).toMatch(
      new RegExp(`climate-pulse listening on http://127\\.0\\.0\\.1:${port} \\(${DATABASE ? 'PostgreSQL' : 'embedded database in '}`),
    );
    expect(out).toMatch(/Demo organization org_demo_\w+ created with \d+ pulses and \d+ alerts? from the alert engine\./);
    expect(out).toMatch(new RegExp(`curl -s -H "Authorization: Bearer cp_live_\\w+" http://127\\.0\\.0\\.1:${port}/v1/stats`));
    // The console section's printed line, with its port and … standing for what varies.
    const shown = /```\n(Console: open [^\n]+)\n```/.exec(README)?.[1];
    expect(shown, 'the console section shows the printed invitation').toBeDefined();
    const pattern = shown!
      .replace('127.0.0.1:3000', `127.0.0.1:${port}`)
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('\\S+');
    expect(out).toMatch(new RegExp(pattern));
  });

  let shellOut = '';
  it('runs every line of every sh block against the demo, in order, each answered as the README says', async () => {
    const key = /API key \(shown once\): (cp_live_\w+)/.exec(out)![1];
    const org = /Demo organization (org_demo_\w+)/.exec(out)![1];
    const run = commands.filter((c) => !c.skip);

    // One shell runs them all in order (variables like ACTION carry over); `curl` reports each status on stderr.
    const script = [
      'set -u',
      `[ "$(node -p process.execPath)" = ${JSON.stringify(realpathSync(NODE))} ] || { echo "@@WRONG-NODE $(command -v node)" >&2; exit 3; }`,
      // A README line's own -w keeps its output on stdout; the status is appended after a switch to stderr.
      `curl() {
        local args=() w=0 found=0
        for a in "$@"; do
          if [ $w = 1 ]; then args+=("$a%{stderr}@@HTTP %{http_code}\\n"); w=0; found=1; continue; fi
          case "$a" in -w|--write-out) w=1;; esac
          args+=("$a")
        done
        [ $found = 1 ] || args=(-w '%{stderr}@@HTTP %{http_code}\\n' "\${args[@]}")
        command curl "\${args[@]}"
      }`,
      `climate-pulse() { node ${JSON.stringify(CLI)} "$@"; }`,
      // The example runs from the checkout, with the tsx it installs (never fetched here).
      `npx() { if [ "$1" = tsx ]; then shift; (cd ${JSON.stringify(ROOT)} && node ${JSON.stringify(TSX)} "$@"); else echo "npx $1: not expected in the README" >&2; return 127; fi; }`,
      ...run.flatMap((c, i) => [
        `echo "@@CMD ${i}"; echo "@@CMD ${i}" >&2`,
        c.text.replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`).replaceAll('127.0.0.1:3001', `127.0.0.1:${adminPort}`),
        `echo "@@EXIT $?" >&2`,
      ]),
    ].join('\n');
    const shell = spawn('bash', ['-c', script], {
      cwd: work,
      // The environment of the terminal that ran `npm start` (DATA_DIR, DATABASE_URL, PORT ...): the CLI reaches the same server or database.
      env: { ...process.env, ...serverEnv, KEY: key, ORG: org, CP_BASE_URL: `http://127.0.0.1:${port}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    shell.stdout.on('data', (d) => (stdout += d));
    shell.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => shell.kill('SIGKILL'), 240_000);
    await once(shell, 'close');
    clearTimeout(timer);
    shellOut = stdout;
    expect(stderr, stderr.slice(0, 600)).not.toContain('@@WRONG-NODE');
    const report = stderr.split('@@CMD ').slice(1);
    // A command that ends the shell (an unset variable under set -u, say) leaves the rest unrun: show where.
    expect(report.length, `stopped after: ${run[report.length - 1]?.text}\n${report.at(-1)?.slice(-600)}`).toBe(run.length);
    const failures: string[] = [];
    report.forEach((chunk, i) => {
      const c = run[i];
      const statuses = [...chunk.matchAll(/@@HTTP (\d{3})/g)].map((m) => Number(m[1]));
      const exit = Number(/@@EXIT (\d+)/.exec(chunk)?.[1]);
      const bad = statuses.filter((s) => (c.expected.length ? !c.expected.includes(s) : s < 200 || s > 299));
      if (exit !== 0 || bad.length || (c.text.includes('curl') && statuses.length === 0)) {
        failures.push(`${c.text}\n    -> exit ${exit}, statuses ${statuses.join(',') || 'none'}${c.expected.length ? ` (expected ${c.expected})` : ''}\n    ${chunk.replace(/^\d+\n/, '').slice(0, 400)}`);
      }
    });
    const died = server.exitCode !== null || server.signalCode !== null ? `\nthe server exited (${server.exitCode ?? server.signalCode}):\n${out.slice(-3000)}` : '';
    expect(failures, failures.join('\n') + died).toEqual([]);
    // The example printed its report of the demo's teams.
    const example = run.findIndex((c) => c.text.includes('examples/weekly-report.ts'));
    expect(stdout.split(`@@CMD ${example}\n`)[1]?.split('@@CMD ')[0]).toMatch(/^Demo Company: weeks \d{4}-W\d\d to \d{4}-W\d\d/);
  }, 300_000);

  it('the TypeScript block runs as written against the demo, twice (its POSTs are safe to retry), and ends on the 400 it shows', async () => {
    const blocks = [...README.matchAll(/```ts\n([^]*?)```/g)].map((m) => m[1]);
    expect(blocks).toHaveLength(1);
    // Inside the checkout, so that `@climate-pulse/client` resolves to the workspace package as in the README.
    mkdirSync(join(ROOT, '.test-tmp'), { recursive: true });
    const file = join(ROOT, '.test-tmp', `readme-block-${randomBytes(4).toString('hex')}.mts`);
    writeFileSync(file, blocks[0].replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`));
    try {
      const key = /API key \(shown once\): (cp_live_\w+)/.exec(out)![1];
      for (const round of [1, 2]) {
        const ran = spawnSync(NODE, [TSX, file], { cwd: ROOT, env: { ...process.env, PATH, CP_API_KEY: key }, encoding: 'utf8', timeout: 120_000 });
        expect(ran.status, `round ${round}: ${ran.stderr.slice(0, 600)}`).toBe(0);
        // Every pulse since 2026-10-01, one line each, then the error the block shows for limit=500.
        expect(ran.stdout.split('\n').filter((l) => /^\d{4}-\d\d-\d\dT[\d:.]+Z [1-5]$/.test(l)).length).toBeGreaterThan(200);
        expect(ran.stderr.trim()).toMatch(/^400 invalid_request Query parameter 'limit' must be <= 200\. [0-9a-f-]{36}$/);
      }
    } finally {
      rmSync(file, { force: true });
    }
  }, 300_000);

  it('the console: the printed link makes the owner, who signs out and in; the invitation `members invite` printed works too', async () => {
    expect(server.exitCode ?? server.signalCode, `the server exited:\n${out.slice(-3000)}`).toBeNull();
    const origin = `http://127.0.0.1:${port}`;
    const link = /Console: open (\S+) to become the owner \((\S+)\)/.exec(out)!;
    expect(link[1].startsWith(`${origin}/console/invitations/`)).toBe(true);
    const owner = new ConsoleBrowser(origin);
    const path = new URL(link[1]).pathname;
    const accepted = await owner.submit(path, { password: 'readme owner password' });
    expect(accepted.status, accepted.body.slice(0, 300)).toBe(303);
    expect(accepted.location).toBe('/console/overview');
    const overview = await owner.request('/console/overview');
    expect(overview.status).toBe(200);
    expect(overview.body).toMatch(/<h1[^>]*>Overview/);
    // The link works once.
    expect((await new ConsoleBrowser(origin).request(path)).status).toBe(404);
    const signedOut = await owner.submit('/console/overview', {}, '/console/sign-out');
    expect(signedOut.location).toBe('/console/sign-in');
    expect((await owner.request('/console/overview')).location).toBe('/console/sign-in');
    const signedIn = await owner.submit('/console/sign-in', { email: link[2], password: 'readme owner password' });
    expect(signedIn.status, signedIn.body.slice(0, 300)).toBe(303);
    expect(signedIn.location).toBe('/console/overview');
    const keys = await owner.request('/console/keys');
    expect(keys.status).toBe(200);
    expect(keys.body).toContain('API keys');

    // The README's `members invite` line printed a link for you@example.com: it works as well.
    const invite = commands.filter((c) => !c.skip).findIndex((c) => c.text.startsWith('climate-pulse members invite'));
    const printed = shellOut.split(`@@CMD ${invite}\n`)[1]?.split('@@CMD ')[0] ?? '';
    const second = /(http:\/\/\S+\/console\/invitations\/[\w-]+)/.exec(printed)?.[1];
    expect(second, printed).toBeDefined();
    expect(second!.startsWith(`${origin}/console/invitations/`)).toBe(true);
    const you = new ConsoleBrowser(origin);
    const joined = await you.submit(new URL(second!).pathname, { password: 'readme member password' });
    expect(joined.status, joined.body.slice(0, 300)).toBe(303);
    expect((await you.request('/console/overview')).status).toBe(200);
  }, 60_000);
});
