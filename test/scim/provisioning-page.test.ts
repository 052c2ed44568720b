import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { scimTest, type ScimTest } from './helpers.js';

/**
 * The console's Provisioning page (issue 56): owners and admins create a SCIM token (shown once, in
 * an element named "New provisioning token"), replace and revoke it, and choose where teams come
 * from; a viewer is refused and never sees the link; the audit log names the member.
 */
describe('the Provisioning page', () => {
  let t: ScimTest;
  let admin: ConsoleClient;
  beforeAll(async () => {
    t = await scimTest();
    admin = await ConsoleClient.join(t.app, t.db, t.orgId, 'it@acme.test', 'admin');
  }, 60_000);
  afterAll(() => t?.close());

  const users = (token: string) => t.app.inject({ method: 'GET', url: '/scim/v2/Users?count=0', headers: { authorization: `Bearer ${token}` } });
  const secretOf = (body: string) => /aria-label="New provisioning token">(cp_scim_[0-9A-Za-z]{40})<\/code>/.exec(body)?.[1];

  it('creates a token shown once, replaces it, revokes it, and sets where teams come from', async () => {
    const page = await admin.get('/console/provisioning');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<a href="/console/provisioning" aria-current="page">Provisioning</a>');
    expect(page.body).toContain('<code id="scim-url">http://127.0.0.1:3000/scim/v2</code>');
    expect(page.body).toContain('<td>Entra ID</td>'); // the helper's token, made by the operator

    const created = await admin.submit('/console/provisioning', '/console/provisioning/tokens', { name: 'Okta <prod>' });
    expect(created.statusCode).toBe(200);
    expect(created.body).toContain('Token Okta &lt;prod&gt; created: give it to your identity provider now');
    const secret = secretOf(created.body)!;
    expect(secret).toBeDefined();
    expect((await users(secret)).statusCode).toBe(200);
    const again = await admin.get('/console/provisioning');
    expect(again.body).not.toContain(secret);

    const [{ id }] = await t.db.query<{ id: string }>(sql('t.id', `SELECT id FROM scim_tokens WHERE org_id = $1 AND name = 'Okta <prod>'`), [t.orgId]);
    const rolled = await admin.submit('/console/provisioning', `/console/provisioning/tokens/${id}/roll`, { expiresIn: 'now' });
    expect(rolled.body).toContain('Token Okta &lt;prod&gt; replaced; the old one stops');
    const next = secretOf(rolled.body)!;
    expect(next).not.toBe(secret);
    await new Promise((r) => setTimeout(r, 2_100));
    expect((await users(secret)).statusCode).toBe(401);
    expect((await users(next)).statusCode).toBe(200);

    const [{ id: nextId }] = await t.db.query<{ id: string }>(
      sql('t.next', `SELECT id FROM scim_tokens WHERE org_id = $1 AND name = 'Okta <prod>' AND expires_at IS NULL`),
      [t.orgId],
    );
    const revoked = await admin.submit('/console/provisioning', `/console/provisioning/tokens/${nextId}/revoke`, {});
    expect(revoked.body).toContain('Token Okta &lt;prod&gt; revoked');

    const teams = await admin.submit('/console/provisioning', '/console/provisioning/teams', { teamFrom: 'department' });
    expect(teams.body).toContain('Saved: it applies from the next round.');
    expect(teams.body).toContain('<option value="department" selected>their department</option>');
    const bad = await admin.submit('/console/provisioning', '/console/provisioning/teams', { teamFrom: 'title' });
    expect(bad.statusCode).toBe(400);

    const audit = await t.db.query<{ actor_label: string; action: string }>(
      sql(
        't.audit',
        `SELECT actor_label, action FROM audit_events WHERE org_id = $1 AND action LIKE 'scim_%' AND actor_kind = 'member' ORDER BY created_at, id`,
      ),
      [t.orgId],
    );
    expect(audit.map((a) => a.action).sort()).toEqual(['scim_settings.updated', 'scim_token.created', 'scim_token.revoked', 'scim_token.rolled'].sort());
    expect(new Set(audit.map((a) => a.actor_label))).toEqual(new Set(['it@acme.test']));
  });

  it('refuses a viewer, whose navigation has no link to it', async () => {
    const viewer = await ConsoleClient.join(t.app, t.db, t.orgId, 'look@acme.test', 'viewer');
    expect((await viewer.get('/console/provisioning')).statusCode).toBe(403);
    expect((await viewer.get('/console/overview')).body).not.toContain('/console/provisioning');
  });
});
