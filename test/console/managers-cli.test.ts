import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCliDatabase, runCliInProcess as cli } from '../helpers/cli.js';

/**
 * `climate-pulse members invite --role manager --teams ...` and `members set-role` (issue 53,
 * item 4): the operator's face of managers, through the operator API's own operations.
 */
describe('climate-pulse members: managers and their teams', () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  const dir = mkdtempSync(join(tmpdir(), 'cp-mgr-cli-'));
  beforeAll(async () => {
    cdb = await createCliDatabase();
    expect((await cli(['migrate'], cdb.env)).code).toBe(0);
    const file = join(dir, 'org.json');
    writeFileSync(
      file,
      JSON.stringify({
        organizations: [
          {
            id: 'org_cli_mgr',
            name: 'CLI Managers',
            plan: 'business',
            createdAt: '2026-01-01T00:00:00.000Z',
            teams: [
              { id: 'team_a', name: 'Alpha', createdAt: '2026-01-01T00:00:00.000Z' },
              { id: 'team_b', name: 'Bravo', createdAt: '2026-01-01T00:00:00.000Z' },
            ],
          },
        ],
      }),
    );
    const loaded = await cli(['load', file], cdb.env);
    expect(loaded.code, loaded.stderr).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await cdb?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('invites a manager with teams, refuses one without, and lists the invitation with its teams', async () => {
    const none = await cli(['members', 'invite', '--org', 'org_cli_mgr', '--email', 'none@cli.example.com', '--role', 'manager'], cdb.env);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe('climate-pulse: A manager needs at least one team: the teams whose figures they read.\n');
    const made = await cli(
      ['members', 'invite', '--org', 'org_cli_mgr', '--email', 'lead@cli.example.com', '--role', 'manager', '--teams', 'team_a, team_b', '--json'],
      cdb.env,
    );
    expect(made.code, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ email: 'lead@cli.example.com', role: 'manager', teams: ['team_a', 'team_b'], orgId: 'org_cli_mgr' });
    const table = await cli(['members', 'invitations', 'list', '--org', 'org_cli_mgr'], cdb.env);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/\ninv_\S+ +lead@cli\.example\.com +manager of team_a,team_b +operator /);
  }, 60_000);

  it('set-role refuses an unknown member (1, the reason) and an unknown role (2, usage)', async () => {
    const gone = await cli(['members', 'set-role', '--org', 'org_cli_mgr', 'mem_nobody', '--role', 'viewer'], cdb.env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe('climate-pulse: No member "mem_nobody" in this organization.\n');
    const usage = await cli(['members', 'set-role', '--org', 'org_cli_mgr', 'mem_nobody', '--role', 'root'], cdb.env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("argument 'root' is invalid");
  }, 60_000);
});
