import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, freePort, ROOT } from '../helpers/process.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const ADMIN_TOKEN = 'readme-admin-token-0123456789abcdefghijk'; // 40 characters
const ADMIN_SECTION = 'Running the product around the API';

export interface ReadmeCommand {
  /** The command as printed (continuation lines joined). */
  text: string;
  /** The README section (## heading) it is under. */
  section: string;
  /** Statuses the README says the command answers with (`# -> 409`), else 2xx only. */
  expected: number[];
  /** Needs the operator API: the admin port, or an operator command while the server holds the embedded DATA_DIR. */
  operator: boolean;
}

/**
 * Every command line of the README's `sh` blocks that talks to the service: `curl`,
 * `climate-pulse`, an assignment from a curl (`ACTION=$(curl ...)`), and the `printf` lines that
 * write the files they read. Comment lines and the lines that install or start things are not run.
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
    // `npx climate-pulse ...` (the form that works from a clone) runs as the CLI itself here.
    const text = (pending + line.trim()).trim().replace(/^npx climate-pulse\s/, 'climate-pulse ');
    pending = '';
    if (!text || text.startsWith('#')) continue;
    // Set-up lines run too (A="...", pick() { ... }, READ_KEY=$(...)), except placeholders (…) and starting the server.
    const setup = (/^[A-Z_][A-Z0-9_]*=/.test(text) && !/…|npm /.test(text)) || /^[a-z_]+\(\)\s*\{/.test(text);
    const runs = /^(curl|climate-pulse|printf)\s/.test(text) || setup;
    if (!runs) continue;
    const expected = [...text.matchAll(/#\s*->\s*(\d{3})/g)].map((m) => Number(m[1]));
    const operator = section === ADMIN_SECTION || /\$ADMIN_TOKEN|127\.0\.0\.1:3001/.test(text) || text.startsWith('climate-pulse');
    out.push({ text, section, expected, operator });
  }
  return out;
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

/**
 * The README as a new user follows it: `npm start`'s equivalent on an empty DATA_DIR (the
 * server creates the demo organization and prints its key), then every command of the README in
 * order, with $KEY and $ORG the printed key and organization and the ports of this run. A
 * non-2xx answer fails unless the README says it is expected (`# -> 409`).
 */
describe('README.md', () => {
  let dataDir: string;
  let work: string;
  let server: ChildProcess;
  let out = '';
  let port: number;
  let adminPort: number;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cp-readme-data-'));
    work = mkdtempSync(join(tmpdir(), 'cp-readme-work-'));
    port = await freePort();
    adminPort = await freePort();
    server = spawn(process.execPath, [CLI, 'serve', '--demo-if-empty'], {
      cwd: ROOT,
      env: {
        ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn',
        ADMIN_PORT: String(adminPort), ADMIN_TOKEN, ALERTS_INTERVAL_MINUTES: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout!.on('data', (d) => (out += d));
    server.stderr!.on('data', (d) => (out += d));
    const until = Date.now() + 120_000;
    while (!/API key \(shown once\): cp_live_\w+/.test(out)) {
      if (server.exitCode !== null) throw new Error(`server exited:\n${out}`);
      if (Date.now() > until) throw new Error(`no demo key printed:\n${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 180_000);
  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = once(server, 'exit');
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('finds its commands: curl lines of every section, the operator commands marked', () => {
    const commands = readmeCommands(README);
    expect(commands.filter((c) => c.text.startsWith('curl')).length).toBeGreaterThanOrEqual(15);
    expect(commands.some((c) => c.text.startsWith('climate-pulse import-pulses'))).toBe(true);
    expect(commands.some((c) => c.expected.includes(304))).toBe(true);
  });

  it('prints the demo organization, its key and a curl line that works', () => {
    expect(out).toMatch(/climate-pulse listening on http:\/\/127\.0\.0\.1:\d+ \(embedded database in /);
    expect(out).toMatch(/Demo organization org_demo_\w+ created with \d+ pulses and \d+ alerts? from the alert engine\./);
    expect(out).toMatch(new RegExp(`curl -s -H "Authorization: Bearer cp_live_\\w+" http://127\\.0\\.0\\.1:${port}/v1/stats`));
  });

  it('runs every curl and climate-pulse line against the demo, in order, each answered as the README says', async () => {
    const key = /API key \(shown once\): (cp_live_\w+)/.exec(out)![1];
    const org = /Demo organization (org_demo_\w+)/.exec(out)![1];
    const operatorApi = await portOpen(adminPort);
    const commands = readmeCommands(README);
    const run = commands.filter((c) => operatorApi || !c.operator);
    const skipped = commands.filter((c) => !operatorApi && c.operator);
    if (skipped.length) {
      console.log(
        `README: the server opened no operator API on ADMIN_PORT ${adminPort}, so ${skipped.length} command(s) that need it were skipped:\n` +
          skipped.map((c) => `  ${c.text.slice(0, 110)}`).join('\n'),
      );
    }

    // One shell runs them all in order (variables like ACTION carry over); `curl` reports each status on stderr.
    const script = [
      'set -u',
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
      ...run.flatMap((c, i) => [
        `echo "@@CMD ${i}" >&2`,
        c.text.replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`).replaceAll('127.0.0.1:3001', `127.0.0.1:${adminPort}`),
        `echo "@@EXIT $?" >&2`,
      ]),
    ].join('\n');
    const result = spawnSync('bash', ['-c', script], {
      cwd: work,
      env: { ...process.env, KEY: key, ORG: org, ADMIN_TOKEN, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' },
      encoding: 'utf8',
      timeout: 240_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(result.error).toBeUndefined();
    const report = result.stderr.split('@@CMD ').slice(1);
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
    expect(failures, failures.join('\n')).toEqual([]);
    expect(run.filter((c) => c.text.includes('curl')).length).toBeGreaterThanOrEqual(15);
  }, 300_000);
});
