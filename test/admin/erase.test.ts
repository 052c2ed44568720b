import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { createAdminTest, type AdminTest } from './helpers.js';

/**
 * DELETE /admin/v1/organizations/{id}?erase=true leaves no row of the organization in any table.
 * The tables are listed from the catalog at test time (as test/db/schema-distribution.test.ts
 * does), so a table added by a later migration is checked too.
 */
const listTables = sql(
  'test.erase.tables',
  `SELECT c.relname AS name
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'org_id' AND NOT a.attisdropped)
    ORDER BY 1`,
);

const org = (id: string, key: string) => ({
  id,
  name: id,
  plan: 'business',
  createdAt: '2026-01-01T00:00:00.000Z',
  apiKeys: [{ key }],
  teams: [{ id: 'team_1', name: 'One', createdAt: '2026-01-01T00:00:00.000Z' }],
  pulses: Array.from({ length: 12 }, (_, i) => ({
    id: `p_${i}`,
    level: 1 + (i % 5),
    comment: `c ${i}`,
    moderationStatus: 'CLEAN' as const,
    subteamId: i % 2 ? 'team_1' : null,
    createdAt: new Date(Date.parse('2026-10-05T08:00:00.000Z') + i * 3_600_000).toISOString(),
  })),
  alerts: [{ id: 'al_1', type: 'LOW_MOOD', message: 'Low', weekISO: '2026-W41', subteamId: 'team_1', readAt: null, createdAt: '2026-10-12T06:00:00.000Z' }],
  actions: [
    {
      id: 'ac_1',
      title: 'Retro',
      startDate: '2026-10-12T09:00:00.000Z',
      status: 'active' as const,
      subteamId: 'team_1',
      createdAt: '2026-10-12T09:00:00.000Z',
    },
  ],
});

describe('erasing an organization', () => {
  let t: AdminTest;
  beforeAll(async () => {
    t = await createAdminTest({ dataset: { organizations: [org('org_e', 'cp_test_erase_0123456789ab'), org('org_keep', 'cp_test_keep_0123456789ab')] } });
  });
  afterAll(() => t.close());

  const counts = async (orgId: string) => {
    const out: Record<string, number> = {};
    for (const { name } of await t.db.query<{ name: string }>(listTables)) {
      const [r] = await t.db.query<{ n: number }>(sql(`test.erase.count.${name}`, `SELECT count(*)::int AS n FROM "${name}" WHERE org_id = $1`), [orgId]);
      out[name] = r.n;
    }
    return out;
  };

  it('removes every row of the organization in every table, and nothing of another', async () => {
    for (const [orgId, key] of [
      ['org_e', 'cp_test_erase_0123456789ab'],
      ['org_keep', 'cp_test_keep_0123456789ab'],
    ]) {
      const auth = { authorization: `Bearer ${key}` };
      // Fill what requests write: a released comment week, an idempotency record, a webhook event and delivery.
      expect((await t.app.inject({ url: '/v1/comments?from=2026-10-01&to=2026-10-20', headers: auth })).statusCode).toBe(200);
      expect((await t.call('POST', `/admin/v1/organizations/${orgId}/webhook-endpoints`, { url: 'https://example.com/h' })).statusCode).toBe(201);
      const created = await t.app.inject({
        method: 'POST',
        url: '/v1/actions',
        headers: { ...auth, 'idempotency-key': 'erase-test-1' },
        payload: { title: 'Act' },
      });
      expect(created.statusCode).toBe(200);
      expect((await t.call('POST', `/admin/v1/organizations/${orgId}/keys`, { scope: 'read' })).statusCode).toBe(201);
      expect(
        (
          await t.call('POST', `/admin/v1/organizations/${orgId}/pulses`, {
            pulses: [{ id: 'live', level: 3, moderationStatus: 'CLEAN', createdAt: '2026-10-06T10:00:00.000Z' }],
          })
        ).statusCode,
      ).toBe(200);
    }
    const before = await counts('org_e');
    const keepBefore = await counts('org_keep');
    // Every kind of organization data is there before the erasure (the test would prove nothing otherwise).
    for (const table of [
      'api_keys',
      'teams',
      'pulses',
      'pulse_totals',
      'pulse_day_stats',
      'alerts',
      'actions',
      'idempotency_records',
      'comment_release_members',
      'comment_cells',
      'comment_frozen_groups',
      'webhook_endpoints',
      'webhook_events',
      'webhook_deliveries',
      'audit_events',
    ]) {
      expect(before[table], table).toBeGreaterThan(0);
    }

    const res = await t.call('DELETE', '/admin/v1/organizations/org_e?erase=true');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ organization: expect.objectContaining({ id: 'org_e', deletedAt: expect.stringMatching(/Z$/) }), erased: true });

    const after = await counts('org_e');
    expect(Object.entries(after).filter(([, n]) => n > 0)).toEqual([]);
    expect(await t.db.query(sql('test.erase.org', `SELECT id FROM organizations WHERE id = 'org_e'`))).toEqual([]);
    expect(await counts('org_keep')).toEqual(keepBefore);
    expect((await t.call('GET', '/admin/v1/organizations/org_e')).statusCode).toBe(404);
    expect((await t.app.inject({ url: '/v1/org', headers: { authorization: 'Bearer cp_test_erase_0123456789ab' } })).statusCode).toBe(401);
    // The id is free again; pulses of other organizations stay append-only.
    expect((await t.call('POST', '/admin/v1/organizations', { id: 'org_e', name: 'Again', plan: 'business' })).statusCode).toBe(201);
    await expect(t.db.query(sql('test.erase.refused', `DELETE FROM pulses WHERE org_id = 'org_keep'`))).rejects.toThrow(/append-only/);
  });

  it('a refused erasure writes nothing: an unknown organization is 404', async () => {
    expect((await t.call('DELETE', '/admin/v1/organizations/org_nope?erase=true')).json()).toEqual({
      error: { code: 'not_found', message: 'no organization "org_nope"' },
    });
    expect((await t.call('DELETE', '/admin/v1/organizations/org_keep?erase=yes')).statusCode).toBe(400);
  });
});

describe('changes reach the public API within 5 seconds through the key cache', () => {
  let t: AdminTest;
  beforeAll(async () => {
    t = await createAdminTest({ env: { KEY_CACHE_TTL_MS: '2000' }, dataset: { organizations: [org('org_c', 'cp_test_cache_0123456789ab')] } });
  });
  afterAll(() => t.close());

  const within5s = async (check: () => Promise<boolean>) => {
    const started = Date.now();
    while (!(await check())) {
      expect(Date.now() - started).toBeLessThan(5_000);
      await new Promise((r) => setTimeout(r, 100));
    }
    return Date.now() - started;
  };

  it('a revoked key, an expired key, a plan change and a deleted organization', async () => {
    const get = (key: string) => t.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${key}` } });
    const k = (await t.call('POST', '/admin/v1/organizations/org_c/keys', {})).json();
    expect((await get(k.key)).statusCode).toBe(200); // cached now
    await t.call('DELETE', `/admin/v1/organizations/org_c/keys/${k.id}`);
    await within5s(async () => (await get(k.key)).statusCode === 401);

    const e = (await t.call('POST', '/admin/v1/organizations/org_c/keys', { expiresAt: new Date(Date.now() + 1000).toISOString() })).json();
    expect((await get(e.key)).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    await within5s(async () => (await get(e.key)).statusCode === 401);

    expect((await get('cp_test_cache_0123456789ab')).statusCode).toBe(200);
    await t.call('PATCH', '/admin/v1/organizations/org_c', { plan: 'free' });
    await within5s(async () => (await get('cp_test_cache_0123456789ab')).statusCode === 403);
    await t.call('PATCH', '/admin/v1/organizations/org_c', { plan: 'business' });
    await within5s(async () => (await get('cp_test_cache_0123456789ab')).statusCode === 200);
    await t.call('PUT', '/admin/v1/plans/business', { restApi: true, rateLimitPerMinute: 599 });
    await within5s(async () => (await get('cp_test_cache_0123456789ab')).headers['ratelimit-limit'] === '599');
    await t.call('PUT', '/admin/v1/plans/business', { restApi: true, rateLimitPerMinute: 600 });
    await t.call('DELETE', '/admin/v1/organizations/org_c');
    await within5s(async () => (await get('cp_test_cache_0123456789ab')).statusCode === 404);
  });
});
