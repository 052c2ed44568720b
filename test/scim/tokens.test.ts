import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTest, type AdminTest } from '../admin/helpers.js';
import { createCliDatabase, runCliInProcess } from '../helpers/cli.js';

/**
 * SCIM tokens made like API keys (issue 56): created (the secret once), listed (never a secret),
 * rolled (the old one until the chosen time) and revoked, by the operator API (every answer
 * checked against its OpenAPI document) and the CLI; each change audited as `operator`.
 */
const ORG = '/admin/v1/organizations/org_tok';

describe('SCIM tokens through the operator API', () => {
  let t: AdminTest;
  beforeAll(async () => {
    t = await createAdminTest();
    expect((await t.call('POST', '/admin/v1/organizations', { id: 'org_tok', name: 'Tokens', plan: 'business' })).statusCode).toBe(201);
  }, 60_000);
  afterAll(() => t?.close());

  const users = (token: string) => t.app.inject({ method: 'GET', url: '/scim/v2/Users', headers: { authorization: `Bearer ${token}` } });

  it('creates a token shown once, lists it without its secret, rolls it, revokes it', async () => {
    const created = await t.call('POST', `${ORG}/scim-tokens`, { name: 'Entra ID' });
    expect(created.statusCode).toBe(201);
    const c = created.json() as { id: string; token: string; prefix: string; name: string };
    expect(c.token).toMatch(/^cp_scim_[0-9A-Za-z]{40}$/);
    expect(c.prefix).toBe(c.token.slice(0, 14));
    expect((await users(c.token)).statusCode).toBe(200);

    const listed = await t.call('GET', `${ORG}/scim-tokens`);
    expect(listed.body).not.toContain(c.token);
    expect(listed.json()).toEqual({
      items: [
        {
          id: c.id,
          prefix: c.prefix,
          name: 'Entra ID',
          createdAt: expect.any(String),
          createdBy: 'operator',
          expiresAt: null,
          revokedAt: null,
          state: 'active',
        },
      ],
    });

    const rolled = await t.call('POST', `${ORG}/scim-tokens/${c.prefix}/roll`, { expiresIn: '1h' });
    expect(rolled.statusCode).toBe(201);
    const r = rolled.json() as { id: string; token: string; oldTokenId: string; oldExpiresAt: string; name: string };
    expect(r).toMatchObject({ oldTokenId: c.id, name: 'Entra ID' });
    expect((await users(c.token)).statusCode).toBe(200); // until its hour is up
    expect((await users(r.token)).statusCode).toBe(200);
    const states = (await t.call('GET', `${ORG}/scim-tokens`)).json() as { items: { id: string; state: string }[] };
    expect(Object.fromEntries(states.items.map((i) => [i.id, i.state]))).toEqual({ [c.id]: 'expiring', [r.id]: 'active' });

    const revoked = await t.call('DELETE', `${ORG}/scim-tokens/${c.id}`);
    expect(revoked.json()).toMatchObject({ id: c.id, state: 'revoked' });
    expect((await users(c.token)).statusCode).toBe(401); // KEY_CACHE_TTL_MS=0 here
    expect((await t.call('DELETE', `${ORG}/scim-tokens/stk_nope`)).statusCode).toBe(404);

    const audit = (await t.call('GET', `${ORG}/audit-events?limit=10`)).json() as { items: { action: string; actor: { kind: string } }[] };
    expect(audit.items.map((e) => e.action).slice(0, 3)).toEqual(['scim_token.revoked', 'scim_token.rolled', 'scim_token.created']);
    expect(JSON.stringify(audit)).not.toContain(c.token);
  });

  it('sets how teams are found, groups by default', async () => {
    expect((await t.call('GET', `${ORG}/scim-settings`)).json()).toEqual({ teamFrom: 'groups' });
    expect((await t.call('PUT', `${ORG}/scim-settings`, { teamFrom: 'department' })).json()).toEqual({ teamFrom: 'department' });
    expect((await t.call('GET', `${ORG}/scim-settings`)).json()).toEqual({ teamFrom: 'department' });
    expect((await t.call('PUT', `${ORG}/scim-settings`, { teamFrom: 'title' })).statusCode).toBe(400);
  });
});

describe('climate-pulse scim', () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  beforeAll(async () => {
    cdb = await createCliDatabase();
    expect((await runCliInProcess(['migrate'], cdb.env)).code).toBe(0);
    expect((await runCliInProcess(['orgs', 'create', '--id', 'org_cli_s', '--name', 'CLI SCIM', '--plan', 'business'], cdb.env)).code).toBe(0);
  }, 120_000);
  afterAll(() => cdb?.close());

  it('creates (printing the secret once), lists, rolls, revokes, and sets teams from department', async () => {
    const created = await runCliInProcess(['scim', 'create', '--org', 'org_cli_s', '--name', 'Okta'], cdb.env);
    expect(created.code, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^cp_scim_[0-9A-Za-z]{40}$/);
    expect(created.stderr).toMatch(/^created SCIM token cp_scim_[0-9A-Za-z]{6}… \(stk_[0-9A-Za-z]{16}\) for org_cli_s\. It is shown only now/);
    const list = await runCliInProcess(['scim', 'list', '--org', 'org_cli_s', '--json'], cdb.env);
    const items = JSON.parse(list.stdout) as { id: string; prefix: string; state: string }[];
    expect(items.map((i) => [i.prefix, i.state])).toEqual([[token.slice(0, 14), 'active']]);
    expect(list.stdout).not.toContain(token);
    const rolled = await runCliInProcess(['scim', 'roll', '--org', 'org_cli_s', '--old-expires', 'now', token.slice(0, 14)], cdb.env);
    expect(rolled.code, rolled.stderr).toBe(0);
    expect(rolled.stdout.trim()).toMatch(/^cp_scim_/);
    const revoked = await runCliInProcess(['scim', 'revoke', '--org', 'org_cli_s', items[0].id], cdb.env);
    expect(revoked.stdout).toBe(`revoked ${token.slice(0, 14)} (${items[0].id}) of org_cli_s\n`);
    const teams = await runCliInProcess(['scim', 'teams', '--org', 'org_cli_s', '--from', 'department'], cdb.env);
    expect(teams.stdout).toBe("teams of org_cli_s come from SCIM's department\n");
  });
});
