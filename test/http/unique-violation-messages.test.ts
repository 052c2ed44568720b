import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueViolation } from '../../src/db/errors.js';
import { loadDataset, type Dataset } from '../../src/domain/dataset.js';
import { createAdminTest, TOKEN, type AdminTest } from '../admin/helpers.js';
import { createCliDatabase, runCli } from '../helpers/cli.js';

/**
 * Issue 26, item 11: a duplicate found by a unique index reached clients as the driver's text
 * (`already in the database: Key (org_id, id)=(org_u, p_1) already exists.`). Every path now says
 * what exists, in the contract's words, with no SQL: the operator API's import, the CLI's
 * import and the dataset loader.
 */
const at = '2026-11-03T10:00:00.000Z';
const pulse = (id: string) => ({ id, level: 3, reason: null, comment: null, moderationStatus: 'CLEAN' as const, subteamId: null, createdAt: at });
const KEY = 'cp_test_unique_0123456789abcdef';
const org = { id: 'org_u', name: 'U', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' };
const dataset = (): Dataset => ({
  organizations: [
    {
      ...org,
      apiKeys: [{ key: KEY }],
      teams: [{ id: 'team_web', name: 'Web', createdAt: at }],
      // An id with ", " in it: the driver's detail lists values unquoted, so it must not be split there.
      pulses: [pulse('p_1'), pulse('p, 2')],
      alerts: [{ id: 'al_1', type: 'MOOD_DROP', message: 'Mood fell', weekISO: '2026-W45', subteamId: null, readAt: null, createdAt: at }],
      actions: [{ id: 'ac_1', title: 'Retro', description: null, startDate: at, endDate: null, status: 'active', subteamId: null, createdAt: at }],
    },
  ],
});
const ndjson = (...ids: string[]) => `${ids.map((id) => JSON.stringify(pulse(id))).join('\n')}\n`;
const SQL_WORDS = /Key \(|org_id|already in the database|duplicate key|constraint/;

describe("unique violations in the contract's words", () => {
  let t: AdminTest;
  beforeAll(async () => {
    t = await createAdminTest({ dataset: dataset() });
  });
  afterAll(() => t.close());

  it('operator API import: an existing pulse id aborts the file with "a pulse with id ... already exists", no driver text', async () => {
    const lastLine = async (body: string) => {
      const res = await t.admin.inject({
        method: 'POST',
        url: '/admin/v1/organizations/org_u/pulses/import',
        payload: body,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
      });
      expect(res.statusCode).toBe(200);
      return JSON.parse(res.body.trim().split('\n').at(-1)!);
    };
    expect(await lastLine(ndjson('new_1', 'p_1'))).toEqual({
      error: { code: 'invalid_request', message: 'import aborted, nothing was written: a pulse with id "p_1" already exists in organization "org_u"' },
    });
    expect(await lastLine(ndjson('p, 2'))).toEqual({
      error: { code: 'invalid_request', message: 'import aborted, nothing was written: a pulse with id "p, 2" already exists in organization "org_u"' },
    });
  });

  it('dataset load: names the path of the value and what already exists, for pulses, teams, alerts, actions and keys', async () => {
    const refused = (organization: Dataset['organizations'] extends (infer O)[] | undefined ? Partial<O> : never) =>
      loadDataset(t.db, { organizations: [{ ...org, ...organization }] }).then(
        () => 'loaded',
        (err: Error) => err.message,
      );
    expect(await refused({ pulses: [pulse('fresh'), pulse('p_1')] })).toBe(
      'organizations[0].pulses[1].id: a pulse with id "p_1" already exists in organization "org_u"',
    );
    expect(await refused({ pulses: [pulse('p, 2')] })).toBe('organizations[0].pulses[0].id: a pulse with id "p, 2" already exists in organization "org_u"');
    expect(await refused({ teams: [{ id: 'team_other', name: ' WEB ', createdAt: at }] })).toBe(
      'organizations[0].teams[0].name: a team named "web" already exists in organization "org_u"',
    );
    expect(await refused({ alerts: dataset().organizations![0].alerts })).toBe(
      'organizations[0].alerts[0].id: an alert with id "al_1" already exists in organization "org_u"',
    );
    expect(await refused({ actions: dataset().organizations![0].actions })).toBe(
      'organizations[0].actions[0].id: an action with id "ac_1" already exists in organization "org_u"',
    );
    // The key is never repeated, nor its hash.
    expect(await refused({ apiKeys: [{ key: 'cp_test_unique_other_0123456789' }, { key: KEY }] })).toBe(
      'organizations[0].apiKeys[1].key: this API key already exists',
    );
  });

  it('the message never carries driver text, and reads the index of a Citus shard (its suffix dropped)', () => {
    const citus = { code: '23505', constraint: 'actions_pkey_102044', table: 'actions_102044', detail: 'Key (org_id, id)=(org_c1, ac_c) already exists.' };
    expect(uniqueViolation(citus)?.message).toBe('an action with id "ac_c" already exists in organization "org_c1"');
    // Ambiguous without the organization ("a, b, c": which comma?): the id is left out rather than guessed.
    const ambiguous = { code: '23505', constraint: 'pulses_pkey', table: 'pulses', detail: 'Key (org_id, id)=(a, b, c) already exists.' };
    expect(uniqueViolation(ambiguous)?.message).toBe('a pulse with this id already exists');
    expect(uniqueViolation(ambiguous, 'a, b')?.message).toBe('a pulse with id "c" already exists in organization "a, b"');
    const unknown = { code: '23505', constraint: 'something_new', detail: 'Key (x)=(secret) already exists.' };
    expect(uniqueViolation(unknown)?.message).toBe('a record with the same identity already exists');
    expect(uniqueViolation({ code: '23503' })).toBeNull();
    for (const e of [citus, ambiguous, unknown]) expect(uniqueViolation(e)!.message).not.toMatch(SQL_WORDS);
  });
});

describe('CLI import: an existing pulse id', { timeout: 120_000 }, () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  let dir: string;
  beforeAll(async () => {
    cdb = await createCliDatabase();
    dir = mkdtempSync(join(tmpdir(), 'cp-unique-'));
    writeFileSync(join(dir, 'ds.json'), JSON.stringify(dataset()));
    expect((await runCli(['load', join(dir, 'ds.json')], cdb.env)).code).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await cdb?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops with "a pulse with id ... already exists in organization ...", never the driver\'s detail', async () => {
    writeFileSync(join(dir, 'rows.ndjson'), ndjson('new_1', 'p_1'));
    const r = await runCli(['import-pulses', '--org', 'org_u', join(dir, 'rows.ndjson')], cdb.env);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n').pop()).toBe(
      'climate-pulse: import aborted, nothing was written: a pulse with id "p_1" already exists in organization "org_u"',
    );
    expect(r.stderr).not.toMatch(SQL_WORDS);
  });
});
