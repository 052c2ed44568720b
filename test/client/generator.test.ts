import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ROOT } from '../helpers/process.js';

const run = promisify(execFile);
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const OPENAPI_TS = join(ROOT, 'node_modules/openapi-typescript/bin/cli.js');
const ORVAL = join(ROOT, 'node_modules/orval/dist/bin/orval.js');
const HEY_API = join(ROOT, 'node_modules/@hey-api/openapi-ts/bin/run.js');

/**
 * Third-party generators on the served document, as an integrator would use them, each with a
 * consumer file of its own compiled together in one `tsc` run:
 * - openapi-typescript (types) + openapi-fetch (the typed fetch it is made for);
 * - orval with `headers: true` (its `fetch` client: plain fetch, no HTTP library to install);
 * - hey-api (`@hey-api/openapi-ts`, its default plugins: types, SDK and the bundled fetch client).
 * A POST without Idempotency-Key must not compile; one with it must. The directory sits under the
 * repository so that `openapi-fetch` resolves from its node_modules. The generators are pinned
 * devDependencies whose engines accept Node 20.19 (docs/decisions.md, "Issue 29: generators").
 */
const CONSUMER = `import createClient from 'openapi-fetch';
import type { components, paths, webhooks } from './schema.js';

const api = createClient<paths>({ baseUrl: 'https://api.example.com/v1' });

export async function calls() {
  // @ts-expect-error Idempotency-Key is required by the document, as by the server
  await api.POST('/actions', { body: { title: 'Retro on workload' } });
  // @ts-expect-error the same for teams
  await api.POST('/teams', { body: { name: 'Platform' } });
  await api.POST('/actions', { params: { header: { 'idempotency-key': 'retro-2026-11' } }, body: { title: 'Retro on workload' } });
  await api.POST('/teams', { params: { header: { 'idempotency-key': 'team-platform-1' } }, body: { name: 'Platform' } });
  await api.PATCH('/actions/{id}', { params: { path: { id: 'act_1' } }, body: { status: 'done', description: null } });
  // @ts-expect-error done <-> cancelled aside, a status outside the three is no status
  await api.PATCH('/actions/{id}', { params: { path: { id: 'act_1' } }, body: { status: 'archived' } });

  // Named models, not ListPulsesResponse['items'][number].
  const { data } = await api.GET('/pulses', { params: { query: { limit: 200 } } });
  const pulses: components['schemas']['Pulse'][] = data?.items ?? [];
  const page: components['schemas']['PulsePage'] | undefined = data;
  const code: components['schemas']['ApiError']['error']['code'] = 'invalid_transition';
  // @ts-expect-error the code list is closed
  const unknown: components['schemas']['ApiError']['error']['code'] = 'teapot';
  const action: components['schemas']['Action'] = {
    $id: 'act_1', title: 'Retro', description: null, startDate: '2026-11-21T09:00:00.000Z', endDate: null,
    status: 'done', subteamId: null, subteamName: null, createdAt: '2026-11-21T09:00:00.000Z',
  };
  const rest: Array<components['schemas'][
    'Stats' | 'DailyStats' | 'CommentPage' | 'Alert' | 'AlertList' | 'Organization' | 'Team' | 'TeamList' | 'ActionList'
  ]> = [];
  return { pulses, page, code, unknown, action, rest };
}

// A receiver's handler: each webhook event is a type of its own, from the document's \`webhooks\`.
type ActionUpdated = webhooks['action.updated']['post']['requestBody']['content']['application/json'];
export function onActionUpdated(event: ActionUpdated): boolean {
  const finished: boolean = event.changes.status?.to === 'done';
  // @ts-expect-error no status outside the three
  const archived = event.changes.status?.to === 'archived';
  const alert: components['schemas']['AlertCreatedEvent']['data'] = { id: 'al_1', type: 'MOOD_DROP', message: 'm', weekISO: null, subteamName: null, readAt: null, createdAt: '2026-11-23T06:00:00.000Z' };
  return finished || archived || alert.readAt !== null;
}
`;

/** orval: one function per operation; with `headers: true` the operation's headers are a parameter of their own. */
const ORVAL_CONSUMER = `import { createAction, createTeam, listPulses, updateAction } from './orval/api.js';
import type { ApiError, ApiErrorErrorCode, CreateActionHeaders, Pulse, PulsePage } from './orval/api.js';

export async function calls() {
  // @ts-expect-error Idempotency-Key is required by the document, as by the server
  await createAction({ title: 'Retro on workload' });
  // @ts-expect-error the same for teams
  await createTeam({ name: 'Platform' });
  await createAction({ title: 'Retro on workload' }, { 'idempotency-key': 'retro-2026-11' });
  await createTeam({ name: 'Platform' }, { 'idempotency-key': 'team-platform-1' });
  await updateAction('act_1', { status: 'done', description: null });
  const headers: CreateActionHeaders = { 'idempotency-key': 'retro-2026-11' };
  const res = await listPulses({ limit: 200 });
  const page: PulsePage | undefined = res.status === 200 ? res.data : undefined;
  const pulses: Pulse[] = page?.items ?? [];
  const error: ApiError | undefined = res.status === 400 ? res.data : undefined;
  const code: ApiErrorErrorCode = 'invalid_transition';
  return { headers, pulses, error, code };
}
`;

/** hey-api: SDK functions taking one options object; headers are a typed member of it. */
const HEY_API_CONSUMER = `import { createAction, createTeam, listPulses, updateAction } from './hey/sdk.gen.js';
import type { ApiError, Pulse, PulsePage } from './hey/types.gen.js';

export async function calls() {
  // @ts-expect-error Idempotency-Key is required by the document, as by the server
  await createAction({ body: { title: 'Retro on workload' } });
  // @ts-expect-error the same for teams
  await createTeam({ body: { name: 'Platform' } });
  await createAction({ body: { title: 'Retro on workload' }, headers: { 'idempotency-key': 'retro-2026-11' } });
  await createTeam({ body: { name: 'Platform' }, headers: { 'idempotency-key': 'team-platform-1' } });
  await updateAction({ path: { id: 'act_1' }, body: { status: 'done', description: null } });
  const { data, error } = await listPulses({ query: { limit: 200 } });
  const page: PulsePage | undefined = data;
  const pulses: Pulse[] = page?.items ?? [];
  const failed: ApiError | undefined = error;
  const code: ApiError['error']['code'] = 'invalid_transition';
  // @ts-expect-error the code list is closed
  const unknown: ApiError['error']['code'] = 'teapot';
  return { pulses, failed, code, unknown };
}
`;

// orval's default client (axios) is generated too, not compiled (axios is no dependency here): its
// signatures are read instead.
const ORVAL_CONFIG = `module.exports = {
  climatePulse: {
    input: { target: './openapi.json' },
    output: { target: './orval/api.ts', mode: 'single', client: 'fetch', headers: true },
  },
  climatePulseAxios: {
    input: { target: './openapi.json' },
    output: { target: './orval-axios/api.ts', mode: 'single', headers: true },
  },
};
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    types: [], // DOM.Iterable: hey-api's client iterates URLSearchParams
  },
  files: ['consumer.ts', 'orval-consumer.ts', 'hey-consumer.ts'],
};

describe('clients generated by openapi-typescript, orval and hey-api from the served document', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    t = await createTestApp();
    mkdirSync(join(ROOT, '.test-tmp'), { recursive: true });
    dir = mkdtempSync(join(ROOT, '.test-tmp', 'generator-'));
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const compile = async (doc: unknown) => {
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
    // hey-api reads tsconfig.json to choose its import extensions (.js under NodeNext): written first.
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    writeFileSync(join(dir, 'orval.config.cjs'), ORVAL_CONFIG);
    for (const out of ['orval', 'orval-axios']) rmSync(join(dir, out), { recursive: true, force: true });
    rmSync(join(dir, 'hey'), { recursive: true, force: true });
    await Promise.all([
      run(process.execPath, [OPENAPI_TS, 'openapi.json', '-o', 'schema.ts'], { cwd: dir }),
      run(process.execPath, [ORVAL, '--config', 'orval.config.cjs'], { cwd: dir }),
      run(process.execPath, [HEY_API, '-i', 'openapi.json', '-o', 'hey'], { cwd: dir }),
    ]);
    writeFileSync(join(dir, 'consumer.ts'), CONSUMER);
    writeFileSync(join(dir, 'orval-consumer.ts'), ORVAL_CONSUMER);
    writeFileSync(join(dir, 'hey-consumer.ts'), HEY_API_CONSUMER);
    return run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: dir }).then(
      () => ({ ok: true, out: '' }),
      (err: { stdout: string }) => ({ ok: false, out: err.stdout }),
    );
  };

  it('refuses a POST without Idempotency-Key at compile time, and names every model', async () => {
    const served = (await t.app.inject({ url: '/openapi.json' })).json();
    const result = await compile(served);
    expect(result.out).toBe('');
    expect(result.ok).toBe(true);
    // The error model is ApiError in every generator's output: none names a type `Error`, shadowing the built-in.
    const hey = readFileSync(join(dir, 'hey/types.gen.ts'), 'utf8');
    expect(hey).toMatch(/^export type ApiError = \{/m);
    expect(hey).not.toMatch(/^export (type|interface) Error\b/m);
    const orval = readFileSync(join(dir, 'orval/api.ts'), 'utf8');
    expect(orval).toMatch(/^export (type|interface) ApiError\b/m);
    expect(orval).not.toMatch(/^export (type|interface) Error\b/m);
    expect(readFileSync(join(dir, 'schema.ts'), 'utf8')).not.toMatch(/^\s+Error: \{/m);
    // orval put the header in a parameter of its own (headers: true), required, with its default client too.
    expect(orval).toMatch(/export const createAction = async \(newAction: NewAction,\s+headers: CreateActionHeaders,/);
    const axios = readFileSync(join(dir, 'orval-axios/api.ts'), 'utf8');
    expect(axios).toMatch(/^import (\* as )?axios from 'axios';/m);
    expect(axios).toMatch(/export const createAction = [^\n]*\(\s*newAction: NewAction,\s+headers: CreateActionHeaders, options\?: AxiosRequestConfig/);
    expect(axios).toMatch(/export const createTeam = [^\n]*\(\s*newTeam: NewTeam,\s+headers: CreateTeamHeaders, options\?: AxiosRequestConfig/);
  }, 120_000);

  it('would compile that call if the document said the header is optional (the test can fail)', async () => {
    const served = (await t.app.inject({ url: '/openapi.json' })).json();
    for (const path of ['/actions', '/teams']) {
      for (const p of served.paths[path].post.parameters) if (p.name === 'idempotency-key') p.required = false;
    }
    const result = await compile(served);
    expect(result.ok).toBe(false);
    // Both @ts-expect-error lines on the POSTs are now unused in each consumer: the calls compile.
    const unused = (file: string) =>
      result.out.split('\n').filter((l) => l.startsWith(`${file}(`) && l.includes("error TS2578: Unused '@ts-expect-error' directive"));
    expect(unused('consumer.ts'), result.out).toHaveLength(2);
    expect(unused('orval-consumer.ts'), result.out).toHaveLength(2);
    expect(unused('hey-consumer.ts'), result.out).toHaveLength(2);
    expect(result.out.trim().split('\n'), result.out).toHaveLength(6);
    // orval's default client makes the parameter optional then.
    const axios = readFileSync(join(dir, 'orval-axios/api.ts'), 'utf8');
    expect(axios).toMatch(/\(\s*newAction: NewAction,\s+headers\?: CreateActionHeaders, options\?: AxiosRequestConfig/);
  }, 120_000);
});
