import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildAdminApp } from '../../src/admin/app.js';
import { sql } from '../../src/db/executor.js';
import { findMember } from '../../src/db/repositories/members.js';
import { listAuditEvents, operatorActor } from '../../src/domain/audit.js';
import { openSession, resolveSession } from '../../src/domain/sessions.js';
import { addDomain, ssoPolicy, verifyDomain } from '../../src/domain/sso/settings.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CONSOLE_PASSWORD, ConsoleClient, joinConsole } from '../helpers/console-client.js';
import { startIdp, type IdpClient, type TestIdp } from '../helpers/oidc-idp.js';
import { optionsOn, SoftAuthenticator } from './passkeys-authenticator.js';

/**
 * Issue 55: requiring single sign-on reaches the sessions already open, at their next request, as
 * requiring two-factor does. A member signed in by password is at the sign-in page; a member signed
 * in through the IdP (oidc-provider, started here) stays; so does the break-glass owner's passkey
 * session, but not a password session of theirs. The same whether an owner requires it on the SSO
 * page or the operator does through the operator API (which the CLI calls).
 */
const ORIGIN = 'http://localhost:3000';
const ORG = 'org_enforced';
const DOMAIN = 'enforced.example.com';
const OP = operatorActor('192.0.2.200');
const ADMIN_TOKEN = 'test-admin-token-sso-required-0123456789';

let t: TestApp;
let admin: FastifyInstance;
let idp: TestIdp;
let ownerId: string;
let patId: string;
let glass: ConsoleClient;
let ownerJoined: ConsoleClient;
let ownerByPassword: ConsoleClient;
let pat: ConsoleClient;
let ada: ConsoleClient;

const q = <T>(name: string, text: string, params: unknown[] = []) => t.db.query<T>(sql(`t.${name}`, text), params);
const memberId = async (email: string) => (await q<{ id: string }>('member', `SELECT id FROM members WHERE org_id = $1 AND email = $2`, [ORG, email]))[0].id;
const sessionsOf = async (id: string) =>
  (await q<{ n: number }>('sessions', `SELECT count(*)::int AS n FROM console_sessions WHERE org_id = $1 AND member_id = $2`, [ORG, id]))[0].n;
const endedAudit = async (id: string) =>
  (await listAuditEvents(t.db, ORG, { limit: 100 })).items.filter((e) => e.action === 'member.sessions_ended' && e.target?.id === id).map((e) => e.details);

async function passwordSignIn(email: string, ip: string): Promise<{ c: ConsoleClient; location: string | undefined }> {
  const c = new ConsoleClient(t.app, ip);
  c.followChanges = false;
  const res = await c.submit('/console/sign-in', '/console/sign-in', { email, password: CONSOLE_PASSWORD });
  expect(res.statusCode).toBe(303);
  return { c, location: res.headers.location };
}

/** Through the IdP: the work address on the sign-in page, the IdP (signing in as `user`), back to the callback. */
async function ssoSignIn(user: string, email: string, ip: string): Promise<ConsoleClient> {
  const c = new ConsoleClient(t.app, ip);
  const posted = await c.submit('/console/sign-in', '/console/sign-in', { email, password: '' });
  expect(posted.statusCode).toBe(303);
  expect(posted.headers.location).toBe(`/console/sso/${ORG}/oidc/start?login_hint=${encodeURIComponent(email)}`);
  const start = await c.get(posted.headers.location!);
  const href = /<a href="([^"]+)" id="onward">/.exec(start.body)![1].replaceAll('&amp;', '&');
  idp.nextUser = user;
  const callback = await idp.authorize(href);
  const back = await c.get(callback.pathname + callback.search);
  expect(back.statusCode).toBe(200);
  expect(back.body).toContain('<meta http-equiv="refresh" content="0; url=/console/overview">');
  return c;
}

/** The next page each client asks for: 200, or 303 and where to. */
const nextRequest = async (c: ConsoleClient) => {
  const res = await c.get('/console/overview');
  return res.statusCode === 200 ? 200 : `${res.statusCode} ${res.headers.location}`;
};

const requireByOperator = (required: boolean) =>
  admin.inject({
    method: 'PUT',
    url: `/admin/v1/organizations/${ORG}/sso/requirement`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    payload: { required, breakGlassMemberId: required ? ownerId : null },
  });

beforeAll(async () => {
  t = await createTestApp({
    env: { PUBLIC_BASE_URL: ORIGIN, WEBHOOK_ALLOW_PRIVATE: 'true' },
    dataset: { organizations: [{ id: ORG, name: 'Enforced', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] },
  });
  admin = await buildAdminApp(t.config, { db: t.db, token: ADMIN_TOKEN });
  const climate: IdpClient = {
    clientId: 'climate-pulse',
    clientSecret: 'climate-secret-0123456789',
    redirectUri: `${ORIGIN}/console/sso/${ORG}/oidc/callback`,
  };
  idp = await startIdp({ clients: [climate] });
  idp.users.set('u-ada', { email: `ada@${DOMAIN}`, groups: ['climate-admins'] });

  // The owner: joined by invitation (a password session), signed in by password a second time, then
  // a passkey added from the first session (which so proves one).
  ownerJoined = await joinConsole(t, ORG, `owner@${DOMAIN}`, 'owner', new Date(), '192.0.2.10');
  ownerJoined.followChanges = false;
  ownerId = await memberId(`owner@${DOMAIN}`);
  const saved = await ownerJoined.submit('/console/sso', '/console/sso/oidc', {
    issuer: idp.issuer,
    clientId: climate.clientId,
    clientSecret: climate.clientSecret,
    groupsClaim: 'groups',
    groupRoles: 'climate-admins = admin',
    defaultRole: '',
    sessionMaxHours: '8',
  });
  expect(saved.statusCode).toBe(303);
  await addDomain(t.db, ORG, DOMAIN, OP, new Date());
  await verifyDomain(t.db, ORG, DOMAIN, 'operator', OP, new Date());
  // An address of the verified domain goes to the IdP: the owner's password sign-in asks for the page without SSO.
  ownerByPassword = new ConsoleClient(t.app, '192.0.2.11');
  ownerByPassword.followChanges = false;
  const page = await ownerByPassword.get('/console/sign-in?without-sso=1');
  const pw = await ownerByPassword.post('/console/sign-in', {
    _csrf: ConsoleClient.token(page.body),
    without_sso: '1',
    email: `owner@${DOMAIN}`,
    password: CONSOLE_PASSWORD,
  });
  expect(pw.statusCode).toBe(303);
  expect(pw.headers.location).toBe('/console/overview');

  const key = new SoftAuthenticator(ORIGIN);
  const started = await ownerJoined.postOnly('/console/account/passkeys', {
    _csrf: ConsoleClient.token((await ownerJoined.get('/console/account')).body),
    name: 'Safe key',
    password: CONSOLE_PASSWORD,
  });
  expect(started.statusCode).toBe(303);
  const account = (await ownerJoined.get('/console/account')).body;
  const registered = await ownerJoined.postOnly('/console/account/passkeys/new', {
    _csrf: ConsoleClient.token(account),
    name: 'Safe key',
    response: key.register(optionsOn(account, '/console/account/passkeys/new')),
  });
  expect(registered.statusCode).toBe(303);
  // And a sign-in by that passkey alone, in another browser.
  glass = new ConsoleClient(t.app, '192.0.2.12');
  const signInPage = (await glass.get('/console/sign-in')).body;
  const byKey = await glass.postOnly('/console/sign-in/passkey', {
    _csrf: ConsoleClient.token(signInPage),
    response: key.authenticate(optionsOn(signInPage, '/console/sign-in/passkey')),
  });
  expect(byKey.statusCode).toBe(303);
  expect(byKey.headers.location).toBe('/console/overview');

  // A member by password (an address of no verified domain), and one made just in time by the IdP.
  pat = await joinConsole(t, ORG, 'pat@partner.example.org', 'viewer', new Date(), '192.0.2.13');
  patId = await memberId('pat@partner.example.org');
  ada = await ssoSignIn('u-ada', `ada@${DOMAIN}`, '192.0.2.14');
}, 60_000);

afterAll(async () => {
  await idp?.close();
  await admin?.close();
  await t?.close();
});

describe('requiring SSO ends the sessions that did not come through the IdP', () => {
  it('on the SSO page: the password member is at the sign-in page at their next request; the SSO member and the passkey sessions stay', async () => {
    for (const c of [pat, ada, glass, ownerJoined, ownerByPassword]) expect(await nextRequest(c)).toBe(200);

    glass.followChanges = true;
    const set = await glass.submit('/console/sso', '/console/sso/required', { required: 'true', breakGlassMemberId: ownerId });
    expect(set.statusCode).toBe(200);
    expect(set.body).toContain('Single sign-on is required.');
    expect(await ssoPolicy(t.db, ORG)).toEqual({ required: true, breakGlassMemberId: ownerId });
    const page = (await glass.get('/console/sso')).body;
    expect(page).toContain(`<option value="${ownerId}" selected>owner@${DOMAIN}</option>`);

    // Ended in the requirement's own transaction, not only when next seen.
    expect(await sessionsOf(patId)).toBe(0);
    expect(await sessionsOf(ownerId)).toBe(2);
    expect(await nextRequest(pat)).toBe('303 /console/sign-in');
    expect(await nextRequest(ownerByPassword)).toBe('303 /console/sign-in');
    expect(await nextRequest(ada)).toBe(200);
    expect(await nextRequest(glass)).toBe(200);
    expect(await nextRequest(ownerJoined)).toBe(200);

    expect(await endedAudit(patId)).toEqual([{ ended: 1, includingCurrent: true, via: 'sso_required' }]);
    expect(await endedAudit(ownerId)).toEqual([{ ended: 1, includingCurrent: true, via: 'sso_required' }]);
    expect(await endedAudit(await memberId(`ada@${DOMAIN}`))).toEqual([]);
    const events = (await listAuditEvents(t.db, ORG, { limit: 100 })).items;
    expect(events.find((e) => e.action === 'member.sessions_ended' && e.target?.id === patId)?.actor).toMatchObject({ kind: 'member', id: ownerId });

    // The password member cannot come back by password; and when SSO is no longer required, the
    // ended session stays ended.
    const refused = await new ConsoleClient(t.app, '192.0.2.15').submit('/console/sign-in', '/console/sign-in', {
      email: 'pat@partner.example.org',
      password: CONSOLE_PASSWORD,
    });
    expect(refused.statusCode).toBe(401);
    const off = await glass.submit('/console/sso', '/console/sso/required', { required: 'false', breakGlassMemberId: '' });
    expect(off.statusCode).toBe(200);
    expect(off.body).toContain('Single sign-on is not required');
    expect(await nextRequest(pat)).toBe('303 /console/sign-in');
    expect(await nextRequest(ownerByPassword)).toBe('303 /console/sign-in');
    glass.followChanges = false;
  });

  it('through the operator API (as the CLI calls it): the same', async () => {
    const again = await passwordSignIn('pat@partner.example.org', '192.0.2.16');
    expect(again.location).toBe('/console/overview');
    pat = again.c;
    expect(await nextRequest(pat)).toBe(200);
    const before = (await endedAudit(patId)).length;

    const on = await requireByOperator(true);
    expect(on.statusCode).toBe(200);
    expect(on.json()).toMatchObject({ required: true, breakGlassMemberId: ownerId });
    expect(await sessionsOf(patId)).toBe(0);
    expect(await nextRequest(pat)).toBe('303 /console/sign-in');
    expect(await nextRequest(ada)).toBe(200);
    expect(await nextRequest(glass)).toBe(200);
    const audit = (await listAuditEvents(t.db, ORG, { limit: 100 })).items.filter((e) => e.action === 'member.sessions_ended' && e.target?.id === patId);
    expect(audit).toHaveLength(before + 1);
    expect(audit[0]).toMatchObject({ actor: { kind: 'operator' }, details: { ended: 1, includingCurrent: true, via: 'sso_required' } });
  });

  it('a password session opened while the requirement committed ends at its first request; the break-glass owner at the passkey step is kept', async () => {
    expect((await ssoPolicy(t.db, ORG)).required).toBe(true);
    // A sign-in that checked the policy just before the requirement committed, opening its session just after.
    const m = await findMember(t.db, ORG, patId);
    const late = await openSession(t.db, m!, 'active', '192.0.2.17', new Date());
    expect(await sessionsOf(patId)).toBe(1);
    expect(await resolveSession(t.db, late.cookie, new Date())).toBeNull();
    expect(await sessionsOf(patId)).toBe(0);

    // The break-glass owner's password leads to the passkey step, which stays open to them.
    const c = new ConsoleClient(t.app, '192.0.2.18');
    c.followChanges = false;
    const page = await c.get('/console/sign-in?without-sso=1');
    const pw = await c.post('/console/sign-in', {
      _csrf: ConsoleClient.token(page.body),
      without_sso: '1',
      email: `owner@${DOMAIN}`,
      password: CONSOLE_PASSWORD,
    });
    expect(pw.statusCode).toBe(303);
    expect(pw.headers.location).toBe('/console/two-factor');
    expect((await c.get('/console/two-factor')).statusCode).toBe(200);
    expect(await nextRequest(c)).toBe('303 /console/two-factor');

    const off = await requireByOperator(false);
    expect(off.statusCode).toBe(200);
  });
});
