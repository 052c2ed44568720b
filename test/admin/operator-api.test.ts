import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { createAdminTest, TOKEN, type AdminTest } from './helpers.js';

const ORG = '/admin/v1/organizations';
/**
 * Monday two weeks before this one, 09:00 UTC: a closed week inside the last 30 days, whatever the
 * day the suite runs (a fixed date left that window a month after it was written).
 */
const NOW = new Date();
const MONDAY = Date.UTC(NOW.getUTCFullYear(), NOW.getUTCMonth(), NOW.getUTCDate() - ((NOW.getUTCDay() + 6) % 7) - 14, 9);
const pulse = (i: number, extra: Record<string, unknown> = {}) => ({
  id: `live_${i}`,
  level: 1 + (i % 5),
  reason: 'workload',
  comment: `c${i}`,
  moderationStatus: 'CLEAN',
  subteamId: null,
  createdAt: new Date(MONDAY + i * 1000).toISOString(),
  ...extra,
});

describe('operator API', () => {
  let t: AdminTest;
  beforeAll(async () => {
    t = await createAdminTest({
      dataset: {
        organizations: [
          {
            id: 'org_a',
            name: 'A',
            plan: 'business',
            createdAt: '2026-01-01T00:00:00.000Z',
            apiKeys: [{ key: 'cp_test_a_0123456789abcdef', name: 'ci' }],
            teams: [{ id: 'team_x', name: 'X', createdAt: '2026-01-01T00:00:00.000Z' }],
            alerts: [
              { id: 'al_1', type: 'LOW_MOOD', message: 'Low', weekISO: '2026-W44', subteamId: 'team_x', readAt: null, createdAt: '2026-11-03T06:00:00.000Z' },
            ],
          },
        ],
      },
    });
  });
  afterAll(() => t.close());

  it('refuses a request without the token or with a wrong one: 401 in the error shape, with X-Request-Id and WWW-Authenticate', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token-wrong-token-wrong-token' }, { authorization: `Basic ${TOKEN}` }]) {
      for (const [method, url] of [
        ['GET', `${ORG}/org_a`],
        ['POST', `${ORG}/org_a/pulses`],
        ['GET', '/admin/v1/nope'],
        ['GET', '/admin/v1/openapi.json'],
      ] as const) {
        const res = await t.admin.inject({ method, url, headers });
        expect(res.statusCode).toBe(401);
        expect(res.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
        expect(res.headers['x-request-id']).toBeTruthy();
        expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="climate-pulse-admin"/);
      }
    }
  });

  it('is never served on the public port: every /admin path is 404 not_found there', async () => {
    for (const [method, url] of [
      ['GET', `${ORG}/org_a`],
      ['POST', ORG],
      ['DELETE', `${ORG}/org_a`],
      ['PUT', '/admin/v1/plans/x'],
      ['GET', '/admin/v1/openapi.json'],
      ['POST', `${ORG}/org_a/pulses`],
      ['PATCH', `${ORG}/org_a/alerts/al_1`],
      ['GET', '/admin'],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: { code: 'not_found', message: 'No such endpoint.' } });
    }
  });

  it('serves its own OpenAPI 3.1 document with every operator path', async () => {
    const doc = (await t.call('GET', '/admin/v1/openapi.json')).json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/admin/v1/alerts/run',
      '/admin/v1/backup',
      '/admin/v1/organizations',
      '/admin/v1/organizations/{orgId}',
      '/admin/v1/organizations/{orgId}/alerts/{alertId}',
      '/admin/v1/organizations/{orgId}/audit-events',
      '/admin/v1/organizations/{orgId}/audit-events/export',
      '/admin/v1/organizations/{orgId}/checkin-links',
      '/admin/v1/organizations/{orgId}/checkin-participation',
      '/admin/v1/organizations/{orgId}/checkin-rounds',
      '/admin/v1/organizations/{orgId}/checkin-settings',
      '/admin/v1/organizations/{orgId}/invitations',
      '/admin/v1/organizations/{orgId}/invitations/{invitationId}',
      '/admin/v1/organizations/{orgId}/keys',
      '/admin/v1/organizations/{orgId}/keys/{keyId}',
      '/admin/v1/organizations/{orgId}/members',
      '/admin/v1/organizations/{orgId}/members/{memberId}',
      '/admin/v1/organizations/{orgId}/members/{memberId}/passkeys',
      '/admin/v1/organizations/{orgId}/members/{memberId}/passkeys/{passkeyId}',
      '/admin/v1/organizations/{orgId}/passkey-settings',
      '/admin/v1/organizations/{orgId}/pulses',
      '/admin/v1/organizations/{orgId}/pulses/import',
      '/admin/v1/organizations/{orgId}/pulses/{pulseId}',
      '/admin/v1/organizations/{orgId}/respondents',
      '/admin/v1/organizations/{orgId}/respondents/{respondentId}',
      '/admin/v1/organizations/{orgId}/respondents/{respondentId}/resend-link',
      '/admin/v1/organizations/{orgId}/retention',
      '/admin/v1/organizations/{orgId}/roster',
      '/admin/v1/organizations/{orgId}/scim-settings',
      '/admin/v1/organizations/{orgId}/scim-tokens',
      '/admin/v1/organizations/{orgId}/scim-tokens/{tokenId}',
      '/admin/v1/organizations/{orgId}/scim-tokens/{tokenId}/roll',
      '/admin/v1/organizations/{orgId}/sso',
      '/admin/v1/organizations/{orgId}/sso/domains',
      '/admin/v1/organizations/{orgId}/sso/domains/{domain}',
      '/admin/v1/organizations/{orgId}/sso/domains/{domain}/verify',
      '/admin/v1/organizations/{orgId}/sso/oidc',
      '/admin/v1/organizations/{orgId}/sso/requirement',
      '/admin/v1/organizations/{orgId}/sso/saml',
      '/admin/v1/organizations/{orgId}/webhook-deliveries',
      '/admin/v1/organizations/{orgId}/webhook-deliveries/resend-failed',
      '/admin/v1/organizations/{orgId}/webhook-endpoints',
      '/admin/v1/organizations/{orgId}/webhook-endpoints/{endpointId}',
      '/admin/v1/plans/{name}',
      '/admin/v1/webhook-deliveries/{deliveryId}/replay',
      '/admin/v1/webhook-endpoints/{endpointId}',
      '/admin/v1/webhook-endpoints/{endpointId}/disable',
      '/admin/v1/webhook-endpoints/{endpointId}/enable',
      '/admin/v1/webhook-endpoints/{endpointId}/rotate-secret',
      '/admin/v1/webhook-endpoints/{endpointId}/test',
    ]);
    expect(doc.paths['/admin/v1/organizations/{orgId}/pulses'].post.responses['409'].description).toMatch(/^pulse_conflict/);
    expect(JSON.stringify(doc)).not.toContain('/v1/pulses"'); // none of the public API's paths
  });

  it('bodies are strict: unknown fields, wrong JSON types and a non-JSON body are 400', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', ORG, { name: 'N', plan: 'business', extra: 1 }, "Unknown body field 'extra'."],
      ['POST', ORG, { name: 42, plan: 'business' }, "Body field 'name' must be string."],
      ['PATCH', `${ORG}/org_a`, {}, 'The body must contain at least one field.'],
      ['PUT', '/admin/v1/plans/tiny', { restApi: 'yes', rateLimitPerMinute: 5 }, "Body field 'restApi' must be boolean."],
      ['POST', `${ORG}/org_a/keys`, { scope: 'admin' }, expect.stringContaining("Body field 'scope'") as unknown as string],
      ['PATCH', `${ORG}/org_a/alerts/al_1`, { read: 'true' }, "Body field 'read' must be boolean."],
      ['PATCH', `${ORG}/org_a/pulses/p`, { moderationStatus: 'clean' }, expect.stringContaining("Body field 'moderationStatus'") as unknown as string],
      ['POST', `${ORG}/org_a/pulses`, { pulses: [] }, "Body field 'pulses' must NOT have fewer than 1 items."],
    ];
    for (const [method, url, body, message] of cases) {
      const res = await t.call(method as 'POST', url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(400);
      expect(res.json()).toEqual({ error: { code: 'invalid_request', message } });
    }
    const notJson = await t.admin.inject({
      method: 'POST',
      url: ORG,
      payload: 'name=x',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' },
    });
    expect(notJson.json().error.code).toBe('invalid_json');
    const tooMany = await t.call('POST', `${ORG}/org_a/pulses`, { pulses: Array.from({ length: 1001 }, (_, i) => pulse(i)) });
    expect(tooMany.json()).toEqual({ error: { code: 'invalid_request', message: "Body field 'pulses' must NOT have more than 1000 items." } });
  });

  it('organizations: create, show, update, soft delete (public API 404 org_not_found), unknown plan and taken id refused', async () => {
    const created = await t.call('POST', ORG, { id: 'org_new', name: 'New', plan: 'business', memberCount: 7 });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({ id: 'org_new', name: 'New', plan: 'business', memberCount: 7, createdAt: expect.stringMatching(/Z$/), deletedAt: null });
    const generated = (await t.call('POST', ORG, { name: 'Gen', plan: 'free' })).json();
    expect(generated.id).toMatch(/^org_[0-9A-Za-z]{16}$/);
    expect((await t.call('POST', ORG, { id: 'org_new', name: 'Again', plan: 'business' })).json()).toEqual({
      error: { code: 'invalid_request', message: `Body field 'id': an organization "org_new" already exists.` },
    });
    expect((await t.call('POST', ORG, { name: 'P', plan: 'platinum' })).json()).toEqual({
      error: { code: 'invalid_request', message: `Body field 'plan' names no plan: "platinum".` },
    });
    const patched = await t.call('PATCH', `${ORG}/org_new`, { name: 'Renamed', memberCount: 9 });
    expect(patched.json()).toMatchObject({ id: 'org_new', name: 'Renamed', plan: 'business', memberCount: 9 });
    expect((await t.call('GET', `${ORG}/org_nope`)).json()).toEqual({ error: { code: 'not_found', message: 'no organization "org_nope"' } });

    const key = (await t.call('POST', `${ORG}/org_new/keys`, {})).json().key;
    const pub = () => t.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${key}` } });
    expect((await pub()).statusCode).toBe(200);
    expect((await t.call('PATCH', `${ORG}/org_new`, { plan: 'free' })).statusCode).toBe(200);
    expect((await pub()).json().error.code).toBe('plan_forbidden');
    await t.call('PATCH', `${ORG}/org_new`, { plan: 'business' });
    const deleted = await t.call('DELETE', `${ORG}/org_new`);
    expect(deleted.json()).toEqual({ organization: expect.objectContaining({ id: 'org_new', deletedAt: expect.stringMatching(/Z$/) }), erased: false });
    expect((await pub()).json()).toEqual({ error: { code: 'org_not_found', message: expect.any(String) } });
    expect((await t.call('GET', `${ORG}/org_new`)).json().deletedAt).toMatch(/Z$/); // deleted ones too
  });

  it('plans: PUT creates, then changes; the public API applies the new limit', async () => {
    expect((await t.call('PUT', '/admin/v1/plans/tiny', { restApi: true, rateLimitPerMinute: 2 })).json()).toEqual({
      name: 'tiny',
      restApi: true,
      rateLimitPerMinute: 2,
      created: true,
    });
    expect((await t.call('PUT', '/admin/v1/plans/tiny', { restApi: true, rateLimitPerMinute: 3 })).json().created).toBe(false);
    await t.call('POST', ORG, { id: 'org_tiny', name: 'Tiny', plan: 'tiny' });
    const key = (await t.call('POST', `${ORG}/org_tiny/keys`, {})).json().key;
    const res = await t.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${key}` } });
    expect(res.headers['ratelimit-limit']).toBe('3');
  });

  it('keys: created with scope and expiry, listed without secrets, revoked by id; a read key reads and gets 403 insufficient_scope on POST and PATCH', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const created = await t.call('POST', `${ORG}/org_a/keys`, { name: 'dash', scope: 'read', expiresAt });
    expect(created.statusCode).toBe(201);
    const k = created.json();
    expect(k).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^cp_live_[0-9A-Za-z]{40}$/),
      prefix: k.key.slice(0, 14),
      name: 'dash',
      scope: 'read',
      createdAt: expect.stringMatching(/Z$/),
      expiresAt,
    });
    const list = (await t.call('GET', `${ORG}/org_a/keys`)).json();
    expect(list.items.find((x: { id: string }) => x.id === k.id)).toEqual({
      id: k.id,
      prefix: k.prefix,
      name: 'dash',
      scope: 'read',
      createdAt: k.createdAt,
      expiresAt,
      lastUsedAt: null,
      revokedAt: null,
      createdBy: 'operator',
    });
    expect(JSON.stringify(list)).not.toContain(k.key);

    const auth = { authorization: `Bearer ${k.key}` };
    for (const url of ['/v1/pulses', '/v1/stats', '/v1/stats/daily', '/v1/comments', '/v1/alerts', '/v1/org', '/v1/actions', '/v1/teams']) {
      expect((await t.app.inject({ url, headers: auth })).statusCode, url).toBe(200);
    }
    // Refused before validation: an invalid body and a missing Idempotency-Key are not looked at.
    for (const [method, url, payload] of [
      ['POST', '/v1/teams', { name: 'T' }],
      ['POST', '/v1/actions', { bad: 1 }],
      ['PATCH', '/v1/actions/x', { title: 'x' }],
      ['POST', '/api/v1/teams', 'not json'],
    ] as const) {
      const res = await t.app.inject({ method, url, payload, headers: { ...auth, 'idempotency-key': 'key-12345678' } });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: { code: 'insufficient_scope', message: 'This API key has scope read: it may only send GET requests.' } });
      expect(res.headers['ratelimit-limit']).toBe('600'); // after the rate limit
    }
    expect((await t.call('POST', `${ORG}/org_a/keys`, { expiresAt: '2020-01-01T00:00:00Z' })).json()).toEqual({
      error: { code: 'invalid_request', message: "Body field 'expiresAt' must be in the future." },
    });
    const revoked = await t.call('DELETE', `${ORG}/org_a/keys/${k.id}`);
    expect(revoked.json()).toMatchObject({ id: k.id, revokedAt: expect.stringMatching(/Z$/) });
    expect((await t.app.inject({ url: '/v1/org', headers: auth })).statusCode).toBe(401);
    expect((await t.call('DELETE', `${ORG}/org_a/keys/key_nope`)).json()).toEqual({
      error: { code: 'not_found', message: 'no key with id or prefix "key_nope" in org_a' },
    });
  });

  it('an expired key gets 401 like a revoked one', async () => {
    const k = (await t.call('POST', `${ORG}/org_a/keys`, { expiresAt: new Date(Date.now() + 1500).toISOString() })).json();
    const get = () => t.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${k.key}` } });
    expect((await get()).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 1600));
    const res = await get();
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthorized');
  });

  it('ingestion: inserts, answers unchanged on a re-sent batch, 409 pulse_conflict on a changed pulse, names a bad pulse and writes nothing', async () => {
    const batch = Array.from({ length: 10 }, (_, i) => pulse(i, i === 2 ? { subteamId: 'team_x' } : {}));
    // A week is frozen only once it holds pulses (CONTRACT section 5): one pulse there, then an answer
    // that releases the closed weeks of the last 30 days (MONDAY's among them): the batch arrives late.
    expect((await t.call('POST', `${ORG}/org_a/pulses`, { pulses: [pulse(900)] })).json()).toEqual({ inserted: 1, unchanged: 0, inFrozenWeeks: 0 });
    expect((await t.app.inject({ url: '/v1/comments', headers: { authorization: 'Bearer cp_test_a_0123456789abcdef' } })).statusCode).toBe(200);
    const first = await t.call('POST', `${ORG}/org_a/pulses`, { pulses: batch });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ inserted: 10, unchanged: 0, inFrozenWeeks: 10 });
    expect((await t.call('POST', `${ORG}/org_a/pulses`, { pulses: batch })).json()).toEqual({ inserted: 0, unchanged: 10, inFrozenWeeks: 0 });
    const more = [...batch.slice(0, 3), pulse(10)];
    expect((await t.call('POST', `${ORG}/org_a/pulses`, { pulses: more })).json()).toEqual({ inserted: 1, unchanged: 3, inFrozenWeeks: 1 });

    const count = async () => (await t.db.query<{ n: number }>(sql('t.count', `SELECT count(*)::int AS n FROM pulses WHERE org_id = 'org_a'`)))[0].n;
    const before = await count();
    const changed = await t.call('POST', `${ORG}/org_a/pulses`, { pulses: [pulse(20), { ...batch[4], level: batch[4].level === 5 ? 4 : 5 }] });
    expect(changed.statusCode).toBe(409);
    expect(changed.json()).toEqual({
      error: { code: 'pulse_conflict', message: 'pulses[1]: a pulse with id "live_4" already exists with other fields; pulses cannot be changed' },
    });
    const bad = await t.call('POST', `${ORG}/org_a/pulses`, { pulses: [pulse(21), pulse(22), pulse(23), pulse(24, { level: 6 })] });
    expect(bad.json()).toEqual({ error: { code: 'invalid_request', message: "Body field 'pulses[3].level' must be <= 5." } });
    const badTeam = await t.call('POST', `${ORG}/org_a/pulses`, { pulses: [pulse(21), pulse(22), pulse(23, { subteamId: 'team_nope' })] });
    expect(badTeam.json()).toEqual({ error: { code: 'invalid_request', message: 'pulses[2].subteamId: unknown team "team_nope"' } });
    const dup = await t.call('POST', `${ORG}/org_a/pulses`, { pulses: [pulse(21), pulse(21)] });
    expect(dup.json()).toEqual({ error: { code: 'invalid_request', message: 'pulses[1].id: duplicate id "live_21" in this batch' } });
    const offset = await t.call('POST', `${ORG}/org_a/pulses`, { pulses: [pulse(25, { createdAt: '2026-11-02T09:00:00' })] });
    expect(offset.json().error.code).toBe('invalid_request');
    expect(await count()).toBe(before); // nothing written by any refused batch

    // A pulse moderated since is still "unchanged" when re-sent: moderation is not the sender's field.
    expect((await t.call('PATCH', `${ORG}/org_a/pulses/live_0`, { moderationStatus: 'FLAGGED' })).json()).toEqual({
      pulseId: 'live_0',
      previous: 'CLEAN',
      current: 'FLAGGED',
      changed: true,
    });
    expect((await t.call('POST', `${ORG}/org_a/pulses`, { pulses: [batch[0]] })).json()).toEqual({ inserted: 0, unchanged: 1, inFrozenWeeks: 0 });
    expect((await t.call('PATCH', `${ORG}/org_a/pulses/live_0`, { moderationStatus: 'FLAGGED' })).json().changed).toBe(false);
    expect((await t.call('PATCH', `${ORG}/org_a/pulses/nope`, { moderationStatus: 'CLEAN' })).statusCode).toBe(404);
    expect((await t.call('POST', `${ORG}/org_nope/pulses`, { pulses: [pulse(1)] })).json()).toEqual({
      error: { code: 'not_found', message: 'no organization "org_nope" (or it is deleted)' },
    });
  });

  it("the read marker: read sets readAt once, again keeps it, unread clears it; another organization's alert is 404", async () => {
    const read = await t.call('PATCH', `${ORG}/org_a/alerts/al_1`, { read: true });
    expect(read.json()).toEqual({
      id: 'al_1',
      type: 'LOW_MOOD',
      message: 'Low',
      weekISO: '2026-W44',
      subteamName: 'X',
      readAt: expect.stringMatching(/Z$/),
      createdAt: '2026-11-03T06:00:00.000Z',
    });
    await new Promise((r) => setTimeout(r, 5));
    expect((await t.call('PATCH', `${ORG}/org_a/alerts/al_1`, { read: true })).json().readAt).toBe(read.json().readAt);
    const pub = await t.app.inject({ url: '/v1/alerts', headers: { authorization: 'Bearer cp_test_a_0123456789abcdef' } });
    expect(pub.json().items[0].readAt).toBe(read.json().readAt);
    expect((await t.call('PATCH', `${ORG}/org_a/alerts/al_1`, { read: false })).json().readAt).toBeNull();
    await t.call('POST', ORG, { id: 'org_b', name: 'B', plan: 'business' });
    expect((await t.call('PATCH', `${ORG}/org_b/alerts/al_1`, { read: true })).json()).toEqual({
      error: { code: 'not_found', message: 'no alert "al_1" in org_b' },
    });
  });

  it('webhook endpoints: add (secret once), list without secrets, refuse bad URLs, delete', async () => {
    const added = await t.call('POST', `${ORG}/org_a/webhook-endpoints`, { url: 'https://example.com/hook', eventTypes: ['alert.created'] });
    expect(added.statusCode).toBe(201);
    const e = added.json();
    expect(e).toEqual({
      id: expect.stringMatching(/^whe_/),
      orgId: 'org_a',
      url: 'https://example.com/hook',
      eventTypes: ['alert.created'],
      enabled: true,
      disabledReason: null,
      createdAt: expect.stringMatching(/Z$/),
      previousSecretExpiresAt: null,
      secret: expect.stringMatching(/^whsec_/),
    });
    const list = (await t.call('GET', `${ORG}/org_a/webhook-endpoints`)).json();
    expect(list).toEqual({ items: [{ ...e, secret: undefined }].map(({ secret: _s, ...rest }) => rest) });
    expect(JSON.stringify(list)).not.toContain(e.secret);
    const bad = await t.call('POST', `${ORG}/org_a/webhook-endpoints`, { url: 'ftp://example.com' });
    expect(bad.json()).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining('https://') } });
    expect((await t.call('DELETE', `${ORG}/org_b/webhook-endpoints/${e.id}`)).statusCode).toBe(404); // another organization's
    expect((await t.call('DELETE', `${ORG}/org_a/webhook-endpoints/${e.id}`)).json()).toMatchObject({ id: e.id });
    expect((await t.call('GET', `${ORG}/org_a/webhook-endpoints`)).json()).toEqual({ items: [] });
  });

  it('the file import streams progress, then the summary; a bad row writes nothing and the last line says so', async () => {
    const url = `${ORG}/org_a/pulses/import`;
    const lines = (body: string) =>
      body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
    const good = `${Array.from({ length: 3 }, (_, i) => JSON.stringify(pulse(100 + i))).join('\n')}\n`;
    const ok = await t.admin.inject({
      method: 'POST',
      url,
      payload: good,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toBe('application/x-ndjson');
    const okLines = lines(ok.body);
    expect(okLines.at(-2)).toEqual({ progress: { bytes: good.length, total: good.length, rows: 3 } });
    expect(okLines.at(-1).summary).toMatchObject({ imported: 3, skipped: 0, rows: 3, aborted: false });

    // Rows out of time order are staged and moved in last (skip mode, on every engine; abort mode
    // on a server sorts each batch instead): the progress says so, to the end.
    const reversed = `${[302, 301, 300].map((i) => JSON.stringify(pulse(i))).join('\n')}\n`;
    const rev = await t.admin.inject({
      method: 'POST',
      url: `${url}?onError=skip`,
      payload: reversed,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
    });
    const revLines = lines(rev.body);
    expect(revLines.at(-2)).toEqual({ progress: { bytes: reversed.length, total: reversed.length, rows: 3, moved: 2, staged: 2 } });
    expect(revLines.at(-1).summary).toMatchObject({ imported: 3, skipped: 0, rows: 3, aborted: false });

    const bad = `${JSON.stringify(pulse(200))}\n${JSON.stringify(pulse(201, { level: 0 }))}\n`;
    const refused = await t.admin.inject({
      method: 'POST',
      url,
      payload: bad,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
    });
    expect(lines(refused.body).at(-1)).toEqual({
      error: { code: 'invalid_request', message: 'import aborted: 1 bad row(s); nothing was written' },
      summary: expect.objectContaining({ imported: 0, aborted: true, problems: [{ line: 2, message: 'level: must be >= 1' }] }),
    });
    const csv = 'id,level,reason,comment,moderationStatus,subteamId,createdAt\ncsv_1,3,,,CLEAN,,2026-11-02T10:00:00Z\n';
    const fromCsv = await t.admin.inject({ method: 'POST', url, payload: csv, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' } });
    expect(lines(fromCsv.body).at(-1).summary).toMatchObject({ imported: 1 });

    const json = await t.admin.inject({ method: 'POST', url, payload: { pulses: [] }, headers: { authorization: `Bearer ${TOKEN}` } });
    expect(json.json()).toEqual({ error: { code: 'invalid_json', message: "Content-Type must be 'application/x-ndjson' or 'text/csv'." } });
    const noOrg = await t.admin.inject({
      method: 'POST',
      url: `${ORG}/org_nope/pulses/import`,
      payload: good,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
    });
    expect(noOrg.statusCode).toBe(404);
    const noToken = await t.admin.inject({ method: 'POST', url, payload: good, headers: { 'content-type': 'application/x-ndjson' } });
    expect(noToken.statusCode).toBe(401);
  });
});
