import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const SPECTRAL = join(ROOT, 'node_modules/.bin/spectral');

interface Finding {
  code: string;
  severity: number; // 0 error, 1 warning, 2 info, 3 hint
  path: string[];
  message: string;
}

/** Lints the served OpenAPI document with the project's ruleset (.spectral.yaml: the OWASP API Security ruleset). */
describe('OWASP API Security ruleset (Spectral)', () => {
  let t: TestApp;
  let dir: string;
  let findings: Finding[];
  beforeAll(async () => {
    t = await createTestApp();
    dir = await mkdtemp(join(tmpdir(), 'climate-pulse-spectral-'));
    const file = join(dir, 'openapi.json');
    const served = await t.app.inject({ url: '/openapi.json' });
    expect(served.statusCode).toBe(200);
    await writeFile(file, served.body);
    // Spectral exits non-zero when it reports errors; its JSON report is on stdout either way.
    const out = await run(SPECTRAL, ['lint', file, '--ruleset', join(ROOT, '.spectral.yaml'), '--format', 'json', '--quiet'], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((err: { stdout?: string; stderr?: string }) => {
      if (!err.stdout) throw new Error(`spectral failed: ${err.stderr}`);
      return { stdout: err.stdout };
    });
    findings = JSON.parse(out.stdout) as Finding[];
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  const label = (f: Finding) => `${f.code} ${f.path.join('.')}`;

  it('reports zero errors', () => {
    const errors = findings.filter((f) => f.severity === 0).map(label);
    expect(errors).toEqual([]);
  });

  it('runs the OWASP rules for real (the ruleset is loaded, and an unbounded schema is caught)', async () => {
    const file = join(dir, 'unbounded.json');
    const doc = JSON.parse((await t.app.inject({ url: '/openapi.json' })).body);
    doc.components.schemas.Organization.properties.name = { type: 'string' };
    await writeFile(file, JSON.stringify(doc));
    const out = await run(SPECTRAL, ['lint', file, '--ruleset', join(ROOT, '.spectral.yaml'), '--format', 'json', '--quiet'], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    })
      .then(() => ({ stdout: '[]' }))
      .catch((err: { stdout: string }) => ({ stdout: err.stdout }));
    const found = (JSON.parse(out.stdout) as Finding[]).filter((f) => f.severity === 0).map(label);
    expect(found).toContain('owasp:api4:2023-string-limit components.schemas.Organization.properties.name');
  }, 60_000);
});
