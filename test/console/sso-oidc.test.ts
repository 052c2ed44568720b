import { createServer, type AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAuditEvents, operatorActor } from '../../src/domain/audit.js';
import { finishOidcSignIn, SSO_REFUSED, SSO_NO_ROLE } from '../../src/domain/sso/oidc.js';
import { addDomain, DOMAIN_TAKEN, SSO_REQUIRED_FOR_PASSWORD, setSsoRequired, TXT_NOT_FOUND, verifyDomain, ssoPolicy } from '../../src/domain/sso/settings.js';
import { BREAK_GLASS_NEEDS_PASSKEY, SIGN_IN_REFUSED } from '../../src/domain/sessions.js';
import { escapeHtml } from '../../src/http/html.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CONSOLE_PASSWORD, ConsoleClient, joinConsole } from '../helpers/console-client.js';
import { newSigningKey, startIdp, type IdpClient, type TestIdp } from '../helpers/oidc-idp.js';

/**
 * Issue 55, OpenID Connect, against a real IdP (oidc-provider) started here: sign-in end to end with
 * the member made just in time and the role mapped from the groups claim, later sign-ins updating
 * it; a wrong audience, an expired token, a replayed state, a changed nonce and a token from another
 * issuer each refused; back-channel logout ending the session; enforced SSO refusing a password.
 */
const OP = operatorActor('192.0.2.200');
const ORG = 'org_sso';
const DOMAIN = 'sso.example.com';
let offsetMs = 0;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

let t: TestApp;
let base: string;
let idp: TestIdp;
let otherIssuer: TestIdp;
let climate: IdpClient;
let other: IdpClient;
let owner: ConsoleClient;
let ownerId: string;

const q = async <T>(text: string, params: unknown[] = []) => t.db.query<T>({ name: `t.${text.length}.${text.slice(0, 20)}`, text } as never, params);

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await createTestApp({
    clock: () => new Date(Date.now() + offsetMs),
    env: { PUBLIC_BASE_URL: base, WEBHOOK_ALLOW_PRIVATE: 'true' },
    dataset: { organizations: [ORG, 'org_rival'].map((id) => ({ id, name: id, plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' })) },
  });
  await t.app.listen({ host: '127.0.0.1', port });
  const redirectUri = `${base}/console/sso/${ORG}/oidc/callback`;
  climate = {
    clientId: 'climate-pulse',
    clientSecret: 'climate-secret-0123456789',
    redirectUri,
    backchannelLogoutUri: `${base}/console/sso/${ORG}/oidc/backchannel-logout`,
  };
  other = { clientId: 'another-app', clientSecret: 'another-secret-0123456789', redirectUri };
  const key = newSigningKey();
  idp = await startIdp({ clients: [climate, other], key });
  // Another issuer that signs with the very same key: only the issuer check can tell its tokens apart.
  otherIssuer = await startIdp({ clients: [climate], key });
  idp.users.set('u-ada', { email: `ada@${DOMAIN}`, groups: ['climate-admins', 'staff'] });
  idp.users.set('u-bob', { email: `bob@${DOMAIN}`, groups: ['staff'] });
  idp.users.set('u-eve', { email: 'eve@elsewhere.example.org', groups: ['climate-admins'] });
  otherIssuer.users.set('u-ada', { email: `ada@${DOMAIN}`, groups: ['climate-admins'] });

  owner = await joinConsole(t, ORG, `owner@${DOMAIN}`, 'owner', new Date());
  ownerId = (await q<{ id: string }>(`SELECT id FROM members WHERE org_id = $1 AND role = 'owner'`, [ORG]))[0].id;
  const saved = await owner.submit('/console/sso', '/console/sso/oidc', {
    issuer: idp.issuer,
    clientId: climate.clientId,
    clientSecret: climate.clientSecret,
    groupsClaim: 'groups',
    groupRoles: 'climate-admins = admin\nclimate-viewers = viewer',
    defaultRole: '',
    sessionMaxHours: '8',
  });
  expect(saved.statusCode).toBe(200);
  expect(saved.body).toContain('The OpenID Connect connection is saved.');
  await addDomain(t.db, ORG, DOMAIN, OP, new Date());
  await verifyDomain(t.db, ORG, DOMAIN, 'operator', OP, new Date());
}, 60_000);

afterAll(async () => {
  await idp?.close();
  await otherIssuer?.close();
  await t?.close();
});

/** The sign-in page with the work address only, up to the IdP's URL; the browser's cookie of the sign-in kept in `c`. */
async function leaveForIdp(c: ConsoleClient, email: string): Promise<URL> {
  const posted = await c.submit('/console/sign-in', '/console/sign-in', { email, password: '' });
  expect(posted.statusCode).toBe(303);
  expect(posted.headers.location).toBe(`/console/sso/${ORG}/oidc/start?login_hint=${encodeURIComponent(email)}`);
  const start = await c.get(posted.headers.location!);
  expect(start.statusCode).toBe(200);
  expect(String(start.headers['set-cookie'])).toMatch(/^cp_sso=[\w-]{43}; Path=\/console\/sso; HttpOnly; SameSite=Lax; Max-Age=600$/);
  const href = /<a href="([^"]+)" id="onward">/.exec(start.body)![1].replaceAll('&amp;', '&');
  expect(start.body).toContain(`<meta http-equiv="refresh" content="0; url=${href.replaceAll('&', '&amp;')}">`);
  const url = new URL(href);
  expect(url.origin).toBe(idp.issuer);
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  expect(url.searchParams.get('client_id')).toBe(climate.clientId);
  expect(url.searchParams.get('redirect_uri')).toBe(climate.redirectUri);
  expect(url.searchParams.get('login_hint')).toBe(email);
  for (const p of ['state', 'nonce', 'code_challenge']) expect(url.searchParams.get(p)?.length).toBeGreaterThanOrEqual(22);
  return url;
}

/** Back from the IdP to the callback, as the browser would. */
async function backFromIdp(c: ConsoleClient, callback: URL) {
  expect(callback.origin + callback.pathname).toBe(climate.redirectUri);
  return c.get(callback.pathname + callback.search);
}

async function signInWithIdp(user: string, email: string) {
  const c = new ConsoleClient(t.app, '192.0.2.50');
  idp.nextUser = user;
  const back = await backFromIdp(c, await idp.authorize((await leaveForIdp(c, email)).href));
  return { c, back };
}

const sessionsOf = async (email: string) =>
  (
    await q<{ n: number }>(
      `SELECT count(*)::int AS n FROM console_sessions s JOIN members m ON m.org_id = s.org_id AND m.id = s.member_id WHERE s.org_id = $1 AND m.email = $2`,
      [ORG, email],
    )
  )[0].n;

describe('sign-in through the IdP', () => {
  it('makes the member just in time with the mapped role, opens a session linked to the IdP session, audited; a later sign-in updates the role', async () => {
    const { c, back } = await signInWithIdp('u-ada', `ada@${DOMAIN}`);
    expect(back.statusCode).toBe(200);
    expect(back.body).toContain('<meta http-equiv="refresh" content="0; url=/console/overview">');
    expect(String(back.headers['set-cookie'])).toMatch(/cp_session=[\w-]{43}; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=604800/);
    expect(String(back.headers['set-cookie'])).toMatch(/cp_sso=; Path=\/console\/sso; HttpOnly; SameSite=Lax; Max-Age=0/);
    const overview = await c.get('/console/overview');
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain(`ada@${DOMAIN}`);

    const [m] = await q<{ id: string; role: string; sso_subject: string }>(`SELECT id, role, sso_subject FROM members WHERE org_id = $1 AND email = $2`, [
      ORG,
      `ada@${DOMAIN}`,
    ]);
    expect(m.role).toBe('admin');
    expect(m.sso_subject).toBe('u-ada');
    const [s] = await q<{ sso_protocol: string; sso_subject: string; sso_session: string | null; hours: number; stage: string }>(
      `SELECT sso_protocol, sso_subject, sso_session, stage, round(extract(epoch FROM ends_at - created_at) / 3600)::int AS hours FROM console_sessions WHERE org_id = $1 AND member_id = $2`,
      [ORG, m.id],
    );
    expect(s).toMatchObject({ sso_protocol: 'oidc', sso_subject: 'u-ada', stage: 'active', hours: 8 });
    expect(s.sso_session).toMatch(/^[\w-]{10,}$/);
    const events = (await listAuditEvents(t.db, ORG, { limit: 50 })).items.filter((e) => e.target?.id === m.id);
    expect(events.map((e) => [e.action, e.details])).toEqual(
      expect.arrayContaining([
        ['member.joined', { email: `ada@${DOMAIN}`, role: 'admin', via: 'oidc' }],
        ['member.signed_in', { twoFactor: false, via: 'oidc' }],
      ]),
    );
    // Password sign-in for the new member: there is none (its password is random and never shown).
    const pw = await new ConsoleClient(t.app, '192.0.2.51').submit('/console/sign-in', '/console/sign-in', {
      email: `ada@${DOMAIN}`,
      password: CONSOLE_PASSWORD,
    });
    expect(pw.statusCode).toBe(303); // an address of a verified domain goes to the IdP, whatever was typed
    expect(pw.headers.location).toContain(`/console/sso/${ORG}/oidc/start`);

    // The IdP moves ada to the viewers: the next sign-in says so.
    idp.users.set('u-ada', { email: `ada@${DOMAIN}`, groups: ['climate-viewers'] });
    const again = await signInWithIdp('u-ada', `ada@${DOMAIN}`);
    expect(again.back.statusCode).toBe(200);
    expect((await q<{ role: string }>(`SELECT role FROM members WHERE org_id = $1 AND id = $2`, [ORG, m.id]))[0].role).toBe('viewer');
    const changed = (await listAuditEvents(t.db, ORG, { limit: 50 })).items.find((e) => e.action === 'member.role_changed' && e.target?.id === m.id);
    expect(changed?.details).toEqual({ email: `ada@${DOMAIN}`, from: 'admin', to: 'viewer', via: 'oidc' });
    idp.users.set('u-ada', { email: `ada@${DOMAIN}`, groups: ['climate-admins', 'staff'] });
  });

  it('refuses a person in no mapped group (no default role), and an address outside the verified domains', async () => {
    const bob = await signInWithIdp('u-bob', `bob@${DOMAIN}`);
    expect(bob.back.statusCode).toBe(400);
    expect(bob.back.body).toContain(SSO_NO_ROLE.replaceAll("'", '&#39;'));
    expect(await sessionsOf(`bob@${DOMAIN}`)).toBe(0);
    const eve = await signInWithIdp('u-eve', `eve@${DOMAIN}`);
    expect(eve.back.statusCode).toBe(400);
    expect((await q<{ n: number }>(`SELECT count(*)::int AS n FROM members WHERE email LIKE 'eve@%'`))[0].n).toBe(0);
  });
});

describe('what is refused', () => {
  const refusedOverHttp = async (res: { statusCode: number; body: string; headers: Record<string, unknown> }, before: number) => {
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain(SSO_REFUSED.replaceAll("'", '&#39;'));
    expect(String(res.headers['set-cookie'] ?? '')).not.toContain('cp_session=');
    expect(await sessionsOf(`ada@${DOMAIN}`)).toBe(before);
  };
  /** The callback handed to the domain operation the page calls, to see which check refused it (the page says the same words whatever failed). */
  const refusedBecause = async (c: ConsoleClient, callback: URL, reason: string, detail?: RegExp) => {
    const before = await sessionsOf(`ada@${DOMAIN}`);
    const done = finishOidcSignIn(t.db, ORG, {
      baseUrl: base,
      query: callback.search.slice(1),
      browserCookie: c.cookies.get('cp_sso'),
      address: '192.0.2.99',
      rules: { allowPrivate: true },
      now: new Date(Date.now() + offsetMs),
    });
    await expect(done).rejects.toMatchObject({ reason, message: SSO_REFUSED, ...(detail ? { detail: expect.stringMatching(detail) } : {}) });
    expect(await sessionsOf(`ada@${DOMAIN}`)).toBe(before);
  };

  it('a replayed state: the callback used once opens nothing the second time', async () => {
    const c = new ConsoleClient(t.app, '192.0.2.52');
    idp.nextUser = 'u-ada';
    const callback = await idp.authorize((await leaveForIdp(c, `ada@${DOMAIN}`)).href);
    expect((await backFromIdp(c, callback)).statusCode).toBe(200);
    const before = await sessionsOf(`ada@${DOMAIN}`);
    await refusedOverHttp(await backFromIdp(c, callback), before);
    // Nor from another browser that got hold of the URL.
    await refusedOverHttp(await backFromIdp(new ConsoleClient(t.app, '192.0.2.53'), callback), before);
    await refusedBecause(c, callback, 'unknown_state');
  });

  it('a callback in another browser than the one that left (login CSRF): refused, and the state is spent', async () => {
    const c = new ConsoleClient(t.app, '192.0.2.54');
    idp.nextUser = 'u-ada';
    const callback = await idp.authorize((await leaveForIdp(c, `ada@${DOMAIN}`)).href);
    const before = await sessionsOf(`ada@${DOMAIN}`);
    await refusedOverHttp(await backFromIdp(new ConsoleClient(t.app, '192.0.2.55'), callback), before);
    await refusedOverHttp(await backFromIdp(c, callback), before);
  });

  it('a changed nonce: the ID token carries another nonce than the sign-in made', async () => {
    const c = new ConsoleClient(t.app, '192.0.2.56');
    const url = await leaveForIdp(c, `ada@${DOMAIN}`);
    url.searchParams.set('nonce', 'a-nonce-the-attacker-chose-0123456789');
    idp.nextUser = 'u-ada';
    const callback = await idp.authorize(url.href);
    await refusedBecause(c, callback, 'id_token_refused', /"nonce"/);
  });

  it('a wrong audience: an ID token the same IdP signed for another application', async () => {
    const c = new ConsoleClient(t.app, '192.0.2.57');
    const url = await leaveForIdp(c, `ada@${DOMAIN}`);
    idp.nextUser = 'u-ada';
    const foreign = await idp.idTokenFor(other, url.searchParams.get('nonce')!);
    expect(JSON.parse(Buffer.from(foreign.split('.')[1], 'base64url').toString()).aud).toBe(other.clientId);
    const callback = await idp.authorize(url.href);
    idp.onTokenAnswer = (body) => ({ ...body, id_token: foreign });
    try {
      await refusedBecause(c, callback, 'id_token_refused', /"aud"/);
    } finally {
      idp.onTokenAnswer = null;
    }
  });

  it('a token from another issuer, signed with the very same key', async () => {
    const c = new ConsoleClient(t.app, '192.0.2.58');
    const url = await leaveForIdp(c, `ada@${DOMAIN}`);
    otherIssuer.nextUser = 'u-ada';
    const foreign = await otherIssuer.idTokenFor(climate, url.searchParams.get('nonce')!);
    const claims = JSON.parse(Buffer.from(foreign.split('.')[1], 'base64url').toString());
    expect([claims.iss, claims.aud]).toEqual([otherIssuer.issuer, climate.clientId]);
    idp.nextUser = 'u-ada';
    const callback = await idp.authorize(url.href);
    idp.onTokenAnswer = (body) => ({ ...body, id_token: foreign });
    try {
      await refusedBecause(c, callback, 'id_token_refused', /"iss"/);
    } finally {
      idp.onTokenAnswer = null;
    }
  });

  it('an ID token signed by a key the IdP does not publish', async () => {
    const c = new ConsoleClient(t.app, '192.0.2.62');
    const url = await leaveForIdp(c, `ada@${DOMAIN}`);
    idp.nextUser = 'u-ada';
    const real = await idp.idTokenFor(climate, url.searchParams.get('nonce')!);
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const [h] = real.split('.');
    const forged = await new SignJWT(JSON.parse(Buffer.from(real.split('.')[1], 'base64url').toString()))
      .setProtectedHeader(JSON.parse(Buffer.from(h, 'base64url').toString()))
      .sign(privateKey);
    const callback = await idp.authorize(url.href);
    idp.onTokenAnswer = (body) => ({ ...body, id_token: forged });
    try {
      await refusedBecause(c, callback, 'id_token_refused', /signature/i);
    } finally {
      idp.onTokenAnswer = null;
    }
  });

  it('an expired ID token: the server’s clock two hours past the token’s hour of life', async () => {
    offsetMs = 2 * 3_600_000;
    try {
      const c = new ConsoleClient(t.app, '192.0.2.59');
      const url = await leaveForIdp(c, `ada@${DOMAIN}`);
      idp.nextUser = 'u-ada';
      const callback = await idp.authorize(url.href);
      await refusedBecause(c, callback, 'id_token_refused', /"exp"/);
    } finally {
      offsetMs = 0;
    }
  });

  it('an expired sign-in: back from the IdP after ten minutes', async () => {
    const c = new ConsoleClient(t.app, '192.0.2.63');
    const url = await leaveForIdp(c, `ada@${DOMAIN}`);
    idp.nextUser = 'u-ada';
    const callback = await idp.authorize(url.href);
    offsetMs = 10 * 60_000;
    try {
      await refusedBecause(c, callback, 'expired_sign_in');
    } finally {
      offsetMs = 0;
    }
  });
});

describe("the organization's longest session", () => {
  it('a session from the IdP ends at the organization maximum (8 hours here), though used within the idle limit', async () => {
    const { c, back } = await signInWithIdp('u-ada', `ada@${DOMAIN}`);
    expect(back.statusCode).toBe(200);
    try {
      offsetMs = 7 * 3_600_000 + 59 * 60_000;
      expect((await c.get('/console/overview')).statusCode).toBe(200);
      offsetMs = 8 * 3_600_000;
      const after = await c.get('/console/overview');
      expect(after.statusCode).toBe(303);
      expect(after.headers.location).toBe('/console/sign-in');
    } finally {
      offsetMs = 0;
    }
  });
});

describe('back-channel logout', () => {
  it("the IdP's logout token ends the session at once; a token signed by another key or for another audience ends nothing", async () => {
    const { c, back } = await signInWithIdp('u-ada', `ada@${DOMAIN}`);
    expect(back.statusCode).toBe(200);
    expect((await c.get('/console/overview')).statusCode).toBe(200);
    const mine = (
      await q<{ sso_session: string; member_id: string }>(
        `SELECT sso_session, member_id FROM console_sessions WHERE org_id = $1 ORDER BY created_at DESC LIMIT 1`,
        [ORG],
      )
    )[0];

    // A forged token: right claims, another key.
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forged = await new SignJWT({ sid: mine.sso_session, events: { 'http://schemas.openid.net/event/backchannel-logout': {} } })
      .setProtectedHeader({ alg: 'RS256', typ: 'logout+jwt' })
      .setIssuer(idp.issuer)
      .setAudience(climate.clientId)
      .setSubject('u-ada')
      .setIssuedAt()
      .setJti('forged-1')
      .sign(privateKey);
    const refused = await fetch(`${base}/console/sso/${ORG}/oidc/backchannel-logout`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ logout_token: forged }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
    expect((await c.get('/console/overview')).statusCode).toBe(200);

    // The IdP's own: signed with its key, POSTed by the IdP to the URI registered for the client.
    await idp.logout(climate.clientId, 'u-ada', mine.sso_session);
    const after = await c.get('/console/overview');
    expect(after.statusCode).toBe(303);
    expect(after.headers.location).toBe('/console/sign-in');
    const ended = (await listAuditEvents(t.db, ORG, { limit: 50 })).items.find((e) => e.action === 'member.sessions_ended' && e.target?.id === mine.member_id);
    expect(ended?.details).toEqual({ ended: 1, includingCurrent: true, via: 'oidc_backchannel_logout' });
  });
});

describe('domains', () => {
  it('a TXT record verifies a domain; a missing one does not; a domain verified by one organization is refused to another', async () => {
    const d = await addDomain(t.db, 'org_rival', 'rival.example.net', OP, new Date());
    expect(d.txtRecordName).toBe('_climate-pulse.rival.example.net');
    await expect(verifyDomain(t.db, 'org_rival', 'rival.example.net', 'dns', OP, new Date(), async () => [['something else']])).rejects.toThrow(TXT_NOT_FOUND);
    const v = await verifyDomain(t.db, 'org_rival', 'rival.example.net', 'dns', OP, new Date(), async (name) =>
      name === d.txtRecordName ? [[d.txtRecordValue.slice(0, 10), d.txtRecordValue.slice(10)]] : [],
    );
    expect(v.verifiedBy).toBe('dns');
    await addDomain(t.db, 'org_rival', DOMAIN, OP, new Date());
    await expect(verifyDomain(t.db, 'org_rival', DOMAIN, 'operator', OP, new Date())).rejects.toThrow(DOMAIN_TAKEN);
  });
});

describe('enforced SSO', () => {
  it('refuses a password sign-in of a member, in plain words after a right password only; the break-glass owner keeps theirs; shown and audited', async () => {
    const admin = await joinConsole(t, ORG, 'admin@partner.example.org', 'admin', new Date());
    expect((await admin.get('/console/overview')).statusCode).toBe(200);
    const other = await joinConsole(t, ORG, `second-owner@${DOMAIN}`, 'owner', new Date());
    expect((await other.get('/console/overview')).statusCode).toBe(200);
    const set = await owner.submit('/console/sso', '/console/sso/required', { required: 'true', breakGlassMemberId: ownerId });
    // Requiring SSO ends every session that did not come through the IdP but the break-glass owner's
    // passkey sessions: this owner's password session too (test/console/sso-required-sessions.test.ts).
    expect(set.statusCode).toBe(303);
    expect(set.headers.location).toBe('/console/sign-in');
    expect((await admin.get('/console/overview')).headers.location).toBe('/console/sign-in');
    expect(await ssoPolicy(t.db, ORG)).toEqual({ required: true, breakGlassMemberId: ownerId });

    const wrong = await new ConsoleClient(t.app, '192.0.2.60').submit('/console/sign-in', '/console/sign-in', {
      email: 'admin@partner.example.org',
      password: 'not the password at all',
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain(SIGN_IN_REFUSED);
    const right = await new ConsoleClient(t.app, '192.0.2.60').submit('/console/sign-in', '/console/sign-in', {
      email: 'admin@partner.example.org',
      password: CONSOLE_PASSWORD,
    });
    expect(right.statusCode).toBe(401);
    expect(right.body).toContain(SSO_REQUIRED_FOR_PASSWORD);
    expect(String(right.headers['set-cookie'] ?? '')).not.toContain('cp_session=');

    // The break-glass owner keeps a way in without the IdP: their password, then their passkey
    // (test/console/passkeys-http.test.ts signs them in so). Without a passkey yet: refused, saying why.
    const glassClient = new ConsoleClient(t.app, '192.0.2.61');
    const page1 = await glassClient.get('/console/sign-in?without-sso=1');
    expect(page1.body).toContain('<input type="hidden" name="without_sso" value="1">');
    const inGlass = await glassClient.post('/console/sign-in', {
      _csrf: ConsoleClient.token(page1.body),
      without_sso: '1',
      email: `owner@${DOMAIN}`,
      password: CONSOLE_PASSWORD,
    });
    expect(inGlass.statusCode).toBe(401);
    expect(inGlass.body).toContain(escapeHtml(BREAK_GLASS_NEEDS_PASSKEY));
    expect(String(inGlass.headers['set-cookie'] ?? '')).not.toContain('cp_session=');
    // Anyone else of the domain who asks for a password sign-in is refused, with the reason.
    const c2 = new ConsoleClient(t.app, '192.0.2.64');
    const p2 = await c2.get('/console/sign-in?without-sso=1');
    const refusedOwner = await c2.post('/console/sign-in', {
      _csrf: ConsoleClient.token(p2.body),
      without_sso: '1',
      email: `second-owner@${DOMAIN}`,
      password: CONSOLE_PASSWORD,
    });
    expect(refusedOwner.statusCode).toBe(401);
    expect(refusedOwner.body).toContain(SSO_REQUIRED_FOR_PASSWORD);

    const audit = (await listAuditEvents(t.db, ORG, { limit: 50 })).items.find((e) => e.action === 'sso.required');
    expect(audit?.details).toEqual({ required: true, breakGlassMemberId: ownerId });
    // The page, as the break-glass owner signed in with a passkey sees it: test/console/sso-required-sessions.test.ts.
    await setSsoRequired(t.db, ORG, { required: false }, OP, new Date());
  });
});
