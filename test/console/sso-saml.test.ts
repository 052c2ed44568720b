import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAuditEvents, operatorActor } from '../../src/domain/audit.js';
import { SSO_REFUSED } from '../../src/domain/sso/oidc.js';
import { addDomain, verifyDomain } from '../../src/domain/sso/settings.js';
import { createAdminTest, type AdminTest } from '../admin/helpers.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCliDatabase, runCliInProcess as cli } from '../helpers/cli.js';
import { ConsoleClient, joinConsole } from '../helpers/console-client.js';
import { startSamlIdp, type TestIdp } from '../helpers/saml-idp.js';

/**
 * Issue 55, item 2, wired: SAML 2.0 sign-in through the console's routes against a real IdP made
 * with samlify (test/helpers/saml-idp.ts). The owner connects it from the settings page (its
 * metadata fetched by URL through the SSRF guard); the sign-in page sends an address of a verified
 * domain to the IdP; the ACS takes the IdP's cross-site POST, bound to the browser by cp_sso, makes
 * the member just in time with the mapped role and opens a session linked to the IdP session; a
 * replayed response, one for another browser and an unsigned one are refused; the IdP's single
 * logout ends the session at its next request.
 */
const OP = operatorActor('192.0.2.200');
const ORG = 'org_saml_console';
const DOMAIN = 'saml.example.com';
const BASE = 'http://127.0.0.1:3999';
const ACS = `/console/sso/saml/${ORG}/acs`;

let t: TestApp;
let idp: TestIdp;
let owner: ConsoleClient;

const q = async <T>(text: string, params: unknown[] = []) => t.db.query<T>({ name: `t.${text.length}.${text.slice(0, 20)}`, text } as never, params);
/** How the IdP's page posts to us: from its own site. */
const fromIdp = () => ({ 'sec-fetch-site': 'cross-site', origin: idp.baseUrl });

beforeAll(async () => {
  t = await createTestApp({
    env: { PUBLIC_BASE_URL: BASE, WEBHOOK_ALLOW_PRIVATE: 'true' },
    dataset: { organizations: [{ id: ORG, name: 'SAML Co', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] },
  });
  idp = startSamlIdp();
  await idp.listen();
  owner = await joinConsole(t, ORG, `owner@${DOMAIN}`, 'owner', new Date());
  const meta = await owner.get(`/console/sso/saml/${ORG}/metadata`);
  expect(meta.statusCode).toBe(200);
  expect(meta.headers['content-type']).toBe('application/samlmetadata+xml; charset=utf-8');
  expect(meta.body).toContain(`entityID="${BASE}/console/sso/saml/${ORG}/metadata"`);
  expect(meta.body).toContain(`Location="${BASE}${ACS}"`);
  idp.trust(meta.body);
  const saved = await owner.submit('/console/sso', '/console/sso/saml', {
    metadataXml: '',
    metadataUrl: `${idp.baseUrl}/metadata`,
    emailAttribute: '',
    groupsAttribute: 'groups',
    groupRoles: 'climate-admins = admin\nclimate-viewers = viewer',
    defaultRole: '',
    sessionMaxHours: '8',
  });
  expect(saved.statusCode).toBe(200);
  expect(saved.body).toContain('The SAML connection is saved.');
  expect(saved.body).toContain(`<code id="saml-acs-url">${BASE}${ACS}</code>`);
  expect(saved.body).toContain(`Connected to the identity provider ${idp.entityId}.`);
  expect((await q<{ kind: string }>(`SELECT kind FROM sso_settings WHERE org_id = $1`, [ORG]))[0].kind).toBe('saml');
  await addDomain(t.db, ORG, DOMAIN, OP, new Date());
  await verifyDomain(t.db, ORG, DOMAIN, 'operator', OP, new Date());
}, 60_000);

afterAll(async () => {
  await idp?.close();
  await t?.close();
});

/** The sign-in page with the work address only, up to the IdP; answers the AuthnRequest's id (kept in the browser's cp_sso). */
async function leaveForIdp(c: ConsoleClient, email: string): Promise<string> {
  const posted = await c.submit('/console/sign-in', '/console/sign-in', { email, password: '' });
  expect(posted.statusCode).toBe(303);
  expect(posted.headers.location).toBe(`/console/sso/saml/${ORG}/start`);
  const start = await c.get(posted.headers.location!);
  expect(start.statusCode).toBe(200);
  expect(String(start.headers['set-cookie'])).toMatch(/^cp_sso=[\w.-]+; Path=\/console\/sso; HttpOnly; SameSite=Lax; Max-Age=600$/);
  const href = /<a href="([^"]+)" id="onward">/.exec(start.body)![1].replaceAll('&amp;', '&');
  expect(start.body).toContain(`<meta http-equiv="refresh" content="0; url=${href.replaceAll('&', '&amp;')}">`);
  expect(href.startsWith(`${idp.baseUrl}/sso?SAMLRequest=`)).toBe(true);
  const { id } = await idp.readAuthnRequest(href);
  expect(c.cookies.get('cp_sso')).toBe(id);
  return id;
}

const sessionsOf = async (email: string) =>
  (
    await q<{ n: number }>(
      `SELECT count(*)::int AS n FROM console_sessions s JOIN members m ON m.org_id = s.org_id AND m.id = s.member_id WHERE s.org_id = $1 AND m.email = $2`,
      [ORG, email],
    )
  )[0].n;

async function refused(res: { statusCode: number; body: string; headers: Record<string, unknown> }, email: string, before: number) {
  expect(res.statusCode).toBe(400);
  expect(res.body).toContain('Sign-in did not complete');
  expect(res.body).toContain(SSO_REFUSED.replaceAll("'", '&#39;'));
  expect(String(res.headers['set-cookie'] ?? '')).not.toContain('cp_session=');
  expect(await sessionsOf(email)).toBe(before);
}

describe('SAML sign-in through the console', () => {
  it('makes the member just in time with the mapped role, opens a session linked to the IdP session (ending at the IdP session end), Overview 200', async () => {
    const c = new ConsoleClient(t.app, '192.0.2.60');
    const email = `ada@${DOMAIN}`;
    const id = await leaveForIdp(c, email);
    const response = idp.response({
      inResponseTo: id,
      email,
      groups: ['climate-admins', 'staff'],
      sessionIndex: '_s-ada-1',
      sessionNotOnOrAfter: Date.now() + 2 * 3_600_000,
    });
    const back = await c.postOnly(ACS, { SAMLResponse: response }, fromIdp());
    expect(back.statusCode).toBe(200);
    expect(back.body).toContain('<meta http-equiv="refresh" content="0; url=/console/overview">');
    expect(back.headers['content-security-policy']).toBeDefined();
    expect(String(back.headers['set-cookie'])).toMatch(/cp_session=[\w-]{43}; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=604800/);
    expect(String(back.headers['set-cookie'])).toMatch(/cp_sso=; Path=\/console\/sso; HttpOnly; SameSite=Lax; Max-Age=0/);
    const overview = await c.get('/console/overview');
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain(email);

    const [m] = await q<{ id: string; role: string; sso_subject: string }>(`SELECT id, role, sso_subject FROM members WHERE org_id = $1 AND email = $2`, [
      ORG,
      email,
    ]);
    expect(m).toMatchObject({ role: 'admin', sso_subject: email });
    const [s] = await q<{ sso_protocol: string; sso_subject: string; sso_session: string; hours: number; stage: string }>(
      `SELECT sso_protocol, sso_subject, sso_session, stage, round(extract(epoch FROM ends_at - created_at) / 3600)::int AS hours FROM console_sessions WHERE org_id = $1 AND member_id = $2`,
      [ORG, m.id],
    );
    // The IdP session ends in 2 hours, before the organization's 8: the console session ends with it.
    expect(s).toEqual({ sso_protocol: 'saml', sso_subject: email, sso_session: '_s-ada-1', stage: 'active', hours: 2 });
    const events = (await listAuditEvents(t.db, ORG, { limit: 50 })).items.filter((e) => e.target?.id === m.id);
    expect(events.map((e) => [e.action, e.details])).toEqual(
      expect.arrayContaining([
        ['member.joined', { email, role: 'admin', via: 'saml' }],
        ['member.signed_in', { twoFactor: false, via: 'saml' }],
      ]),
    );

    // The same response again, with the browser's cookie put back as it was: the assertion was accepted once.
    c.cookies.set('cp_sso', id);
    await refused(await c.postOnly(ACS, { SAMLResponse: response }, fromIdp()), email, 1);
  });

  it('refuses a response for another browser (no cp_sso, or the cp_sso of another sign-in); the right browser still gets in', async () => {
    const email = `grace@${DOMAIN}`;
    const c = new ConsoleClient(t.app, '192.0.2.61');
    const id = await leaveForIdp(c, email);
    const response = idp.response({ inResponseTo: id, email, groups: ['climate-viewers'] });
    // An attacker's browser, without the cookie of this sign-in.
    await refused(await new ConsoleClient(t.app, '192.0.2.66').postOnly(ACS, { SAMLResponse: response }, fromIdp()), email, 0);
    // A browser that began its own sign-in.
    const other = new ConsoleClient(t.app, '192.0.2.67');
    await leaveForIdp(other, `mallory@${DOMAIN}`);
    await refused(await other.postOnly(ACS, { SAMLResponse: response }, fromIdp()), email, 0);
    // Refusals wrote nothing: the browser that began it is let in with the same response.
    const back = await c.postOnly(ACS, { SAMLResponse: response }, fromIdp());
    expect(back.statusCode).toBe(200);
    expect((await q<{ role: string }>(`SELECT role FROM members WHERE org_id = $1 AND email = $2`, [ORG, email]))[0].role).toBe('viewer');
  });

  it('refuses an unsigned assertion', async () => {
    const email = `ivan@${DOMAIN}`;
    const c = new ConsoleClient(t.app, '192.0.2.62');
    const id = await leaveForIdp(c, email);
    const unsigned = idp.response({ inResponseTo: id, email, groups: ['climate-admins'], signAssertion: false });
    await refused(await c.postOnly(ACS, { SAMLResponse: unsigned }, fromIdp()), email, 0);
    expect((await q<{ n: number }>(`SELECT count(*)::int AS n FROM members WHERE org_id = $1 AND email = $2`, [ORG, email]))[0].n).toBe(0);
  });

  it('ends the session when the IdP sends a single logout; the member is out at the next request; an unsigned one is refused', async () => {
    const email = `lin@${DOMAIN}`;
    const c = new ConsoleClient(t.app, '192.0.2.63');
    const id = await leaveForIdp(c, email);
    const back = await c.postOnly(
      ACS,
      { SAMLResponse: idp.response({ inResponseTo: id, email, groups: ['climate-admins'], sessionIndex: '_s-lin' }) },
      fromIdp(),
    );
    expect(back.statusCode).toBe(200);
    expect((await c.get('/console/overview')).statusCode).toBe(200);

    const slo = (u: string) => new URL(u).pathname + new URL(u).search;
    const unsigned = await new ConsoleClient(t.app, '192.0.2.63').get(slo(idp.logoutRequestUrl({ nameId: email, sessionIndex: '_s-lin', signed: false })));
    expect(unsigned.statusCode).toBe(400);
    expect(unsigned.body).toContain('The sign-out request from your identity provider was not accepted.');
    expect((await c.get('/console/overview')).statusCode).toBe(200);

    const out = await new ConsoleClient(t.app, '192.0.2.63').get(slo(idp.logoutRequestUrl({ nameId: email, sessionIndex: '_s-lin' })));
    expect(out.statusCode).toBe(302);
    expect(String(out.headers.location).startsWith(`${idp.baseUrl}/slo?SAMLResponse=`)).toBe(true);
    expect(String(out.headers.location)).toContain('&Signature=');
    const next = await c.get('/console/overview');
    expect(next.statusCode).toBe(303);
    expect(next.headers.location).toBe('/console/sign-in');
    const [m] = await q<{ id: string }>(`SELECT id FROM members WHERE org_id = $1 AND email = $2`, [ORG, email]);
    const ended = (await listAuditEvents(t.db, ORG, { limit: 50 })).items.find((e) => e.action === 'member.sessions_ended' && e.target?.id === m.id);
    expect(ended?.details).toEqual({ ended: 1, includingCurrent: true, via: 'saml_single_logout' });
  });
});

describe('operator API', () => {
  let a: AdminTest;
  let other: TestIdp;
  beforeAll(async () => {
    a = await createAdminTest({
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', PUBLIC_BASE_URL: 'https://pulse.example.com' },
      dataset: { organizations: [{ id: 'org_op_saml', name: 'Op', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] },
    });
    other = startSamlIdp();
  });
  afterAll(() => a?.close());
  const o = '/admin/v1/organizations/org_op_saml/sso';

  it('connects a SAML IdP from its pasted metadata (kind saml, the mapping kept), and refuses it neither pasted nor by URL', async () => {
    const neither = await a.call('PUT', `${o}/saml`, { groupRoles: [] });
    expect(neither.statusCode).toBe(400);
    expect(neither.json().error.message).toBe('give the IdP metadata either pasted (metadataXml) or by its URL (metadataUrl), one of the two');
    const saved = await a.call('PUT', `${o}/saml`, {
      metadataXml: other.metadataXml(),
      groupsAttribute: 'memberOf',
      groupRoles: [{ group: 'it', role: 'owner', teams: [] }],
      defaultRole: 'viewer',
      sessionMaxHours: 12,
    });
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.json()).toMatchObject({
      kind: 'saml',
      issuer: null,
      clientId: null,
      clientSecretSet: false,
      groupsClaim: 'memberOf',
      groupRoles: [{ group: 'it', role: 'owner', teams: [] }],
      defaultRole: 'viewer',
      required: false,
      sessionMaxHours: 12,
    });
    const got = await a.call('GET', o);
    expect(got.statusCode).toBe(200);
    expect(got.json().kind).toBe('saml');
  });
});

describe('climate-pulse sso saml', () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  let env: Record<string, string>;
  let file: string;
  beforeAll(async () => {
    cdb = await createCliDatabase();
    env = { ...cdb.env, WEBHOOK_ALLOW_PRIVATE: 'true', PUBLIC_BASE_URL: 'https://pulse.example.com' };
    expect((await cli(['migrate'], env)).code).toBe(0);
    expect((await cli(['orgs', 'create', '--id', 'org_cli_saml', '--name', 'CLI SAML', '--plan', 'business'], env)).code).toBe(0);
    file = join(mkdtempSync(join(tmpdir(), 'cp-saml-')), 'idp.xml');
    writeFileSync(file, startSamlIdp().metadataXml());
  }, 120_000);
  afterAll(() => cdb?.close());

  it('connects the IdP from a metadata file, maps groups, and says where our SP metadata is', async () => {
    const none = await cli(['sso', 'saml', '--org', 'org_cli_saml'], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe('climate-pulse: give the IdP metadata by --metadata-url or --metadata-file, one of the two\n');
    const r = await cli(['sso', 'saml', '--org', 'org_cli_saml', '--metadata-file', file, '--group', 'it=admin', '--default-role', 'none'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'kind: saml\nSP metadata URL (entity id): https://pulse.example.com/console/sso/saml/org_cli_saml/metadata\ngroups attribute: groups\n  it = admin\n',
    );
    expect(r.stdout).not.toContain('redirect URI');
  }, 60_000);
});
