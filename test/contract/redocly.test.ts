import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const REDOCLY = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
}

/** `redocly lint` with the recommended ruleset; its JSON report, whatever the exit status. */
async function lint(file: string): Promise<Problem[]> {
  const out = await run(process.execPath, [REDOCLY, 'lint', file, '--extends=recommended', '--format=json'], {
    cwd: ROOT,
    // No telemetry and no update check: the lint runs without the network.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    maxBuffer: 64 * 1024 * 1024,
  }).catch((err: { stdout?: string; stderr?: string }) => {
    if (!err.stdout) throw new Error(`redocly failed: ${err.stderr}`);
    return { stdout: err.stdout };
  });
  return (JSON.parse(out.stdout) as { problems: Problem[] }).problems;
}

const label = (p: Problem) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`;

/**
 * Issue 29: "Redocly: 0 errors, 0 warnings other than `info-license`." Both committed documents
 * (the public API's and the operator API's; a drift test keeps them equal to the served ones) are
 * linted with Redocly's recommended ruleset. The license stays out: the project is UNLICENSED.
 */
describe('Redocly lint (recommended ruleset)', () => {
  let dir: string;
  const problems: Record<string, Problem[]> = {};
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'climate-pulse-redocly-'));
    // The "can fail" check: the public document with one tag description removed.
    const doc = JSON.parse(await readFile(join(ROOT, 'docs/openapi.json'), 'utf8'));
    delete doc.tags.find((t: { name: string }) => t.name === 'teams').description;
    await writeFile(join(dir, 'broken.json'), JSON.stringify(doc));
    const files = { public: join(ROOT, 'docs/openapi.json'), admin: join(ROOT, 'docs/openapi-admin.json'), broken: join(dir, 'broken.json') };
    await Promise.all(Object.entries(files).map(async ([k, f]) => (problems[k] = await lint(f))));
  }, 60_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const doc of ['public', 'admin']) {
    it(`docs/${doc === 'public' ? 'openapi' : 'openapi-admin'}.json: 0 errors, 0 warnings other than info-license`, () => {
      expect(problems[doc].filter((p) => p.ruleId !== 'info-license').map(label)).toEqual([]);
      expect(problems[doc].map((p) => `${p.severity} ${p.ruleId}`)).toEqual(['warn info-license']);
    });
  }

  it('reports what it should (a tag without a description is a warning)', () => {
    expect(problems.broken.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}`).sort()).toEqual([
      'warn info-license #/info',
      'warn tag-description #/tags/5/description',
    ]);
  });
});
