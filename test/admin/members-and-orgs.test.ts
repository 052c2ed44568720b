import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTest, type AdminTest } from './helpers.js';

/**
 * The operator API's organization list and console members (CONTRACT.md section 10), which the
 * CLI's `orgs list` and `members invite|list|remove` call.
 */
let t: AdminTest;
beforeAll(async () => {
  t = await createAdminTest();
  for (const [i, id] of ['org_l1', 'org_l2', 'org_l3'].entries()) {
    expect((await t.call('POST', '/admin/v1/organizations', { id, name: `List ${i}`, plan: 'business' })).statusCode).toBe(201);
  }
  await t.call('DELETE', '/admin/v1/organizations/org_l2');
});
afterAll(() => t?.close());

describe('GET /admin/v1/organizations', () => {
  it('pages every organization newest first, deleted ones marked', async () => {
    const seen: { id: string; deletedAt: string | null }[] = [];
    let url = '/admin/v1/organizations?limit=1';
    for (;;) {
      const res = await t.call('GET', url);
      expect(res.statusCode).toBe(200);
      const page = res.json();
      expect(page.items.length).toBeLessThanOrEqual(1);
      seen.push(...page.items);
      if (!page.nextCursor) break;
      url = `/admin/v1/organizations?limit=1&cursor=${encodeURIComponent(page.nextCursor)}`;
    }
    const ours = seen.filter((o) => o.id.startsWith('org_l'));
    expect(ours.map((o) => o.id)).toEqual(['org_l3', 'org_l2', 'org_l1']);
    expect(ours.map((o) => o.deletedAt !== null)).toEqual([false, true, false]);
    const bad = await t.call('GET', '/admin/v1/organizations?cursor=bm9wZQ');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('invalid_cursor');
    expect((await t.call('GET', '/admin/v1/organizations?limit=0')).statusCode).toBe(400);
  });
});

describe('members', () => {
  it('an invitation answers its link once; members list without secrets; the last owner stays', async () => {
    const res = await t.call('POST', '/admin/v1/organizations/org_l1/invitations', { email: 'boss@l1.example.com', role: 'owner' });
    expect(res.statusCode).toBe(201);
    const inv = res.json();
    expect(inv).toMatchObject({ email: 'boss@l1.example.com', role: 'owner' });
    expect(inv.url).toMatch(/^http:\/\/127\.0\.0\.1:3000\/console\/invitations\/[A-Za-z0-9_-]{32}$/);
    expect((await t.call('GET', '/admin/v1/organizations/org_l1/members')).json()).toEqual({ items: [] });
    expect((await t.call('POST', '/admin/v1/organizations/org_l1/invitations', { email: 'x@l1.example.com', role: 'root' })).statusCode).toBe(400);
    expect((await t.call('POST', '/admin/v1/organizations/org_l2/invitations', { email: 'x@l2.example.com', role: 'admin' })).statusCode).toBe(404);
    expect((await t.call('DELETE', '/admin/v1/organizations/org_l1/members/mem_nobody')).statusCode).toBe(404);
  });

  it('pending invitations are listed without their links and revoked until accepted (issue 41)', async () => {
    const made = (await t.call('POST', '/admin/v1/organizations/org_l3/invitations', { email: 'typo@l3.example.com', role: 'owner' })).json();
    const list = await t.call('GET', '/admin/v1/organizations/org_l3/invitations');
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({
      items: [
        { id: made.id, email: 'typo@l3.example.com', role: 'owner', teams: [], invitedBy: null, createdAt: expect.any(String), expiresAt: made.expiresAt },
      ],
    });
    expect(list.body).not.toContain(made.url.split('/').at(-1));
    const revoked = await t.call('DELETE', `/admin/v1/organizations/org_l3/invitations/${made.id}`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toMatchObject({ id: made.id, email: 'typo@l3.example.com', role: 'owner' });
    expect((await t.call('GET', '/admin/v1/organizations/org_l3/invitations')).json()).toEqual({ items: [] });
    const again = await t.call('DELETE', `/admin/v1/organizations/org_l3/invitations/${made.id}`);
    expect(again.statusCode).toBe(404);
    expect(again.json().error.code).toBe('not_found');
    expect((await t.call('DELETE', `/admin/v1/organizations/org_l1/invitations/${made.id}`)).statusCode).toBe(404);
    const page = await t.app.inject({ method: 'GET', url: new URL(made.url).pathname });
    expect(page.statusCode).toBe(404);
    const audit = (await t.call('GET', '/admin/v1/organizations/org_l3/audit-events')).json();
    expect(audit.items[0]).toMatchObject({ action: 'member.invitation_revoked', target: { kind: 'invitation', id: made.id }, actor: { kind: 'operator' } });
  });
});
