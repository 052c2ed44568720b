import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { replaceRoster } from '../../src/domain/checkins/roster.js';
import { GROUP, PATCH_OP, scimTest, USER, ENTERPRISE, NOW, type ScimTest } from './helpers.js';
import { validated } from './validate.js';

/**
 * The request sequences Microsoft Entra ID and Okta document for SCIM 2.0 provisioning, replayed
 * as they send them (their sample bodies, attributes we do not keep included): the `userName eq`
 * look-up before a create, PATCH with `Replace` capitalised and with a value object without a
 * path, `active: false` instead of a DELETE, a group membership PATCH of 1,000 members, paging by
 * `startIndex`. Every answer is checked against the RFC's schemas (test/scim/helpers.ts).
 */
const q = encodeURIComponent;
const roster = async (t: ScimTest) =>
  t.db.query<{ id: string; email: string; team_id: string | null; source: string }>(
    sql('t.roster', `SELECT id, email, team_id, source FROM respondents WHERE org_id = $1 ORDER BY lower(email)`),
    [t.orgId],
  );

describe('Microsoft Entra ID', () => {
  let t: ScimTest;
  beforeAll(async () => {
    t = await scimTest();
  }, 60_000);
  afterAll(() => t?.close());

  it('looks a user up by userName, creates it, finds it, updates it with Replace, disables it, deletes it', async () => {
    const userName = 'Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1';
    const before = await t.scim('GET', `/Users?filter=${q(`userName eq "${userName}"`)}`);
    expect(before.statusCode).toBe(200);
    expect(before.json).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults: 0,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: [],
    });

    const created = await t.scim('POST', '/Users', {
      schemas: [USER, ENTERPRISE],
      externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
      userName,
      active: true,
      emails: [{ primary: true, type: 'work', value: 'Test_User_fd0ea13b@testuser.com' }],
      meta: { resourceType: 'User' },
      name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
      roles: [],
    });
    expect(created.statusCode).toBe(201);
    const id = created.json.id as string;
    expect(created.headers.location).toBe(`http://127.0.0.1:3000/scim/v2/Users/${id}`);
    expect(created.headers['content-type']).toBe('application/scim+json; charset=utf-8');
    expect(created.headers.etag).toBe((created.json.meta as { version: string }).version);
    expect(created.json).toMatchObject({ userName, externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef', active: true });
    expect(created.json.name).toBeUndefined(); // not kept
    expect(await roster(t)).toEqual([{ id, email: 'Test_User_fd0ea13b@testuser.com', team_id: null, source: 'scim' }]);

    const again = await t.scim('POST', '/Users', { schemas: [USER], userName, emails: [{ value: 'other@testuser.com', primary: true }] });
    expect(again.statusCode).toBe(409);
    expect(again.json).toMatchObject({ status: '409', scimType: 'uniqueness' });

    expect((await t.scim('GET', `/Users/${id}`)).json.id).toBe(id);
    const found = await t.scim('GET', `/Users?filter=${q(`userName eq "${userName.toUpperCase()}"`)}`);
    expect(found.json.totalResults).toBe(1);

    const replaced = await t.scim('PATCH', `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@microsoft.com' },
        { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
      ],
    });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json.emails).toEqual([{ value: 'updatedEmail@microsoft.com', type: 'work', primary: true }]);
    expect((await roster(t))[0].email).toBe('updatedEmail@microsoft.com');

    const renamed = await t.scim('PATCH', `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'userName', value: '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com' }],
    });
    expect(renamed.json.userName).toBe('5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com');

    // Entra disables instead of deleting, with the boolean as a capitalised string.
    const disabled = await t.scim('PATCH', `/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
    expect(disabled.statusCode).toBe(200);
    expect(disabled.json.active).toBe(false);
    expect(await roster(t)).toEqual([]);
    const stillRead = await t.scim('GET', `/Users?filter=${q(`externalId eq "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef"`)}`);
    expect((stillRead.json.Resources as { id: string; active: boolean }[]).map((r) => [r.id, r.active])).toEqual([[id, false]]);

    const enabled = await t.scim('PATCH', `/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'active', value: true }] });
    expect(enabled.json.active).toBe(true);
    expect((await roster(t)).map((r) => r.id)).toEqual([id]);

    expect((await t.scim('DELETE', `/Users/${id}`)).statusCode).toBe(204);
    expect((await t.scim('GET', `/Users/${id}`)).statusCode).toBe(404);
    expect(await roster(t)).toEqual([]);
  });

  it('creates a group, finds it by displayName without members, renames it, adds and removes members, deletes it', async () => {
    const ann = await t.scim('POST', '/Users', { schemas: [USER], userName: 'ann@contoso.test', active: true });
    const created = await t.scim('POST', '/Groups', {
      schemas: [GROUP],
      externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
      displayName: 'displayName',
      meta: { resourceType: 'Group' },
    });
    expect(created.statusCode).toBe(201);
    const gid = created.json.id as string;
    expect(created.json.members).toEqual([]);
    const byName = await t.scim('GET', `/Groups?excludedAttributes=members&filter=${q('displayName eq "displayName"')}`);
    expect(byName.json.totalResults).toBe(1);
    expect((byName.json.Resources as Record<string, unknown>[])[0].members).toBeUndefined();
    expect((await t.scim('GET', `/Groups/${gid}?excludedAttributes=members`)).json.members).toBeUndefined();

    const renamed = await t.scim('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'displayName', value: '1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName' }],
    });
    expect(renamed.json.displayName).toBe('1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName');

    const added = await t.scim('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: ann.json.id }] }],
    });
    expect((added.json.members as { value: string }[]).map((m) => m.value)).toEqual([ann.json.id]);
    expect((await roster(t)).find((r) => r.id === ann.json.id)?.team_id).toBe(gid);
    const member = await t.scim('GET', `/Groups?excludedAttributes=members&filter=${q(`id eq "${gid}" and members.value eq "${ann.json.id as string}"`)}`);
    expect(member.json.totalResults).toBe(1);

    const removed = await t.scim('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: ann.json.id }] }],
    });
    expect(removed.json.members).toEqual([]);
    expect((await roster(t)).find((r) => r.id === ann.json.id)?.team_id).toBeNull();

    expect((await t.scim('DELETE', `/Groups/${gid}`)).statusCode).toBe(204);
    expect((await t.scim('GET', `/Groups/${gid}`)).statusCode).toBe(404);
  });

  it('takes a membership PATCH of 1,000 members in one request and one transaction', async () => {
    const file = ['email,team', ...Array.from({ length: 1000 }, (_, i) => `p${String(i).padStart(4, '0')}@big.test,`)].join('\n');
    await replaceRoster(t.db, t.orgId, file, operatorActor(), NOW);
    const ids: string[] = [];
    for (let start = 1; ; start += 100) {
      const page = await t.scim('GET', `/Users?filter=${q('userName sw "p"')}&startIndex=${start}&count=100&attributes=userName`);
      ids.push(...(page.json.Resources as { id: string }[]).map((r) => r.id));
      if (start + 100 > (page.json.totalResults as number)) break;
    }
    expect(new Set(ids).size).toBe(1000);
    const group = await t.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Everyone big' });
    const gid = group.json.id as string;
    const added = await t.scim('PATCH', `/Groups/${gid}?excludedAttributes=members`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Add', path: 'members', value: ids.map((value) => ({ value })) }],
    });
    expect(added.statusCode).toBe(200);
    const [{ n }] = await t.db.query<{ n: number }>(
      sql('t.n', `SELECT count(*)::int AS n FROM respondents WHERE org_id = $1 AND team_id = $2 AND source = 'scim'`),
      [t.orgId, gid],
    );
    expect(n).toBe(1000);
    // One unknown member refuses the whole PATCH: nobody moved.
    const bad = await t.scim('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'Remove', path: 'members', value: ids.slice(0, 500).map((value) => ({ value })) },
        { op: 'Add', path: 'members', value: [{ value: 'rsp_nobody' }] },
      ],
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json).toMatchObject({ scimType: 'invalidValue' });
    const [{ m }] = await t.db.query<{ m: number }>(sql('t.m', `SELECT count(*)::int AS m FROM respondents WHERE org_id = $1 AND team_id = $2`), [
      t.orgId,
      gid,
    ]);
    expect(m).toBe(1000);
  }, 60_000);
});

describe('Okta', () => {
  let t: ScimTest;
  beforeAll(async () => {
    t = await scimTest();
  }, 60_000);
  afterAll(() => t?.close());

  it('looks up, creates, replaces with PUT, deactivates with a value object without a path', async () => {
    const lookup = await t.scim('GET', `/Users?filter=${q('userName eq "test.user@okta.local"')}&startIndex=1&count=100`);
    expect(lookup.json.totalResults).toBe(0);
    const created = await t.scim('POST', '/Users', {
      schemas: [USER],
      userName: 'test.user@okta.local',
      name: { givenName: 'Test', familyName: 'User' },
      emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
      displayName: 'Test User',
      locale: 'en-US',
      externalId: '00ujl29u0le5T6Aj10h7',
      groups: [],
      password: '1mz050nq',
      active: true,
    });
    expect(created.statusCode).toBe(201);
    const id = created.json.id as string;
    expect(JSON.stringify(created.json)).not.toContain('1mz050nq');
    const put = await t.scim('PUT', `/Users/${id}`, {
      schemas: [USER],
      id,
      userName: 'test.user@okta.local',
      name: { givenName: 'Another', familyName: 'User' },
      emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
      active: true,
      externalId: '00ujl29u0le5T6Aj10h7',
    });
    expect(put.statusCode).toBe(200);
    expect(put.json.userName).toBe('test.user@okta.local');
    const off = await t.scim('PATCH', `/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { active: false } }] });
    expect(off.json.active).toBe(false);
    expect(await roster(t)).toEqual([]);
  });

  it('pushes a group, renames it by a value object, adds a member, removes it by a filter, pages by startIndex', async () => {
    const users: string[] = [];
    for (const name of ['a', 'b', 'c', 'd', 'e'])
      users.push((await t.scim('POST', '/Users', { schemas: [USER], userName: `${name}@okta.local` })).json.id as string);
    const g = await t.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Test SCIMv2', members: [] });
    const gid = g.json.id as string;
    const renamed = await t.scim('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { id: gid, displayName: 'Test SCIMv1' } }],
    });
    expect(renamed.json.displayName).toBe('Test SCIMv1');
    const added = await t.scim('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'add', path: 'members', value: users.slice(0, 2).map((value) => ({ value, display: 'x' })) }],
    });
    expect((added.json.members as { value: string }[]).map((m) => m.value).sort()).toEqual(users.slice(0, 2).sort());
    const removed = await t.scim('PATCH', `/Groups/${gid}`, { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: `members[value eq "${users[0]}"]` }] });
    expect((removed.json.members as { value: string }[]).map((m) => m.value)).toEqual([users[1]]);

    const all = await t.scim('GET', '/Users?startIndex=1&count=100');
    const total = all.json.totalResults as number;
    expect(total).toBe(6);
    const seen: string[] = [];
    for (let start = 1; start <= total; start += 2) {
      const page = await t.scim('GET', `/Users?startIndex=${start}&count=2`);
      expect(page.json).toMatchObject({ totalResults: total, startIndex: start, itemsPerPage: Math.min(2, total - start + 1) });
      seen.push(...(page.json.Resources as { id: string }[]).map((r) => r.id));
    }
    expect(seen).toEqual((all.json.Resources as { id: string }[]).map((r) => r.id));
    expect((await t.scim('GET', '/Groups?startIndex=1&count=100')).json.totalResults).toBe(1);
    expect((await t.scim('DELETE', `/Groups/${gid}`)).statusCode).toBe(204);
    expect(validated.count).toBeGreaterThan(10);
  });
});
