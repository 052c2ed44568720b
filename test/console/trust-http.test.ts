import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inviteMember } from '../../src/domain/members.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createWebhookEndpoint } from '../../src/domain/webhook-endpoints.js';
import { shownError } from '../../src/console/pages/webhooks/view.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CONSOLE_PASSWORD, ConsoleClient, joinConsole } from '../helpers/console-client.js';

/**
 * Issue 41 over HTTP, without a browser: what broke in the console under attack, replayed as held.
 * Each describe names the finding.
 */
const T0 = new Date('2026-11-20T12:00:00.000Z');
const OP = operatorActor('192.0.2.200');

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    now: T0,
    dataset: {
      organizations: ['org_one', 'org_two', 'org_three', 'org_four'].map((id) => ({ id, name: id, plan: 'business', createdAt: T0.toISOString() })),
    },
  });
});
afterAll(() => t?.close());

const join = (orgId: string, email: string, role: 'owner' | 'admin' | 'viewer', ip?: string) => joinConsole(t, orgId, email, role, T0, ip);
const tokenOf = (body: string) => /\/console\/invitations\/([A-Za-z0-9_-]{32})/.exec(body)?.[1];

describe('finding 1: a removed owner comes back', () => {
  it('the link an owner kept dies when the owner is removed; an owner revokes an invitation with its button', async () => {
    const first = await join('org_one', 'first@one.example.com', 'owner');
    const leaving = await join('org_one', 'leaving@one.example.com', 'owner');
    const made = await leaving.submit('/console/members', '/console/members/invite', { email: 'private@elsewhere.example', role: 'owner' });
    const kept = tokenOf((await leaving.get(made.headers.location ?? '/console/members')).body + made.body)!;
    expect(kept).toBeDefined();
    const members = (await first.get('/console/members')).body;
    const leavingId = /action="\/console\/members\/(mem_[^/"]+)\/remove" data-confirm="Remove leaving@/.exec(members)![1];
    const removed = await first.submit('/console/members', `/console/members/${leavingId}/remove`, {});
    expect([200, 303]).toContain(removed.statusCode);
    const page = await new ConsoleClient(t.app, '192.0.2.99').get(`/console/invitations/${kept}`);
    expect(page.statusCode).toBe(404);
    const back = await new ConsoleClient(t.app, '192.0.2.99').post(`/console/invitations/${kept}`, { _csrf: 'x'.repeat(32), password: CONSOLE_PASSWORD });
    expect([403, 404, 400]).toContain(back.statusCode);
    expect(
      (
        await t.db.query<{ n: number }>(
          { name: 't.m', text: `SELECT count(*)::int AS n FROM members WHERE lower(email) = 'private@elsewhere.example'` } as never,
          [],
        )
      )[0].n,
    ).toBe(0);

    // The button: a pending invitation, revoked; its link then opens nothing.
    const inv = await inviteMember(t.db, 'org_one', { email: 'typo@one.example.con', role: 'owner' }, OP, T0);
    const list = (await first.get('/console/members')).body;
    expect(list).toContain('aria-label="Revoke invitation of typo@one.example.con"');
    const revoked = await first.submit('/console/members', `/console/members/invitations/${encodeURIComponent(inv.id)}/revoke`, {});
    expect([200, 303]).toContain(revoked.statusCode);
    expect((await first.get('/console/members')).body).not.toContain('typo@one.example.con');
    expect((await new ConsoleClient(t.app, '192.0.2.98').get(`/console/invitations/${inv.token}`)).statusCode).toBe(404);
  });
});

describe('finding 3: requiring two-factor reaches open sessions', () => {
  it('a member signed in before the requirement lands on enrollment at the next request, keys included; the owner too; enrollment has Sign out', async () => {
    const owner = await join('org_two', 'owner@two.example.com', 'owner');
    const admin = await join('org_two', 'admin@two.example.com', 'admin');
    expect((await admin.get('/console/keys')).statusCode).toBe(200);
    const on = await owner.submit('/console/members', '/console/members/two-factor', { required: 'true' });
    expect([200, 303]).toContain(on.statusCode);
    const keys = await admin.get('/console/keys');
    expect(keys.statusCode).toBe(303);
    expect(keys.headers.location).toBe('/console/two-factor/enroll');
    const token = ConsoleClient.token((await admin.get('/console/two-factor/enroll')).body);
    const create = await admin.post('/console/keys', { _csrf: token, name: 'sneaky', scope: 'read_write' });
    expect(create.statusCode).toBe(303);
    expect(create.headers.location).toBe('/console/two-factor/enroll');
    expect((await t.db.query<{ n: number }>({ name: 't.k', text: `SELECT count(*)::int AS n FROM api_keys WHERE org_id = 'org_two'` } as never, []))[0].n).toBe(
      0,
    );
    const ownerPage = await owner.get('/console/members');
    expect(ownerPage.statusCode).toBe(303);
    expect(ownerPage.headers.location).toBe('/console/two-factor/enroll');
    const enroll = await admin.get('/console/two-factor/enroll');
    expect(enroll.statusCode).toBe(200);
    expect(enroll.body).toMatch(/<form method="post" action="\/console\/sign-out"[^>]*>.*<button type="submit"[^>]*>Sign out<\/button><\/form>/s);
    const out = await admin.post('/console/sign-out', { _csrf: ConsoleClient.token(enroll.body) });
    expect(out.statusCode).toBe(303);
    expect((await admin.get('/console/keys')).headers.location).toBe('/console/sign-in');
  });
});

describe('finding 5 without SMTP, and the smaller ones: links, HSTS', () => {
  it('without SMTP the link is shown to the inviting owner, marked unproven, built from the listener and not from the Host header', async () => {
    const owner = await join('org_three', 'owner@three.example.com', 'owner');
    const res = await owner.submit('/console/members', '/console/members/invite', { email: 'new@three.example.com', role: 'viewer' }, { host: 'evil.example' });
    const page = res.statusCode === 303 ? (await owner.get(res.headers.location!)).body : res.body;
    expect(page).toMatch(/<code class="secret" id="invitation-link">http:\/\/127\.0\.0\.1:3000\/console\/invitations\/[A-Za-z0-9_-]{32}<\/code>/);
    expect(page).toContain('<strong>The address is unproven:</strong>');
    expect(page).not.toContain('evil.example');
    expect(res.headers['strict-transport-security']).toBeUndefined();
  });

  it('behind https (PUBLIC_BASE_URL) every console answer carries Strict-Transport-Security, and links use that address', async () => {
    const https = await createTestApp({
      now: T0,
      env: { PUBLIC_BASE_URL: 'https://console.example.com' },
      dataset: { organizations: [{ id: 'org_s', name: 'S', plan: 'business', createdAt: T0.toISOString() }] },
    });
    try {
      const signIn = await https.app.inject({ method: 'GET', url: '/console/sign-in', headers: { host: 'evil.example' } });
      expect(signIn.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
      const owner = await joinConsole(https, 'org_s', 'owner@s.example.com', 'owner', T0);
      const made = await owner.submit('/console/members', '/console/members/invite', { email: 'x@s.example.com', role: 'viewer' }, { host: 'evil.example' });
      const page = made.statusCode === 303 ? (await owner.get(made.headers.location!)).body : made.body;
      expect(page).toMatch(/https:\/\/console\.example\.com\/console\/invitations\/[A-Za-z0-9_-]{32}/);
    } finally {
      await https.close();
    }
  });
});

describe('finding 7: ids in form actions, two-factor made by the server', () => {
  it("an alert id that climbs out of its path is URL-encoded in its form's action: Mark read marks that alert, nothing else", async () => {
    const owner = await join('org_four', 'owner@four.example.com', 'owner');
    const id = 'x/../../account/password';
    await t.db.query(
      { name: 't.alert', text: `INSERT INTO alerts (org_id, id, type, message, created_at) VALUES ('org_four', $1, 'low_score', 'Hostile id', $2)` } as never,
      [id, T0.toISOString()],
    );
    const page = (await owner.get('/console/alerts')).body;
    expect(page).toContain(`action="/console/alerts/${encodeURIComponent(id)}/read"`);
    const res = await owner.submit('/console/alerts', `/console/alerts/${encodeURIComponent(id)}/read`, {});
    expect([200, 303]).toContain(res.statusCode);
    const [row] = await t.db.query<{ read_at: Date | null }>(
      { name: 't.read', text: `SELECT read_at FROM alerts WHERE org_id = 'org_four' AND id = $1` } as never,
      [id],
    );
    expect(row.read_at).not.toBeNull();
  });

  it('the enrollment page shows a server-made secret as a QR code (an image data: URL) and as text; the form carries no secret', async () => {
    const owner = await join('org_four', 'qr@four.example.com', 'admin');
    const page = (await owner.get('/console/two-factor/enroll')).body;
    expect(page).toMatch(/<img class="qr" src="data:image\/png;base64,[A-Za-z0-9+/=]+" width="200" height="200" alt="QR code of your two-factor setup key">/);
    expect(page).toMatch(/<code class="secret" id="totp-secret">([A-Z2-7]{4} ){7}[A-Z2-7]{4}<\/code>/);
    expect(page).not.toContain('name="secret"');
    // Another view, another secret: each is shown once.
    const again = (await owner.get('/console/two-factor/enroll')).body;
    expect(/id="totp-secret">([^<]+)</.exec(again)![1]).not.toBe(/id="totp-secret">([^<]+)</.exec(page)![1]);
  });
});

describe('finding 7: post, redirect, get', () => {
  it('a change answers 303 to its page, which shows the new key once; reloading that page repeats nothing and shows it no more', async () => {
    const admin = await join('org_four', 'prg@four.example.com', 'admin');
    admin.followChanges = false;
    const token = ConsoleClient.token((await admin.get('/console/keys')).body);
    const made = await admin.post('/console/keys', { _csrf: token, name: 'once', scope: 'read' });
    expect(made.statusCode).toBe(303);
    expect(made.headers.location).toBe('/console/keys');
    expect(made.body).not.toContain('cp_');
    const shown = await admin.get('/console/keys');
    const key = /aria-label="New API key">([^<]+)</.exec(shown.body)?.[1];
    expect(key).toMatch(/^cp_/);
    const reload = await admin.get('/console/keys');
    expect(reload.body).not.toContain(key!);
    expect(reload.body).not.toContain('New API key');
    const [{ n }] = await t.db.query<{ n: number }>(
      { name: 't.keys4', text: `SELECT count(*)::int AS n FROM api_keys WHERE org_id = 'org_four' AND name = 'once'` } as never,
      [],
    );
    expect(n).toBe(1);
    // The sealed message is not readable from the database: it holds the cookie's hash, not the key.
    const made2 = await admin.post('/console/keys', { _csrf: token, name: 'twice', scope: 'read' });
    expect(made2.statusCode).toBe(303);
    const [{ flash }] = await t.db.query<{ flash: Buffer }>(
      { name: 't.flash', text: `SELECT flash FROM console_sessions WHERE org_id = 'org_four' AND flash IS NOT NULL` } as never,
      [],
    );
    expect(flash.toString('latin1')).not.toContain('cp_');
    // A refused change is not redirected: its page again, with the refusal and its status.
    const refused = await admin.post('/console/keys', { _csrf: token, name: '', scope: 'read' });
    expect(refused.statusCode).toBe(400);
  });
});

describe('finding 7: what a viewer sees', () => {
  it("a viewer's audit log names no member's email or address, and the webhooks page shows an endpoint's host only", async () => {
    const owner = await join('org_three', 'boss@three.example.com', 'owner', '198.51.100.33');
    const viewer = await join('org_three', 'watcher@three.example.com', 'viewer');
    await owner.submit('/console/members', '/console/members/invite', { email: 'private.person@three.example.com', role: 'admin' });
    await createWebhookEndpoint(
      t.db,
      'org_three',
      { url: 'https://hooks.example.com/path/with-token?secret=abc', eventTypes: null, allowPrivate: false },
      OP,
      T0,
    );
    const log = (await viewer.get('/console/audit')).body;
    expect(log).toContain('<td>Member invited</td>');
    for (const hidden of ['boss@three.example.com', 'private.person@three.example.com', '198.51.100.33', '192.0.2.10']) expect(log).not.toContain(hidden);
    const ownerLog = (await owner.get('/console/audit')).body;
    expect(ownerLog).toContain('private.person@three.example.com');
    const hooks = (await viewer.get('/console/webhooks')).body;
    expect(hooks).toContain('<code>hooks.example.com</code>');
    expect(hooks).not.toContain('with-token');
    expect((await owner.get('/console/webhooks')).body).toContain('https://hooks.example.com/path/with-token?secret=abc');
  });
});

describe('finding 7: test-event errors', () => {
  it('an attempt refused for its address names the kind of address, not the host name behind the resolver', () => {
    expect(shownError('refused: db.corp.internal resolves to a private address')).toBe("refused: the endpoint's host resolves to a private address");
    expect(shownError('network error: ECONNREFUSED')).toBe('network error: ECONNREFUSED');
  });
});
