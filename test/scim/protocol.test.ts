import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { revokeScimToken, rollScimToken, setScimTeamFrom } from '../../src/domain/scim.js';
import { ENTERPRISE, GROUP, newUser, NOW, PATCH_OP, scimTest, USER, type ScimTest } from './helpers.js';

/**
 * RFC 7644's protocol on this service: filters, paging, attributes, ETags with If-Match, the error
 * format and its scimTypes, /Bulk with bulkId references and failOnErrors, the token (revoked,
 * rolled, another organization's) and its limit, and teams taken from `department`.
 */
const q = encodeURIComponent;

describe('SCIM protocol', () => {
  let t: ScimTest;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    t = await scimTest();
    for (const [name, extra] of [
      ['ann@acme.test', { externalId: 'ext-1' }],
      ['bob@acme.test', { externalId: 'ext-2' }],
      ['cyd@other.test', {}],
      ['dan@acme.test', { active: false }],
    ] as const) {
      ids[name] = (await t.scim('POST', '/Users', newUser(name, extra))).json.id as string;
    }
  }, 60_000);
  afterAll(() => t?.close());

  const names = (res: { json: Record<string, unknown> }) => (res.json.Resources as { userName: string }[]).map((r) => r.userName).sort();

  it('filters with eq, co, sw, pr, and, or, not, on userName, emails, externalId, active and meta', async () => {
    expect(names(await t.scim('GET', `/Users?filter=${q('userName eq "BOB@acme.test"')}`))).toEqual(['bob@acme.test']);
    expect(names(await t.scim('GET', `/Users?filter=${q('userName co "@acme"')}`))).toEqual(['ann@acme.test', 'bob@acme.test', 'dan@acme.test']);
    expect(names(await t.scim('GET', `/Users?filter=${q('userName sw "c"')}`))).toEqual(['cyd@other.test']);
    expect(names(await t.scim('GET', `/Users?filter=${q('externalId pr')}`))).toEqual(['ann@acme.test', 'bob@acme.test']);
    expect(names(await t.scim('GET', `/Users?filter=${q('externalId eq "EXT-1"')}`))).toEqual([]); // caseExact
    expect(names(await t.scim('GET', `/Users?filter=${q('userName co "acme" and active eq true')}`))).toEqual(['ann@acme.test', 'bob@acme.test']);
    expect(names(await t.scim('GET', `/Users?filter=${q('userName eq "ann@acme.test" or userName eq "cyd@other.test"')}`))).toEqual([
      'ann@acme.test',
      'cyd@other.test',
    ]);
    expect(names(await t.scim('GET', `/Users?filter=${q('not (userName co "acme")')}`))).toEqual(['cyd@other.test']);
    expect(names(await t.scim('GET', `/Users?filter=${q('emails[type eq "work" and value eq "ann@acme.test"]')}`))).toEqual(['ann@acme.test']);
    expect(names(await t.scim('GET', `/Users?filter=${q('emails.value ew "other.test"')}`))).toEqual(['cyd@other.test']);
    expect(names(await t.scim('GET', `/Users?filter=${q(`${USER}:userName eq "ann@acme.test"`)}`))).toEqual(['ann@acme.test']);
    expect(names(await t.scim('GET', `/Users?filter=${q('meta.lastModified gt "2026-01-01T00:00:00Z"')}`))).toHaveLength(4);
    const bad = await t.scim('GET', `/Users?filter=${q('userName eq')}`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json).toMatchObject({ status: '400', scimType: 'invalidFilter' });
  });

  it('pages by startIndex and count, and answers count=0 with the total only', async () => {
    const all = await t.scim('GET', '/Users');
    expect(all.json).toMatchObject({ totalResults: 4, startIndex: 1, itemsPerPage: 4 });
    const second = await t.scim('GET', '/Users?startIndex=2&count=2');
    expect(second.json).toMatchObject({ totalResults: 4, startIndex: 2, itemsPerPage: 2 });
    expect((second.json.Resources as { id: string }[]).map((r) => r.id)).toEqual((all.json.Resources as { id: string }[]).slice(1, 3).map((r) => r.id));
    expect((await t.scim('GET', '/Users?count=0')).json).toMatchObject({ totalResults: 4, itemsPerPage: 0, Resources: [] });
    expect((await t.scim('GET', '/Users?startIndex=0&count=1')).json).toMatchObject({ startIndex: 1, itemsPerPage: 1 });
    expect((await t.scim('GET', '/Users?startIndex=9')).json).toMatchObject({ totalResults: 4, itemsPerPage: 0 });
  });

  it('returns the attributes asked for, or all but the excluded ones; id and schemas always', async () => {
    const only = await t.scim('GET', `/Users/${ids['ann@acme.test']}?attributes=userName,emails.value`);
    expect(only.json).toEqual({ schemas: [USER], id: ids['ann@acme.test'], userName: 'ann@acme.test', emails: [{ value: 'ann@acme.test' }] });
    const without = await t.scim('GET', `/Users/${ids['ann@acme.test']}?excludedAttributes=emails,meta,id`);
    expect(Object.keys(without.json).sort()).toEqual(['active', 'externalId', 'id', 'schemas', 'userName']);
  });

  it('gives every resource an ETag: If-None-Match answers 304, a stale If-Match 412 and changes nothing', async () => {
    const id = ids['bob@acme.test'];
    const first = await t.scim('GET', `/Users/${id}`);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]{16}"$/);
    expect((await t.scim('GET', `/Users/${id}`, undefined, { 'if-none-match': etag })).statusCode).toBe(304);
    const changed = await t.scim(
      'PATCH',
      `/Users/${id}`,
      { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'externalId', value: 'ext-2b' }] },
      { 'if-match': etag },
    );
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    const stale = await t.scim(
      'PATCH',
      `/Users/${id}`,
      { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'externalId', value: 'ext-2c' }] },
      { 'if-match': etag },
    );
    expect(stale.statusCode).toBe(412);
    expect(stale.json).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '412',
      detail: 'The resource changed since the version given in If-Match.',
    });
    expect((await t.scim('GET', `/Users/${id}`)).json.externalId).toBe('ext-2b');
    expect((await t.scim('DELETE', `/Users/${id}`, undefined, { 'if-match': etag })).statusCode).toBe(412);
  });

  it('lets one of two concurrent changes with the same If-Match through, and refuses the other (412)', async () => {
    const id = ids['cyd@other.test'];
    const etag = (await t.scim('GET', `/Users/${id}`)).headers.etag as string;
    const change = (value: string) =>
      t.scim('PATCH', `/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'externalId', value }] }, { 'if-match': etag });
    const results = await Promise.all([change('race-a'), change('race-b')]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 412]);
    const winner = results.find((r) => r.statusCode === 200)!.json.externalId;
    expect((await t.scim('GET', `/Users/${id}`)).json.externalId).toBe(winner);
  });

  it("answers errors in SCIM's format with their scimType", async () => {
    expect((await t.scim('GET', '/Users/rsp_none')).json).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '404',
      detail: 'No user "rsp_none".',
    });
    expect((await t.scim('POST', '/Users', { schemas: [USER] })).json).toMatchObject({ status: '400', scimType: 'invalidValue' });
    expect((await t.scim('POST', '/Users', { schemas: [USER], userName: 'not an address' })).json).toMatchObject({ status: '400', scimType: 'invalidValue' });
    expect((await t.scim('POST', '/Users', { schemas: [GROUP], userName: 'x@acme.test' })).json).toMatchObject({ status: '400', scimType: 'invalidSyntax' });
    expect((await t.scim('PATCH', `/Users/${ids['ann@acme.test']}`, { schemas: [PATCH_OP], Operations: [{ op: 'remove' }] })).json).toMatchObject({
      status: '400',
      scimType: 'noTarget',
    });
    expect((await t.scim('PATCH', `/Users/${ids['ann@acme.test']}`, { schemas: [PATCH_OP], Operations: [{ op: 'move', path: 'x' }] })).json).toMatchObject({
      status: '400',
    });
    const taken = await t.scim('PATCH', `/Users/${ids['ann@acme.test']}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'userName', value: 'cyd@other.test' }],
    });
    expect(taken.json).toMatchObject({ status: '409', scimType: 'uniqueness' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/scim/v2/Users',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/scim+json' },
      payload: '{"userName":',
    });
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ status: '400', scimType: 'invalidSyntax' });
    expect((await t.scim('GET', '/Nothing')).json).toMatchObject({ status: '404' });
  });

  it('runs /Bulk in order, resolving bulkId references, and stops after failOnErrors errors', async () => {
    const bulk = await t.scim('POST', '/Bulk', {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
      Operations: [
        { method: 'POST', path: '/Users', bulkId: 'u1', data: newUser('eve@acme.test') },
        { method: 'POST', path: '/Groups', bulkId: 'g1', data: { schemas: [GROUP], displayName: 'Bulk team', members: [{ value: 'bulkId:u1' }] } },
        { method: 'PATCH', path: '/Users/bulkId:u1', data: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'externalId', value: 'ext-eve' }] } },
      ],
    });
    expect(bulk.statusCode).toBe(200);
    const ops = bulk.json.Operations as { status: string; location: string; bulkId?: string }[];
    expect(ops.map((o) => o.status)).toEqual(['201', '201', '200']);
    const group = await t.scim('GET', ops[1].location.replace('http://127.0.0.1:3000/scim/v2', ''));
    expect((group.json.members as { display: string }[]).map((m) => m.display)).toEqual(['eve@acme.test']);

    const failing = await t.scim('POST', '/Bulk', {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
      failOnErrors: 1,
      Operations: [
        { method: 'POST', path: '/Users', bulkId: 'x1', data: newUser('ann@acme.test') },
        { method: 'POST', path: '/Users', bulkId: 'x2', data: newUser('fay@acme.test') },
      ],
    });
    expect(failing.json.Operations).toEqual([
      { method: 'POST', bulkId: 'x1', status: '409', response: expect.objectContaining({ status: '409', scimType: 'uniqueness' }) },
    ]);
    expect((await t.scim('GET', `/Users?filter=${q('userName eq "fay@acme.test"')}`)).json.totalResults).toBe(0);
    const unknown = await t.scim('POST', '/Bulk', {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
      Operations: [{ method: 'DELETE', path: '/Users/bulkId:nope' }],
    });
    expect((unknown.json.Operations as { status: string }[])[0].status).toBe('409');
  });

  it('serves ServiceProviderConfig, ResourceTypes and Schemas', async () => {
    const spc = await t.scim('GET', '/ServiceProviderConfig');
    expect(spc.json).toMatchObject({
      patch: { supported: true },
      bulk: { supported: true, maxOperations: 1000 },
      filter: { supported: true, maxResults: 1000 },
      etag: { supported: true },
    });
    expect(((await t.scim('GET', '/ResourceTypes')).json.Resources as { id: string }[]).map((r) => r.id)).toEqual(['User', 'Group']);
    expect((await t.scim('GET', '/ResourceTypes/Group')).json.endpoint).toBe('/Groups');
    expect(((await t.scim('GET', '/Schemas')).json.Resources as { id: string }[]).map((r) => r.id)).toEqual([USER, ENTERPRISE, GROUP]);
    expect((await t.scim('GET', `/Schemas/${ENTERPRISE}`)).json.attributes).toHaveLength(1);
  });

  it('refuses a missing, unknown, revoked or rolled-and-expired token (401), within the cache bound', async () => {
    const call = (token?: string) => t.app.inject({ method: 'GET', url: '/scim/v2/Users', headers: token ? { authorization: `Bearer ${token}` } : {} });
    const none = await call();
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="climate-pulse-scim"');
    expect(JSON.parse(none.body)).toMatchObject({ status: '401' });
    expect((await call('cp_scim_nope')).statusCode).toBe(401);
    expect((await call('cp_live_nope')).statusCode).toBe(401);
    const rolled = await rollScimToken(
      t.db,
      t.orgId,
      (await t.db.query<{ id: string }>(sql('t.tok', 'SELECT id FROM scim_tokens WHERE org_id = $1'), [t.orgId]))[0].id,
      'now',
      operatorActor(),
      new Date(),
    );
    await new Promise((r) => setTimeout(r, 2_100)); // KEY_CACHE_TTL_MS (2 s)
    expect((await call(t.token)).statusCode).toBe(401);
    expect((await call(rolled.token)).statusCode).toBe(200);
    await revokeScimToken(t.db, t.orgId, rolled.id, operatorActor(), NOW);
    await new Promise((r) => setTimeout(r, 2_100));
    expect((await call(rolled.token)).statusCode).toBe(401);
  });
});

describe('the token limit and teams from department', () => {
  let t: ScimTest;
  beforeAll(async () => {
    t = await scimTest({ env: { SCIM_REQUESTS_PER_MINUTE: '5' } });
  }, 60_000);
  afterAll(() => t?.close());

  it('answers 429 with Retry-After past the limit of the token', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await t.app.inject({ method: 'GET', url: '/scim/v2/Users?count=0', headers: { authorization: `Bearer ${t.token}` } })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const refused = await t.app.inject({ method: 'GET', url: '/scim/v2/Users', headers: { authorization: `Bearer ${t.token}` } });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(refused.body)).toMatchObject({ status: '429' });
  });
});

describe('teams from the enterprise department', () => {
  let t: ScimTest;
  beforeAll(async () => {
    t = await scimTest();
    await setScimTeamFrom(t.db, t.orgId, 'department', operatorActor(), NOW);
  }, 60_000);
  afterAll(() => t?.close());

  it('puts a user in the team their department names, moves them when it changes, and keeps Groups read-only', async () => {
    const created = await t.scim('POST', '/Users', newUser('gil@acme.test', { schemas: [USER, ENTERPRISE], [ENTERPRISE]: { department: 'Sales' } }));
    expect(created.json[ENTERPRISE]).toEqual({ department: 'Sales' });
    expect((created.json.groups as { display: string }[])[0].display).toBe('Sales');
    const id = created.json.id as string;
    const moved = await t.scim('PATCH', `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: `${ENTERPRISE}:department`, value: 'Support' }],
    });
    expect(moved.json[ENTERPRISE]).toEqual({ department: 'Support' });
    const byValue = await t.scim('PATCH', `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', value: { [`${ENTERPRISE}:department`]: 'Sales' } }],
    });
    expect(byValue.json[ENTERPRISE]).toEqual({ department: 'Sales' });
    const cleared = await t.scim('PATCH', `/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'Remove', path: `${ENTERPRISE}:department` }] });
    expect(cleared.json[ENTERPRISE]).toBeUndefined();
    const [r] = await t.db.query<{ team_id: string | null }>(sql('t.team', 'SELECT team_id FROM respondents WHERE org_id = $1 AND id = $2'), [t.orgId, id]);
    expect(r.team_id).toBeNull();
    const refused = await t.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Ops' });
    expect(refused.json).toMatchObject({ status: '400', scimType: 'mutability' });
    expect(((await t.scim('GET', '/Groups')).json.Resources as { displayName: string }[]).map((g) => g.displayName).sort()).toEqual(['Sales', 'Support']);
  });
});
