import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCliDatabase, runCliInProcess as cli } from '../helpers/cli.js';

/**
 * `climate-pulse orgs list` and `members invite|list|remove` (CONTRACT.md section 10): the operator
 * API's other face, on the engine of this CI pass, without a running server. The CLI runs in this
 * process (runCliInProcess): what is tested is what it prints and changes.
 */
describe('climate-pulse members and orgs list', () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  beforeAll(async () => {
    cdb = await createCliDatabase();
    expect((await cli(['migrate'], cdb.env)).code).toBe(0);
    expect((await cli(['orgs', 'create', '--id', 'org_cli_m', '--name', 'CLI Members', '--plan', 'business'], cdb.env)).code).toBe(0);
  }, 120_000);
  afterAll(() => cdb?.close());

  it('invites (printing the link once), lists, refuses a bad role, and lists organizations', async () => {
    const inv = await cli(['members', 'invite', '--org', 'org_cli_m', '--email', 'lead@cli.example.com', '--role', 'owner'], cdb.env);
    expect(inv.code, inv.stderr).toBe(0);
    expect(inv.stdout).toMatch(/^http:\/\/127\.0\.0\.1:3000\/console\/invitations\/[A-Za-z0-9_-]{32}\n$/);
    expect(inv.stderr).toMatch(
      /^invited lead@cli\.example\.com as owner of org_cli_m; the link works once, until \d{4}-\d\d-\d\dT[\d:.]+Z, and is shown only now\.\n$/,
    );
    const bad = await cli(['members', 'invite', '--org', 'org_cli_m', '--email', 'x@cli.example.com', '--role', 'root'], cdb.env);
    expect(bad.code).toBe(2); // a usage error (issue 54: 0 done, 1 refused with a reason, 2 usage)
    expect(bad.stderr).toContain("argument 'root' is invalid");
    const list = await cli(['members', 'list', '--org', 'org_cli_m', '--json'], cdb.env);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([]); // nobody has accepted yet
    const orgs = await cli(['orgs', 'list'], cdb.env);
    expect(orgs.code, orgs.stderr).toBe(0);
    expect(orgs.stdout.split('\n')[0]).toMatch(/^ID +NAME +PLAN +CREATED +DELETED$/);
    expect(orgs.stdout).toMatch(/\norg_cli_m +CLI Members +business +\d{4}-\d\d-\d\dT[\d:.]+Z +-\n/);
    const gone = await cli(['members', 'remove', '--org', 'org_cli_m', 'mem_nobody'], cdb.env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe('climate-pulse: No member "mem_nobody" in this organization.\n');
    const audit = await cli(['audit', '--org', 'org_cli_m', '--json'], cdb.env);
    expect(audit.code, audit.stderr).toBe(0);
    expect(
      audit.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).action),
    ).toEqual(['member.invited', 'organization.created']);
  }, 120_000);

  it('lists pending invitations (never a link) and revokes one: its link then opens nothing (issue 41)', async () => {
    const made = await cli(['members', 'invite', '--org', 'org_cli_m', '--email', 'typo@cli.example.com', '--role', 'owner'], cdb.env);
    expect(made.code, made.stderr).toBe(0);
    const token = made.stdout.trim().split('/').at(-1)!;
    const list = await cli(['members', 'invitations', 'list', '--org', 'org_cli_m', '--json'], cdb.env);
    expect(list.code, list.stderr).toBe(0);
    const items = JSON.parse(list.stdout) as { id: string; email: string; role: string; invitedBy: string | null }[];
    const typo = items.find((i) => i.email === 'typo@cli.example.com')!;
    expect(typo).toMatchObject({ role: 'owner', invitedBy: null });
    expect(typo.id).toMatch(/^inv_/);
    expect(list.stdout).not.toContain(token);
    const table = await cli(['members', 'invitations', 'list', '--org', 'org_cli_m'], cdb.env);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID +EMAIL +ROLE +INVITED BY +CREATED +EXPIRES$/);
    const revoked = await cli(['members', 'invitations', 'revoke', '--org', 'org_cli_m', typo.id], cdb.env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(`revoked the invitation of typo@cli.example.com (owner, ${typo.id}) to org_cli_m\n`);
    const again = await cli(['members', 'invitations', 'revoke', '--org', 'org_cli_m', typo.id], cdb.env);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`climate-pulse: No pending invitation "${typo.id}" in this organization (accepted ones are members now).\n`);
    const after = JSON.parse((await cli(['members', 'invitations', 'list', '--org', 'org_cli_m', '--json'], cdb.env)).stdout) as { id: string }[];
    expect(after.map((i) => i.id)).not.toContain(typo.id);
    const audit = await cli(['audit', '--org', 'org_cli_m', '--json'], cdb.env);
    expect(JSON.parse(audit.stdout.trim().split('\n')[0])).toMatchObject({ action: 'member.invitation_revoked', target: { kind: 'invitation', id: typo.id } });
  }, 120_000);
});
