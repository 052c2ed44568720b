import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTest, type AdminTest } from '../admin/helpers.js';
import { createCliDatabase, runCliInProcess as cli } from '../helpers/cli.js';
import { startIdp, type TestIdp } from '../helpers/oidc-idp.js';

/**
 * Issue 55's operator faces: the operator API (each answer checked against its OpenAPI document)
 * and the CLI set up an organization's single sign-on through the same domain operations as the
 * console, audited as the operator's.
 */
let idp: TestIdp;
beforeAll(async () => {
  idp = await startIdp({ clients: [{ clientId: 'cp-op', clientSecret: 'op-secret-0123456789', redirectUri: 'http://127.0.0.1:9/cb' }] });
});
afterAll(() => idp?.close());

describe('operator API', () => {
  let t: AdminTest;
  beforeAll(async () => {
    t = await createAdminTest({
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', PUBLIC_BASE_URL: 'https://pulse.example.com' },
      dataset: { organizations: [{ id: 'org_op', name: 'Op', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] },
    });
  });
  afterAll(() => t?.close());
  const o = '/admin/v1/organizations/org_op/sso';

  it('sets up OIDC (secret never answered), domains (verified on the operator word), the requirement; refuses what breaks a rule', async () => {
    expect((await t.call('GET', o)).statusCode).toBe(404);
    const noSecret = await t.call('PUT', `${o}/oidc`, { issuer: idp.issuer, clientId: 'cp-op' });
    expect(noSecret.statusCode).toBe(400);
    expect(noSecret.json().error.message).toBe('The client secret is required (the IdP shows it when the application is registered).');
    const unreachable = await t.call('PUT', `${o}/oidc`, { issuer: 'http://127.0.0.1:9/nothing', clientId: 'cp-op', clientSecret: 'x' });
    expect(unreachable.statusCode).toBe(400);
    expect(unreachable.json().error.message).toMatch(/^The identity provider at http:\/\/127\.0\.0\.1:9\/nothing did not answer OpenID Connect discovery: /);
    const saved = await t.call('PUT', `${o}/oidc`, {
      issuer: idp.issuer,
      clientId: 'cp-op',
      clientSecret: 'op-secret-0123456789',
      groupRoles: [{ group: 'it', role: 'owner', teams: [] }],
      defaultRole: 'viewer',
    });
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.json()).toMatchObject({
      kind: 'oidc',
      issuer: idp.issuer,
      clientId: 'cp-op',
      clientSecretSet: true,
      groupsClaim: 'groups',
      groupRoles: [{ group: 'it', role: 'owner', teams: [] }],
      defaultRole: 'viewer',
      required: false,
      sessionMaxHours: 168,
      redirectUri: 'https://pulse.example.com/console/sso/org_op/oidc/callback',
      backchannelLogoutUri: 'https://pulse.example.com/console/sso/org_op/oidc/backchannel-logout',
    });
    expect(saved.body).not.toContain('op-secret');
    const sealed = await t.db.query<{ s: string }>(
      { name: 't.sealed', text: `SELECT oidc_client_secret_sealed AS s FROM sso_settings WHERE org_id = 'org_op'` } as never,
      [],
    );
    expect(sealed[0].s).toMatch(/^sealed:v1:[\w-]{40,}$/);

    const early = await t.call('PUT', `${o}/requirement`, { required: true });
    expect(early.statusCode).toBe(400);
    expect(early.json().error.message).toMatch(/^Verify at least one domain/);
    const added = await t.call('POST', `${o}/domains`, { domain: 'Op.Example.COM.' });
    expect(added.statusCode).toBe(201);
    expect(added.json()).toMatchObject({ domain: 'op.example.com', txtRecordName: '_climate-pulse.op.example.com', verifiedAt: null, verifiedBy: null });
    expect(added.json().txtRecordValue).toMatch(/^climate-pulse-verification=[\w-]{24}$/);
    expect((await t.call('POST', `${o}/domains`, { domain: 'not a domain' })).statusCode).toBe(400);
    const verified = await t.call('POST', `${o}/domains/op.example.com/verify`, { method: 'operator' });
    expect(verified.statusCode).toBe(200);
    expect(verified.json().verifiedBy).toBe('operator');
    const required = await t.call('PUT', `${o}/requirement`, { required: true, breakGlassMemberId: 'mem_nobody' });
    expect(required.statusCode).toBe(400);
    expect(required.json().error.message).toBe('The break-glass member must be an owner of this organization.');
    const on = await t.call('PUT', `${o}/requirement`, { required: true });
    expect(on.json()).toMatchObject({ required: true, breakGlassMemberId: null });
    expect((await t.call('GET', `${o}/domains`)).json().items).toHaveLength(1);
    expect((await t.call('DELETE', `${o}/domains/op.example.com`)).json()).toEqual({ removed: true });
    expect((await t.call('DELETE', o)).json()).toEqual({ removed: true });
    expect((await t.call('DELETE', o)).statusCode).toBe(404);
    const actions = (await t.call('GET', '/admin/v1/organizations/org_op/audit-events?limit=20'))
      .json()
      .items.map((e: { action: string; actor: { kind: string } }) => [e.action, e.actor.kind]);
    expect(actions).toEqual([
      ['sso.removed', 'operator'],
      ['sso_domain.removed', 'operator'],
      ['sso.required', 'operator'],
      ['sso_domain.verified', 'operator'],
      ['sso_domain.added', 'operator'],
      ['sso.configured', 'operator'],
    ]);
  });
});

describe('climate-pulse sso', () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  let env: Record<string, string>;
  beforeAll(async () => {
    cdb = await createCliDatabase();
    env = { ...cdb.env, WEBHOOK_ALLOW_PRIVATE: 'true' };
    expect((await cli(['migrate'], env)).code).toBe(0);
    expect((await cli(['orgs', 'create', '--id', 'org_cli_sso', '--name', 'CLI SSO', '--plan', 'business'], env)).code).toBe(0);
  }, 120_000);
  afterAll(() => cdb?.close());

  it('connects the IdP, maps groups, adds and verifies a domain, shows the URIs to register', async () => {
    const bad = await cli(['sso', 'oidc', '--org', 'org_cli_sso', '--issuer', idp.issuer, '--client-id', 'cp-op', '--group', 'no-role-here'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('climate-pulse: --group "no-role-here": the form is group=role, or group=manager:team_a,team_b\n');
    const first = await cli(['sso', 'oidc', '--org', 'org_cli_sso', '--issuer', idp.issuer, '--client-id', 'cp-op'], env);
    expect(first.code).toBe(1);
    expect(first.stderr).toBe('climate-pulse: The client secret is required (the IdP shows it when the application is registered).\n');
    const add = await cli(['sso', 'domains', 'add', '--org', 'org_cli_sso', 'cli.example.org', '--json'], env);
    expect(add.code, add.stderr).toBe(0);
    expect(JSON.parse(add.stdout).txtRecordName).toBe('_climate-pulse.cli.example.org');
    const v = await cli(['sso', 'domains', 'verify', '--org', 'org_cli_sso', 'cli.example.org', '--by', 'operator'], env);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toBe('cli.example.org is verified (operator)\n');
    const list = await cli(['sso', 'domains', 'list', '--org', 'org_cli_sso'], env);
    expect(list.stdout.split('\n')[0]).toMatch(/^DOMAIN +TXT NAME +TXT VALUE +VERIFIED$/);
    const show = await cli(['sso', 'show', '--org', 'org_cli_sso'], env);
    expect(show.code).toBe(1);
    expect(show.stderr).toBe('climate-pulse: This organization has no single sign-on set up.\n');
  }, 60_000);
});
