/**
 * Provisioning by SCIM under load (issue 56): 10,000 users and 200 groups pushed to /scim/v2 as an
 * identity provider does it, against the people file of the same 10,000 people in the same run,
 * on PostgreSQL, in its own database `climate_pulse_bench_scim`, made again at every run.
 *
 * 1. SCIM: the service listens on a real port; for every user, Entra ID's sequence: a
 *    `userName eq` look-up, then a POST (two requests per user), at concurrency C; then every
 *    group: a POST, then one PATCH adding its 50 members (Entra ID's membership add).
 * 2. The file: the same 10,000 people with the same teams as one CSV, through replaceRoster (what
 *    the console's upload, the operator API and the CLI call), into a second organization.
 *
 * The figures: requests and people per second, and the file against SCIM. Not a test: it measures.
 */
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { migrate } from '../src/db/migrate.js';
import { PgExecutor } from '../src/db/pg.js';
import { operatorActor } from '../src/domain/audit.js';
import { replaceRoster } from '../src/domain/checkins/roster.js';
import { createOrganization } from '../src/domain/orgs.js';
import { createScimToken } from '../src/domain/scim.js';

export const SCIM_BENCH_DB = 'climate_pulse_bench_scim';

export interface ScimBenchResult {
  users: number;
  groups: number;
  concurrency: number;
  scim: { userSeconds: number; groupSeconds: number; requests: number; requestsPerSec: number; peoplePerSec: number; errors: number };
  file: { seconds: number; peoplePerSec: number };
  /** How many times faster the file is than SCIM for the same people. */
  fileOverScim: number;
  rosterAfterScim: number;
  rosterAfterFile: number;
}

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

export async function benchScim(
  adminUrl: string,
  opts: { users: number; groups: number; concurrency: number; log: (...a: unknown[]) => void },
): Promise<ScimBenchResult> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${SCIM_BENCH_DB}`);
  await admin.query(`CREATE DATABASE ${SCIM_BENCH_DB}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${SCIM_BENCH_DB}`;
  const db = new PgExecutor({ connectionString: url.toString(), max: 10 });
  await migrate(db);
  const now = new Date();
  await createOrganization(db, { id: 'org_scim', name: 'SCIM', plan: 'business' }, operatorActor(), now);
  await createOrganization(db, { id: 'org_file', name: 'File', plan: 'business' }, operatorActor(), now);
  const { token } = await createScimToken(db, 'org_scim', { name: 'bench' }, operatorActor(), now);
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', SCIM_REQUESTS_PER_MINUTE: '1000000' }), { db });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/scim/v2`;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' };
  let requests = 0;
  let errors = 0;
  const call = async (method: string, path: string, body?: unknown) => {
    requests++;
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 400) errors++;
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };

  const people = Array.from({ length: opts.users }, (_, i) => ({
    email: `person${String(i).padStart(5, '0')}@scim.bench`,
    team: `Team ${String(i % opts.groups).padStart(3, '0')}`,
  }));
  const ids = new Map<string, string>();
  opts.log(`scim: ${opts.users} users (look-up, then create) at c=${opts.concurrency}`);
  const t0 = performance.now();
  await pool(people, opts.concurrency, async (p) => {
    await call('GET', `/Users?filter=${encodeURIComponent(`userName eq "${p.email}"`)}`);
    const created = await call('POST', '/Users', {
      schemas: [USER],
      userName: p.email,
      active: true,
      emails: [{ value: p.email, type: 'work', primary: true }],
      name: { givenName: 'A', familyName: 'B' },
    });
    ids.set(p.email, created.id as string);
  });
  const t1 = performance.now();
  opts.log(`scim: ${opts.groups} groups (create, then one PATCH adding their members)`);
  const teams = [...new Set(people.map((p) => p.team))];
  await pool(teams, opts.concurrency, async (team) => {
    const g = await call('POST', '/Groups', { schemas: [GROUP], displayName: team });
    const members = people.filter((p) => p.team === team).map((p) => ({ value: ids.get(p.email) }));
    await call('PATCH', `/Groups/${g.id as string}?excludedAttributes=members`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Add', path: 'members', value: members }],
    });
  });
  const t2 = performance.now();
  await app.close();

  opts.log(`file: the same ${opts.users} people as one CSV`);
  const csv = ['email,team', ...people.map((p) => `${p.email},${p.team}`)].join('\n');
  const f0 = performance.now();
  await replaceRoster(db, 'org_file', csv, operatorActor(), new Date());
  const f1 = performance.now();
  const count = async (org: string) =>
    (
      await db.query<{ n: number }>(
        { name: 'bench.scim.count', text: 'SELECT count(*)::int AS n FROM respondents WHERE org_id = $1 AND team_id IS NOT NULL' },
        [org],
      )
    )[0].n;
  const rosterAfterScim = await count('org_scim');
  const rosterAfterFile = await count('org_file');
  await db.close();

  const scimSeconds = (t2 - t0) / 1000;
  const fileSeconds = (f1 - f0) / 1000;
  return {
    users: opts.users,
    groups: opts.groups,
    concurrency: opts.concurrency,
    scim: {
      userSeconds: Number(((t1 - t0) / 1000).toFixed(2)),
      groupSeconds: Number(((t2 - t1) / 1000).toFixed(2)),
      requests,
      requestsPerSec: Math.round(requests / scimSeconds),
      peoplePerSec: Math.round(opts.users / scimSeconds),
      errors,
    },
    file: { seconds: Number(fileSeconds.toFixed(2)), peoplePerSec: Math.round(opts.users / fileSeconds) },
    fileOverScim: Number((scimSeconds / fileSeconds).toFixed(1)),
    rosterAfterScim,
    rosterAfterFile,
  };
}

export function scimMarkdown(r: ScimBenchResult): string {
  return `## SCIM provisioning (issue 56)

${r.users} users and ${r.groups} groups at concurrency ${r.concurrency}, on PostgreSQL; the same people as one file in the same run.

| | seconds | people/s | requests/s |
|---|---|---|---|
| SCIM: users (look-up + create each) | ${r.scim.userSeconds} | | |
| SCIM: groups (create + one membership PATCH each) | ${r.scim.groupSeconds} | | |
| SCIM: all | ${(r.scim.userSeconds + r.scim.groupSeconds).toFixed(2)} | ${r.scim.peoplePerSec} | ${r.scim.requestsPerSec} |
| people file (replaceRoster) | ${r.file.seconds} | ${r.file.peoplePerSec} | |

The file is ${r.fileOverScim}x faster than SCIM for the same people. ${r.scim.errors} SCIM errors; people in a team after SCIM: ${r.rosterAfterScim}, after the file: ${r.rosterAfterFile}.
`;
}
