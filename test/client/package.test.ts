import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoDataset } from '../../src/domain/demo.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { listen } from '../helpers/listen.js';
import { ROOT } from '../helpers/process.js';

const run = promisify(execFile);
const CLIENT = join(ROOT, 'packages/client');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const KEY = 'cp_test_client_pack_0123456789';

/** The code blocks of a Markdown file in a given language, in order. */
export const codeBlocks = (markdown: string, lang: string) => [...markdown.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]);

const CONSUMER = `import {
  ClimatePulseClient, ClimatePulseError, EtagCache, PULSES_PAGE_SIZE,
  type Action, type ActionChange, type Alert, type CommentPage, type DailyStats, type Organization,
  type Pulse, type PulsePage, type Stats, type Team, type ErrorCode,
} from '@climate-pulse/client';

const client = new ClimatePulseClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'cp_live_x', etagCache: { maxEntries: 10 } });

export async function use(): Promise<number> {
  const page: PulsePage = await client.pulses.page({ limit: PULSES_PAGE_SIZE });
  const first: Pulse | undefined = page.items[0];
  const org: Organization = await client.org.get();
  const stats: Stats = await client.stats.get();
  const daily: DailyStats = await client.stats.daily({});
  const comments: CommentPage = await client.comments.page({});
  const alerts: Alert[] = await client.alerts.list({ limit: 5 });
  const teams: Team[] = await client.teams.list();
  const actions: Action[] = await client.actions.list();
  const change: ActionChange = { status: 'done', description: null };
  await client.actions.update(actions[0].$id, change);
  // @ts-expect-error not a status of an action
  await client.actions.update(actions[0].$id, { status: 'archived' });
  const code: ErrorCode = 'invalid_transition';
  const cache: EtagCache | undefined = client.etagCache;
  return [first, org, stats, daily, comments, alerts, teams, code, cache, ClimatePulseError].length;
}
`;

const RESOLUTIONS = [
  { module: 'node16', moduleResolution: 'node16' },
  { module: 'nodenext', moduleResolution: 'nodenext' },
  { module: 'esnext', moduleResolution: 'bundler' },
];

/**
 * The client as someone outside this repository gets it: `npm pack`, then `npm install <tarball>`
 * into an empty project in the system's temporary directory (no node_modules of ours above it),
 * then the README's example against a running server, and a tiny TypeScript consumer under
 * each moduleResolution.
 */
describe('@climate-pulse/client from a packed tarball', () => {
  let project: string;
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), 'cp-client-consumer-'));
    const packed = await run('npm', ['pack', '--json', '--pack-destination', project], { cwd: CLIENT, maxBuffer: 16 * 1024 * 1024 });
    const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string }[];
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(project, filename)], {
      cwd: project,
      maxBuffer: 16 * 1024 * 1024,
    });
    t = await createTestApp({ dataset: demoDataset(new Date(), { orgId: 'org_demo_pack', key: KEY }) });
    base = await listen(t.app);
  }, 240_000);
  afterAll(async () => {
    await t?.close();
    rmSync(project, { recursive: true, force: true });
  });

  it('installs with its dependencies, from outside the repository', () => {
    const pkg = JSON.parse(readFileSync(join(project, 'node_modules/@climate-pulse/client/package.json'), 'utf8'));
    expect(pkg.private).toBeUndefined();
    expect(existsSync(join(project, 'node_modules/@climate-pulse/client/README.md'))).toBe(true);
    expect(existsSync(join(project, 'node_modules/@climate-pulse/client/dist/index.js'))).toBe(true);
    expect(existsSync(join(project, 'node_modules/@climate-pulse/client/dist/index.d.ts'))).toBe(true);
    expect(existsSync(join(project, 'node_modules/openapi-fetch/package.json'))).toBe(true);
  });

  it("runs the README's example against a server", async () => {
    const [example] = codeBlocks(readFileSync(join(CLIENT, 'README.md'), 'utf8'), 'js');
    writeFileSync(join(project, 'example.mjs'), example);
    const { stdout, stderr } = await run(process.execPath, ['example.mjs'], {
      cwd: project,
      env: { ...process.env, CP_BASE_URL: base, CP_API_KEY: KEY },
    });
    expect(stderr).toBe('');
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^Demo Company: \d+ members$/);
    expect(lines[1]).toMatch(/^\d+ pulses of level 1 or 2 in the last 7 days$/);
    expect(lines[2]).toMatch(/^average level \d\.\d+ over \d+ pulses$/);
    expect(lines[3]).toBe('action Retro on workload: done');
    expect(lines[4]).toMatch(/^400 invalid_request: .*limit/);
  }, 60_000);

  it.each(RESOLUTIONS)(
    'type-checks a consumer with module $module, moduleResolution $moduleResolution',
    async (r) => {
      const name = `tsconfig.${r.moduleResolution}.json`;
      writeFileSync(join(project, 'consumer.ts'), CONSUMER);
      writeFileSync(
        join(project, name),
        JSON.stringify({
          compilerOptions: { target: 'ES2022', ...r, strict: true, noEmit: true, lib: ['ES2022', 'DOM'], types: [] },
          files: ['consumer.ts'],
        }),
      );
      const result = await run(process.execPath, [TSC, '-p', name], { cwd: project }).then(
        () => '',
        (err: { stdout: string }) => err.stdout,
      );
      expect(result).toBe('');
    },
    60_000,
  );
});
